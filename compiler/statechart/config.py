"""Project configuration: `[tool.statechart]` in `pyproject.toml`, or the same keys at the top
level of a `statechart.toml` (docs/configuration.md lists every key).

Found as ruff and mypy find theirs: the nearest folder, walking up from the current directory,
with a `statechart.toml` or a `pyproject.toml` that has a `[tool.statechart]` table (a
`pyproject.toml` without one is passed over); when both are in one folder, `statechart.toml`
wins (as ruff's `ruff.toml` beats its `pyproject.toml`). When none is found above the current
directory, the folders above the first PATH of the command line are searched the same way, so
that `statechart build ../app/specs/NAME.yaml` builds into `../app` when `../app` has a
configuration. `--config FILE` names one and skips the search.

The folder of the configuration file is the project root: the default spec paths and the
output folders are relative to it, wherever the command runs. With no configuration, the root
is the current directory and every key has its default (the layout this repository uses).

Only the standard library (`tomllib`): every command reads the configuration before it imports
the compiler. A bad file is a `ConfigError` naming `FILE:LINE` (found by scanning the text:
`tomllib` keeps no positions) and, for a misspelled key or value, the closest valid one; the
CLI prints it and exits 2.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from statechart_runtime.errors import StatechartError

PYPROJECT = "pyproject.toml"
STATECHART_TOML = "statechart.toml"

OUTPUT_KINDS = ("code", "schema", "docs", "diagrams")
DEFAULT_FOLDERS = {"code": "generated", "schema": "generated", "docs": "docs/specs",
                   "diagrams": "docs/specs"}
ENGINES = ("graphviz-pure", "dot")
SEVERITIES = ("ignore", "warning", "error")

Setting = Literal["ignore", "warning", "error"]


class ConfigError(StatechartError, ValueError):
    """A configuration file that cannot be read or has a bad key or value; the message names
    the file and line. A usage error: the CLI prints it and exits 2."""


@dataclass(frozen=True)
class Config:
    """A project's settings; `Config(root)` is the defaults."""

    root: Path  # absolute
    file: Path | None = None  # the file read, None when none was found
    specs: tuple[str, ...] = ("specs",)  # relative to the root
    folders: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_FOLDERS))
    build: frozenset[str] = frozenset(OUTPUT_KINDS)
    engine: str | None = None  # None: the default engine (graphviz-pure)
    layout_timeout: float | None = None  # None: the environment's or the default
    layout_max_transitions: int | None = None
    severity: dict[str, Setting] = field(default_factory=dict)  # rule id -> setting
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Where `build` and `schema --write` keep the spec format's JSON Schema for editors
    # (relative to the root); None: nowhere.
    editor_schema: str | None = None

    def spec_paths(self, cwd: Path | None = None) -> list[str]:
        """The configured spec paths as the command line would name them from `cwd`."""
        here = (cwd or Path.cwd()).resolve()
        return [os.path.relpath(self.root / p, here) for p in self.specs]

    def ignored(self, path: str | os.PathLike[str]) -> set[str]:
        """The rule ids `per-file-ignores` turns off for the spec at `path`: a pattern with a
        `/` is matched against the path relative to the root (`*` also matches `/`), one
        without against the file's name."""
        if not self.per_file_ignores:
            return set()
        full = Path(os.path.abspath(path))
        try:
            rel = full.relative_to(self.root).as_posix()
        except ValueError:
            rel = full.as_posix()
        out: set[str] = set()
        for pattern, ids in self.per_file_ignores.items():
            target = rel if "/" in pattern else full.name
            if _glob(pattern).fullmatch(target):
                out.update(ids)
        return out


def _glob(pattern: str) -> re.Pattern[str]:
    import fnmatch

    return re.compile(fnmatch.translate(pattern))


def find(start: Path) -> Path | None:
    """The configuration file that applies in `start`: the nearest `statechart.toml`, or
    `pyproject.toml` with a `[tool.statechart]` table, in `start` or a folder above it."""
    for folder in (start, *start.parents):
        own = folder / STATECHART_TOML
        if own.is_file():
            return own
        project = folder / PYPROJECT
        if project.is_file() and _has_section(project):
            return project
    return None


_SECTION = re.compile(r"^\s*\[\s*tool\s*\.\s*statechart\s*[\].]", re.MULTILINE)


