"""Lay DOT out as SVG or PNG with an external `dot`-compatible program.

Default engine: `graphviz-pure`, the self-contained port of Graphviz's `dot` that the
`graphviz-pure` wheel installs next to our own entry point, so SVG works right after
`pip install` with no system Graphviz. `engine="dot"` runs a system Graphviz instead.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

from statechart.render.bounds import DEFAULT_TIMEOUT
from statechart_runtime.errors import StatechartError

ENGINES = {"graphviz-pure": "graphviz-pure", "dot": "dot"}
INSTALL_HINT = {
    "graphviz-pure": "install it with `pip install graphviz-pure` "
                     "(or use a system Graphviz with --engine dot)",
    "dot": "install Graphviz (https://graphviz.org/download/), "
           "or leave out --engine to use graphviz-pure",
}


class LayoutError(StatechartError, RuntimeError):
    """A one-line reason the layout failed (the CLI prints it).

    A `StatechartError` (`statechart_runtime.errors`, the base of every error the project
    raises on purpose) and, as before, a `RuntimeError`: the program, not the spec, failed.
    """


def find_engine(engine: str = "graphviz-pure") -> str:
    """The program's path. A venv's scripts folder is searched too, because a tool run as
    `.venv/bin/statechart` without activating the venv has it off PATH."""
    program = ENGINES[engine]
    folders = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))]
    found = shutil.which(program)
    if found is None:
        for folder in folders:
            found = shutil.which(program, path=str(folder))
            if found:
                break
    if found is None:
        raise LayoutError(f"cannot make SVG/PNG: `{program}` not found; {INSTALL_HINT[engine]}")
    return found


def layout(dot: str, fmt: str, engine: str = "graphviz-pure",
           timeout: float = DEFAULT_TIMEOUT, max_memory: int | None = None) -> bytes:
    """`fmt` is `svg` or `png`; returns the program's output bytes.

    `max_memory` (bytes, POSIX only) caps the program's address space: in the render
    benchmark (docs/performance.md), a densely connected spec of 1,111 states held 3.7 GB
    before the timeout stopped it, and one of 5,556 states failed under a 6 GiB cap."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"layout format must be svg or png, not {fmt!r}")
    program = find_engine(engine)
    try:
        done = subprocess.run([program, f"-T{fmt}"], input=dot.encode("utf-8"),
                              capture_output=True, timeout=timeout, check=False,
                              preexec_fn=_memory_cap(max_memory))
    except subprocess.TimeoutExpired:
        raise LayoutError(f"{engine} took longer than {timeout:g}s to lay out the diagram; "
                          "render a smaller spec or use --format dot/mermaid") from None
    except OSError as exc:
        cap = f" (under the {max_memory // 2**20:,} MiB memory cap)" \
            if max_memory is not None and exc.errno == errno.ENOMEM else ""
        raise LayoutError(f"cannot run {program}: {exc.strerror or exc}{cap}") from None
    if done.returncode != 0 or not done.stdout:
        # Warnings (e.g. font widths) come before the error; skip them, and a Rust panic's
        # backtrace notes after it.
        lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines()
                 if line.strip() and not line.startswith(("Warning:", "note:", "stack backtrace"))]
        # A crash prints a backtrace after its message: prefer the message.
        key = next((line for line in lines if line.startswith(("Error", "memory allocation"))
                    or "panicked" in line), None)
        reason = key or (lines[-1] if lines else _status(done.returncode))
        if "memory allocation" in reason or (max_memory is not None and done.returncode < 0):
            # Under a small cap the program can die before it says anything (SIGSEGV).
            cap = f"the {max_memory // 2**20:,} MiB memory cap" if max_memory else "memory"
            reason += (f" (out of memory, or over {cap}: the diagram is too big to lay out; "
                       "try --format dot)")
        raise LayoutError(f"{engine} failed: {reason}")
    return done.stdout


def _status(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _memory_cap(limit: int | None) -> Callable[[], None] | None:
    if limit is None or os.name != "posix":
        return None

    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return cap


def with_svg_header(svg: bytes, header: str) -> bytes:
    """Put our header comment right after the XML declaration (a comment may not precede it)."""
    text = svg.decode("utf-8")
    if text.startswith("<?xml"):
        end = text.index("?>") + 2
        return (text[:end] + "\n" + header.rstrip("\n") + text[end:]).encode("utf-8")
    return (header + text).encode("utf-8")
