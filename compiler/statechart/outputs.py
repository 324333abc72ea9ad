"""What `build` writes, as a plain registry, and the header every generated file carries.

A generator takes the checked model and returns {path relative to the repo root: bytes}.
Per-spec generators run once per spec; whole-set generators (an index page) once per build,
with each spec's check result (its model and its findings), so they never check a spec again.
Generators are pure: same model, same bytes, on every run and machine.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from statechart import __version__
from statechart.model import Spec

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
}

HEADER_MARK = "DO NOT EDIT"


def load(ref: str) -> Callable[..., dict[str, bytes]]:
    module, _, func = ref.partition(":")
    return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]


def spec_display_path(spec: Spec) -> str:
    """The spec's path as written in headers: relative to the working directory, POSIX."""
    path = Path(spec.path)
    try:
        path = path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        path = Path(path.name)
    return path.as_posix() if os.sep == "/" else str(path).replace(os.sep, "/")


def header_lines(spec: Spec) -> list[str]:
    """The header's text, without comment markers (each format adds its own)."""
    return [
        f"Generated from {spec_display_path(spec)} by statechart-compiler {__version__}. "
        f"{HEADER_MARK}.",
        f"Source sha256: {spec.source_sha256}",
        "Regenerate with: statechart build",
    ]