def _has_section(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    # Cheap first: most pyproject.toml files never mention us. Then parse, to be sure.
    if "statechart" not in text:
        return False
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return bool(_SECTION.search(text))  # ours, broken: load() reports where
    return isinstance(tool, dict) and "statechart" in tool


def load(explicit: str | None = None, paths: Sequence[str] = (),
         cwd: Path | None = None) -> Config:
    """The configuration of this command: `explicit` (`--config`), else the one found from
    `cwd`, else the one found from the first of `paths`, else the defaults rooted at `cwd`."""
    here = (cwd or Path.cwd()).resolve()
    if explicit is not None:
        file = Path(explicit)
        if not file.is_file():
            raise ConfigError(f"--config {explicit}: no such file")
        return read(file)
    found = find(here)
    if found is None and paths:
        first = Path(paths[0])
        start = (here / first).resolve()
        found = find(start if start.is_dir() else start.parent)
    return read(found) if found is not None else Config(here)


def read(file: Path) -> Config:
    """The settings in `file` (`statechart.toml`: the whole file; any other name: its
    `[tool.statechart]` table)."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        raise ConfigError(f"{file}: cannot read the configuration: {reason or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    own = file.name == STATECHART_TOML
    table: object = data if own else data.get("tool", {}).get("statechart", {})
    return _Reader(file, text, () if own else ("tool", "statechart")).config(table)


_KEYS = ("specs", "build", "output", "editor-schema", "diagrams", "severity",
         "per-file-ignores")
_DIAGRAM_KEYS = ("engine", "layout-timeout", "layout-max-transitions")


class _Reader:
    """Checks a parsed table key by key; every error names the file and the key's line."""

    def __init__(self, file: Path, text: str, prefix: tuple[str, ...]) -> None:
        self.file, self.lines, self.prefix = file, text.splitlines(), prefix

    def error(self, table: tuple[str, ...], key: str | None, message: str) -> ConfigError:
        line = self._line(table, key)
        return ConfigError(f"{self.file}:{line}: {message}" if line else f"{self.file}: {message}")

    def _name(self, table: tuple[str, ...], key: str | None = None) -> str:
        parts = [*self.prefix, *table, *([key] if key else [])]
        return ".".join(_quoted(p) for p in parts) if parts else "(top level)"

    def _line(self, table: tuple[str, ...], key: str | None) -> int | None:
        """The line that sets `key` in `table` (or the table's header), by scanning the text:
        a header `[a.b]` opens a table, a key is written bare, quoted or as the last part of
        a dotted key, or is itself a table with a header (`[a.b.KEY]`, `[a.b.KEY.c]`). Good
        enough for a message; None when not found."""
        full = (*self.prefix, *table)
        current: tuple[str, ...] = ()
        header_line = None
        for number, raw in enumerate(self.lines, 1):
            line = raw.strip()
            header = re.match(r"\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", line)
            if header:
                current = tuple(p.strip().strip("\"'") for p in header.group(1).split("."))
                if current == full:
                    header_line = number
                elif key is not None and current[:len(full) + 1] == (*full, key):
                    return number  # the key is a table of its own: `[tool.statechart.KEY]`
                continue
            if key is None:
                continue
            assigned = re.match(r"((?:[\w\"'-]+\s*\.\s*)*)([\w-]+|\"[^\"]*\"|'[^']*')\s*=", line)
            if not assigned:
                continue
            dotted = tuple(p.strip().strip("\"'") for p in assigned.group(1).split(".")
                           if p.strip())
            name = assigned.group(2).strip("\"'")
            if name == key and (*current, *dotted) == full:
                return number
        return header_line

    def config(self, table: object) -> Config:
        root = self.file.resolve().parent
        if not isinstance(table, dict):
            raise self.error((), None, f"`{self._name(())}` must be a table")
        self.known(table, (), _KEYS)
        out: dict[str, object] = {}
        if "specs" in table:
            out["specs"] = tuple(self.folder(p, (), "specs") for p in
                                 self.strings(table["specs"], (), "specs", allow_one=True))
            if not out["specs"]:
                raise self.error((), "specs", "`specs` names no path; leave it out for "
                                              "the default `[\"specs\"]`")
        if "build" in table:
            kinds = self.strings(table["build"], (), "build")
            for kind in kinds:
                self.choice(kind, OUTPUT_KINDS, (), "build")
            out["build"] = frozenset(kinds)
        if "output" in table:
            folders = self.table(table["output"], (), "output")
            self.known(folders, ("output",), OUTPUT_KINDS)
            merged = dict(DEFAULT_FOLDERS)
            for kind, value in folders.items():
                merged[kind] = self.folder(value, ("output",), kind)
            out["folders"] = merged
        if "editor-schema" in table:
            out["editor_schema"] = self.folder(table["editor-schema"], (), "editor-schema",
                                               noun="file")
        if "diagrams" in table:
            self.diagrams(self.table(table["diagrams"], (), "diagrams"), out)
        if "severity" in table:
            severity = self.table(table["severity"], (), "severity")
            for rule, value in severity.items():
                self.rule_id(rule, ("severity",), rule)
                if not isinstance(value, str):
                    raise self.error(("severity",), rule, f"`{self._name(('severity',), rule)}`"
                                     f" must be one of {_listed(SEVERITIES)}")
                self.choice(value, SEVERITIES, ("severity",), rule)
                if value != "error":
                    self.adjustable(rule, ("severity",), rule)
            out["severity"] = dict(severity)
        if "per-file-ignores" in table:
            ignores = self.table(table["per-file-ignores"], (), "per-file-ignores")
            parsed: dict[str, tuple[str, ...]] = {}
            for pattern, ids in ignores.items():
                where = ("per-file-ignores",)
                rules = self.strings(ids, where, pattern)
                for rule in rules:
                    self.rule_id(rule, where, pattern)
                    self.adjustable(rule, where, pattern)
                parsed[pattern] = tuple(rules)
            out["per_file_ignores"] = parsed
        return Config(root, self.file, **out)  # type: ignore[arg-type]

    def diagrams(self, table: dict[str, object], out: dict[str, object]) -> None:
        where = ("diagrams",)
        self.known(table, where, _DIAGRAM_KEYS)
        if "engine" in table:
            engine = table["engine"]
            if not isinstance(engine, str):
                raise self.error(where, "engine", f"`{self._name(where, 'engine')}` must be "
                                 f"one of {_listed(ENGINES)}")
            out["engine"] = self.choice(engine, ENGINES, where, "engine")
        for key, kind in (("layout-timeout", float), ("layout-max-transitions", int)):
            if key not in table:
                continue
            value = table[key]
            whole = kind is int
            if not isinstance(value, int if whole else int | float) or isinstance(value, bool) \
                    or value <= 0:
                noun = "a positive whole number" if whole else "a positive number of seconds"
                raise self.error(where, key, f"`{self._name(where, key)}` must be {noun}, not "
                                 f"{value!r}")
            out[key.replace("-", "_")] = value if whole else float(value)

    def known(self, table: dict[str, object], where: tuple[str, ...],
              keys: Iterable[str]) -> None:
        keys = list(keys)
        for key in table:
            if key not in keys:
                hint = _did_you_mean(key, keys)
                raise self.error(where, key, f"unknown key `{self._name(where, key)}`"
                                 + (f"; {hint}" if hint else f" (known: {_listed(keys)})"))

    def table(self, value: object, where: tuple[str, ...], key: str) -> dict[str, object]:
        if not isinstance(value, dict):
            raise self.error(where, key, f"`{self._name(where, key)}` must be a table")
        return value

    def strings(self, value: object, where: tuple[str, ...], key: str,
                allow_one: bool = False) -> list[str]:
        if allow_one and isinstance(value, str):
            return [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(where, key, f"`{self._name(where, key)}` must be a list of strings")
        return list(value)

    def choice(self, value: str, choices: Sequence[str], where: tuple[str, ...],
               key: str) -> str:
        if value not in choices:
            hint = _did_you_mean(value, choices)
            raise self.error(where, key, f"`{self._name(where, key)}`: `{value}` is not one of "
                             f"{_listed(choices)}" + (f"; {hint}" if hint else ""))
        return value

    def folder(self, value: object, where: tuple[str, ...], key: str,
               noun: str = "folder") -> str:
        """A relative path that stays inside the project root, in POSIX form."""
        if not isinstance(value, str) or not value.strip():
            raise self.error(where, key, f"`{self._name(where, key)}` must be a {noun} path")
        path = PurePosixPath(value.replace("\\", "/"))
        if path.is_absolute() or re.match(r"[A-Za-z]:", value) or ".." in path.parts:
            raise self.error(where, key, f"`{self._name(where, key)}`: `{value}` must be a "
                             "path inside the project (relative, without `..`)")
        return path.as_posix()

    def rule_id(self, rule: str, where: tuple[str, ...], key: str) -> None:
        from statechart.rules import RULES  # only when a file sets rules

        if rule not in RULES:
            hint = _did_you_mean(rule, RULES)
            raise self.error(where, key, f"`{self._name(where, key)}`: no rule `{rule}`"
                             + (f"; {hint}" if hint else " (`statechart rule` lists them)"))

    def adjustable(self, rule: str, where: tuple[str, ...], key: str) -> None:
        from statechart.rules import ADJUSTABLE

        if rule not in ADJUSTABLE:
            raise self.error(where, key, f"`{self._name(where, key)}`: `{rule}` cannot be "
                             "turned off or changed: a spec with it cannot be compiled (these "
                             f"can: {_listed(sorted(ADJUSTABLE))})")


def _quoted(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else f'"{key}"'


def _listed(items: Iterable[str]) -> str:
    return ", ".join(f"`{i}`" for i in items)


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else ""
