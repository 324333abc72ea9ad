"""Whether to colour, for every command that prints diagnostics or diffs, as ruff decides it:
`--color always|never` wins; with `auto` (the default) a non-empty `NO_COLOR` turns colour off,
else a non-empty `FORCE_COLOR` turns it on, else colour only when the stream is a terminal.
Only the human formats (`full`, `concise`) and `build --check`'s diffs are ever coloured;
json, sarif and github never. The colours themselves are `statechart.report.STYLES`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from typing import TextIO

from statechart.diagnostics import Diagnostic
from statechart.report import Reporter, Sources, concise, full, paint

CHOICES = ("auto", "always", "never")


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--color", choices=CHOICES, default="auto",
                        help="colour the human formats: auto (default) colours on a terminal "
                             "unless NO_COLOR is set (FORCE_COLOR colours anywhere); always; "
                             "never")


def enabled(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def report(reporters: Mapping[str, Reporter], fmt: str, diagnostics: Sequence[Diagnostic],
           sources: Sources, colour: bool) -> str:
    """The diagnostics in format `fmt` of `reporters`; the human ones coloured when `colour`."""
    if fmt == "full":
        return full(diagnostics, sources, colour=colour)
    if fmt == "concise":
        return concise(diagnostics, sources, colour=colour, summary=True)
    return reporters[fmt](diagnostics, sources)


def unified_diff(text: str, colour: bool) -> str:
    """A unified diff (`build --check`) with its added, removed and hunk lines coloured."""
    if not colour:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            out.append(paint(line.rstrip("\n"), "rule", True) + line[len(line.rstrip("\n")):])
            continue
        style = {"+": "added", "-": "removed", "@": "hunk"}.get(line[:1])
        body = line.rstrip("\n")
        out.append(paint(body, style, True) + line[len(body):] if style else line)
    return "".join(out)
