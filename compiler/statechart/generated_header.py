"""Which files `build` wrote, and from which spec: the header at the start of each file.

`build` deletes an output whose spec is gone (an orphan), so a file counts as generated only
when it STARTS with the header, in its type's comment syntax, as the generators write it:
a hand-written `generated/README.md` that quotes the header in its text is never taken for one.

The header names the spec's path as each syntax escapes it (`outputs.header_lines`): a Python
comment writes `specs/caf\\xe9.yaml`, an HTML comment shows invisible characters as `<U+202E>`
and collapses runs of spaces, JSON keeps the text. Reading the name back is ambiguous (a file
can really be called `caf\\xe9.yaml`), so a spec is matched the other way round: its path is
escaped exactly as the generator escaped it, and compared with the header's text.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from statechart.outputs import HEADER_MARK

_HEAD_BYTES = 4096
# The first header line of a per-spec output; whole-set outputs (the index) name no .yaml file.
_LINE = re.compile(r"Generated from (?P<path>.+?\.ya?ml) by statechart-compiler(?: \S+?)?\. "
                   + HEADER_MARK + r"\.")
_JSON_STRING = r'"(?:[^"\\\n]|\\.)*"'
# Where each output type carries the header (the text of its first line, as group 1).
_START = {
    ".py": re.compile(r"# (.*)\n"),
    ".md": re.compile(r"<!-- (.*) -->\n"),
    # an SVG's XML declaration must come first; the header comment follows it
    ".svg": re.compile(r"(?:<\?xml[^\n]*\?>\n)?<!-- (.*) -->\n"),
    # JSON has no comments: the schema's `$comment`, right after `$schema` and `$id`
    ".json": re.compile(r'\{\s*"\$schema":\s*' + _JSON_STRING + r',\s*"\$id":\s*' + _JSON_STRING
                        + r',\s*"\$comment":\s*(' + _JSON_STRING + ")"),
}


def _python_comment(text: str) -> str:
    from statechart.codegen._jinja import comment  # Jinja2: only when a .py header is read
    return str(comment(text))


def _html_comment(text: str) -> str:
    from statechart.render.labels import comment_text  # Graphviz: only for .md and .svg
    return comment_text(text, "--")


# How each type escapes a header line (the generators' own functions), and, for the glob that
# finds candidate specs, what in the escaped text may stand for other characters.
_ESCAPE: dict[str, Callable[[str], str]] = {
    ".py": _python_comment, ".md": _html_comment, ".svg": _html_comment, ".json": str}
_MAYBE_ESCAPED = {
    ".py": re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[tnr])"),
    ".md": re.compile(r"<U\+[0-9A-F]{4,6}>| +"),  # `--` is written `- -`: the space covers it
    ".svg": re.compile(r"<U\+[0-9A-F]{4,6}>| +"),
    ".json": re.compile(r"(?!)"),
}


@dataclass(frozen=True)
class Header:
    """The header of a generated file: its type and its first line, as the file has them."""

    suffix: str
    line: str
    path: str  # the spec's path, as escaped in `line`

    def names(self, spec_path: str) -> bool:
        """Whether the generator wrote this header for the spec at `spec_path` (as
        `outputs.spec_display_path` gives it)."""
        escaped = _ESCAPE[self.suffix](f"Generated from {spec_path} by statechart-compiler")
        return self.line.startswith(escaped)

    def spec_exists(self, root: Path) -> bool:
        """Whether a file under `root` is the spec this header names."""
        parts = _MAYBE_ESCAPED[self.suffix].split(self.path)
        pattern = "*".join(glob.escape(part) for part in parts)
        if not pattern or pattern.startswith("/") or ".." in Path(pattern).parts:
            return (root / self.path).exists()
        return any(self.names(found.relative_to(root).as_posix())
                   for found in root.glob(pattern))


def read_header(path: Path) -> Header | None:
    """The header `path` starts with, or None: not an output type we write, no header at its
    start, or a header that names no spec file (the index)."""
    start = _START.get(path.suffix)
    if start is None:
        return None
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    found = start.match(head)
    if found is None:
        return None
    line = found.group(1)
    if path.suffix == ".json":
        try:
            line = json.loads(line)
        except ValueError:
            return None
    named = _LINE.match(line)
    return Header(path.suffix, line, named.group("path")) if named else None


# The first line of a whole-set output (the docs index, the code folder's `__init__.py`).
WHOLE_SET_LINE = "Generated from the specs by statechart-compiler. " + HEADER_MARK + "."


def is_whole_set(path: Path) -> bool:
    """Whether `path` starts with the header of a whole-set output."""
    start = _START.get(path.suffix)
    if start is None or path.suffix == ".json":
        return False
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    found = start.match(head)
    return found is not None and found.group(1) == WHOLE_SET_LINE


# Folders never searched for outputs: tools' caches, virtual environments, packages.
_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})


def project_files(root: Path) -> Iterable[Path]:
    """Every file under `root` of a type `build` writes, in the project itself: hidden
    folders, caches, virtual environments and installed packages are left out, and so is a
    folder with a project configuration of its own (another project, whose outputs name its
    specs relative to its own root)."""
    from statechart.config import PYPROJECT, STATECHART_TOML, _has_section

    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d for d in dirs
            if not d.startswith(".") and d not in _SKIPPED
            and not (here / d / "pyvenv.cfg").exists()
            and not (here / d / STATECHART_TOML).is_file()
            and not _has_section(here / d / PYPROJECT))
        for name in sorted(files):
            path = here / name
            if path.suffix in _START and not path.is_symlink():
                yield path


def generated_files(folders: Iterable[Path]) -> Iterable[tuple[Path, Header]]:
    """The files under `folders` that start with a header naming a spec."""
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not path.is_file() or "__pycache__" in path.parts:
                continue
            header = read_header(path)
            if header is not None:
                yield path, header
