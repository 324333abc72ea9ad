"""What `build` writes, as a plain registry, and the header every generated file carries.

A generator takes the checked model and returns {path relative to the repo root: bytes}.
Per-spec generators run once per spec; whole-set generators (an index page) once per build,
with each spec's check result (its model and its findings), so they never check a spec again.
Generators are pure: same model and project configuration (`project()`: where each kind of
output goes, which kinds are built), same bytes, on every run and machine. The one exception is
a file that needs an outside program with limits of its own (the diagram's layout): when that
program fails, the generator raises `OutputUnavailable` with the files it did make.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from statechart import __version__
from statechart.config import Config
from statechart.model import Spec
from statechart_runtime.errors import StatechartError

if TYPE_CHECKING:  # the linter imports the rules; outputs stays light for `check`
    from statechart.linter import FileResult

PerSpec = Callable[[Spec], dict[str, bytes]]
AllSpecs = Callable[[list["FileResult"]], dict[str, bytes]]

# "module:function"; imported on first use so that `check` never pays for Jinja2 or codegen.
PER_SPEC: dict[str, str] = {
    "python": "statechart.codegen.python_module:outputs",
    "record-schema": "statechart.codegen.record_schema:outputs",
    "docs": "statechart.render.docs:outputs",
}
ALL_SPECS: dict[str, str] = {
    "docs-index": "statechart.render.docs:index_outputs",
    "python-package": "statechart.codegen.python_module:package_outputs",
}
# Which kinds of output (the configuration's `build`) each generator makes: one is run when
# any of its kinds is built (the docs generator makes the page and the picture, and leaves
# out what is not built).
KINDS: dict[str, frozenset[str]] = {
    "python": frozenset({"code"}),
    "record-schema": frozenset({"schema"}),
    "docs": frozenset({"docs", "diagrams"}),
    "docs-index": frozenset({"docs"}),
    "python-package": frozenset({"code"}),
}

_PROJECT: ContextVar[Config | None] = ContextVar("project", default=None)


def project() -> Config:
    """The project the generators write for: the one `using` set, else the defaults rooted at
    the current directory."""
    return _PROJECT.get() or Config(Path.cwd().resolve())


@contextmanager
def using(config: Config) -> Iterator[Config]:
    """`config` as the project of the block (how `build` tells every generator where its
    files go without a parameter on each)."""
    token = _PROJECT.set(config)
    try:
        yield config
    finally:
        _PROJECT.reset(token)


def folder(kind: str) -> str:
    """Where outputs of `kind` (`code`, `schema`, `docs`, `diagrams`) go, relative to the
    project root."""
    return project().folders[kind]

HEADER_MARK = "DO NOT EDIT"


class OutputUnavailable(StatechartError, RuntimeError):
    """A file a generator could not make this time, for a reason outside the spec: the
    diagram's layout timed out, ran out of memory, or its program is missing. A
    `StatechartError` (`statechart_runtime.errors`) like every error the project raises on
    purpose, and a `RuntimeError`, like the `LayoutError` it usually wraps.

    `produced` holds the generator's files that were made. `build` writes those and every other
    output, leaves `path` as it was, and fails (exit 1) naming it; `build --check` fails too,
    since the file cannot be compared. The page that links to the picture does not change: its
    text must not depend on the machine the build ran on.
    """

    def __init__(self, path: str, reason: str, produced: dict[str, bytes]) -> None:
        super().__init__(f"{path} could not be made: {reason}")
        self.path = path
        self.produced = produced


def load(ref: str) -> Callable[..., dict[str, bytes]]:
    module, _, func = ref.partition(":")
    return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]


def spec_display_path(spec: Spec) -> str:
    """The spec's path as written in headers and linked from its page: relative to the
    project root (`project()`), POSIX; with `..` for a spec outside the root, so that the
    link from the page still reaches it."""
    return display_path(spec.path)


def display_path(file: str) -> str:
    """A spec file's path (a spec's, or a base's it extends) as generated files name it:
    relative to the project root, POSIX, so the same wherever the build runs."""
    root = project().root
    if not Path(file).resolve().is_relative_to(root.resolve()):
        shipped = package_ref(file)
        if shipped is not None:  # a base an installed package ships: the same everywhere
            return shipped
    try:
        path = os.path.relpath(Path(file).resolve(), root.resolve())
    except ValueError:  # another drive (Windows): no relative path exists
        path = Path(file).name
    return path if os.sep == "/" else path.replace(os.sep, "/")


def package_ref(file: str) -> str | None:
    """`pkg:PACKAGE/PATH` for a base spec an installed Python package ships (as `extends:`
    named it), else None."""
    from statechart.overlay.chain import shipped_ref

    return shipped_ref(file)


def header_lines(spec: Spec) -> list[str]:
    """The header's text, without comment markers (each format adds its own)."""
    return [
        f"Generated from {spec_display_path(spec)} by statechart-compiler {__version__}. "
        f"{HEADER_MARK}.",
        f"Source sha256: {spec.source_sha256}",
        "Regenerate with: statechart build",
    ]
