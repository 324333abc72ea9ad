"""Reporters: turn diagnostics into text. A plain dict of name -> function, as in
check-jsonschema. Each takes the diagnostics of all files plus the files' text (for snippets)
and returns the whole output; machine formats carry no summary line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from urllib.parse import quote

from statechart import __version__
from statechart.diagnostics import Diagnostic

Sources = dict[str, str]  # file -> text, for snippets (absent when a file could not be read)
Reporter = Callable[[Sequence[Diagnostic], Sources], str]

RULES_URL = "https://github.com/statechart-compiler/statechart-compiler/blob/main/docs/rules.md"


def inert(text: str) -> str:
    """Text safe to print on a terminal or in a CI log: control, format (bidi overrides,
    zero-width) and separator characters from the spec are shown as `<U+202E>`, never sent."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c == " " else f"<U+{ord(c):04X}>" for c in text
    )


def one_line(text: str) -> str:
    """A message of a driver or library, which may span lines (libpq: `Connection
    refused\n\tIs the server running ...?`), as one readable line: its lines, stripped,
    joined by `; `, then `inert` (so a line break is never shown as `<U+000A>`)."""
    return inert("; ".join(line.strip() for line in text.splitlines() if line.strip()))


# The colours of the human formats (`full`, `concise`), as SGR parameters. These constants are
# the only escape sequences a reporter writes: spec text goes through `inert` first, so a
# sequence in a spec is shown as `<U+001B>`, never sent, coloured or not.
# `statechart.cli.colour` decides whether to colour (--color, NO_COLOR, FORCE_COLOR, a TTY).
STYLES = {
    "error": "1;31",     # bold red
    "warning": "1;33",   # bold yellow
    "rule": "1",         # bold
    "location": "36",    # cyan
    "help": "1;36",      # bold cyan
    "added": "32",       # a diff's + line (build --check)
    "removed": "31",     # a diff's - line
    "hunk": "36",        # a diff's @@ line
}


def paint(text: str, style: str, colour: bool) -> str:
    """`text` in the style's colour when `colour`, else as it is."""
    return f"\x1b[{STYLES[style]}m{text}\x1b[0m" if colour and text else text


def uri_reference(path: str) -> str:
    """A file path as a URI reference (SARIF's `artifactLocation.uri`, a Markdown link):
    POSIX separators, every character but unreserved ones and `/` percent-encoded, so that a
    `#`, `?`, `%`, space or line break in a file name reads back as part of the name. A
    Windows drive path becomes a `file:` URI (`C:` would read as a scheme)."""
    path = path.replace("\\", "/")
    if re.match(r"[A-Za-z]:/", path):
        return "file:///" + path[:2] + quote(path[2:], safe="/")
    return quote(path, safe="/")


def _inert_all(d: Diagnostic) -> Diagnostic:
    return Diagnostic(d.rule, d.severity, inert(d.message), d.span, inert(d.help))


def _header(d: Diagnostic, colour: bool) -> str:
    return f"{paint(d.severity, d.severity, colour)}[{paint(d.rule, 'rule', colour)}]: {d.message}"


def concise(diagnostics: Sequence[Diagnostic], sources: Sources, colour: bool = False,
            summary: bool = False) -> str:
    """One line per diagnostic, by file, line and column (as a compiler lists them, for an
    editor to step through); then the count with `summary` (the report of `check`)."""
    ordered = sorted(diagnostics, key=lambda d: (d.span.file, d.span.line, d.span.column))
    return "".join(
        paint(f"{inert(d.span.file)}:{d.span.line}:{d.span.column}:", "location", colour)
        + f" {_header(d, colour)}\n"
        for d in map(_inert_all, ordered)
    ) + (count_line(diagnostics) + "\n" if diagnostics and summary else "")


def count_line(diagnostics: Sequence[Diagnostic]) -> str:
    """`Found 2 errors and 1 warning.`"""
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    return (f"Found {errors} error{'s' * (errors != 1)} and "
            f"{warnings} warning{'s' * (warnings != 1)}.")


def _snippet(d: Diagnostic, sources: Sources, colour: bool = False) -> list[str]:
    text = sources.get(d.span.file)
    if text is None:
        return []
    lines = text.split("\n")
    if not 1 <= d.span.line <= len(lines):
        return []
    line = lines[d.span.line - 1].rstrip("\r")
    if len(line) > 200:  # keep a huge one-line file readable
        start = max(0, d.span.column - 80)
        line, column = line[start:start + 160], d.span.column - start
    else:
        column = d.span.column
    width = len(str(d.span.line))
    length = 1
    if d.span.end_line == d.span.line:
        length = max(1, min(d.span.end_column - d.span.column, len(line) - column + 1))
    display = inert(line.replace("\t", " "))
    return [
        f"{' ' * width} |",
        f"{d.span.line} | {display}",
        f"{' ' * width} | {' ' * (column - 1)}{paint('^' * length, d.severity, colour)}",
    ]


def full(diagnostics: Sequence[Diagnostic], sources: Sources, summary: bool = True,
         colour: bool = False) -> str:
    """Each diagnostic with its location, snippet (when its file is in `sources`) and help;
    then the count, unless `summary` is False (a command that writes its own)."""
    out: list[str] = []
    for d in map(_inert_all, diagnostics):
        out.append(_header(d, colour))
        where = f"{inert(d.span.file)}:{d.span.line}:{d.span.column}"
        out.append(f"  --> {paint(where, 'location', colour)}")
        out.extend("  " + s for s in _snippet(d, sources, colour))
        if d.help:
            out.append(f"  = {paint('help:', 'help', colour)} {d.help}")
        out.append("")
    if diagnostics and summary:
        out.append(count_line(diagnostics))
    return "\n".join(out) + ("\n" if out else "")


def as_json(diagnostics: Sequence[Diagnostic], sources: Sources) -> str:
    return json.dumps([d.as_dict() for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def _gh_escape(text: str, prop: bool = False) -> str:
    # https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github(diagnostics: Sequence[Diagnostic], sources: Sources) -> str:
    out = []
    for d in map(_inert_all, diagnostics):
        level = "error" if d.severity == "error" else "warning"
        props = ",".join([
            f"title={_gh_escape(d.rule, True)}",
            f"file={_gh_escape(d.span.file, True)}",
            f"line={d.span.line}", f"col={d.span.column}",
            f"endLine={d.span.end_line}", f"endColumn={d.span.end_column}",
        ])
        message = d.message + (f"\nhelp: {d.help}" if d.help else "")
        out.append(f"::{level} {props}::{_gh_escape(message)}\n")
    return "".join(out)


def sarif(diagnostics: Sequence[Diagnostic], sources: Sources,
          suppressed: Sequence[Diagnostic] = ()) -> str:
    """SARIF 2.1.0; `suppressed` findings (`# statechart: ignore[...]`) are listed too, each
    with `suppressions: [{"kind": "inSource"}]`, so that code scanning shows them as
    suppressed rather than not at all."""
    from statechart.rules import RULES  # the rules import the loader: only when needed

    rules = [
        {"id": rule_id, "shortDescription": {"text": (m.__doc__ or "").strip().splitlines()[0]},
         "helpUri": f"{RULES_URL}#{rule_id}",
         "defaultConfiguration": {"level": "error" if m.SEVERITY == "error" else "warning"}}
        for rule_id, m in RULES.items()
    ]
    index = {rule_id: i for i, rule_id in enumerate(RULES)}
    results: list[dict[str, object]] = [
        {
            "ruleId": d.rule,
            "ruleIndex": index.get(d.rule, 0),
            "level": "error" if d.severity == "error" else "warning",
            "message": {"text": d.message + (f" (help: {d.help})" if d.help else "")},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": uri_reference(d.span.file)},
                "region": {"startLine": d.span.line, "startColumn": d.span.column,
                           "endLine": d.span.end_line, "endColumn": d.span.end_column},
            }}],
        }
        for d in [*diagnostics, *suppressed]
    ]
    for result in results[len(diagnostics):]:
        result["suppressions"] = [{"kind": "inSource"}]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "statechart", "version": __version__,
                                "informationUri": RULES_URL, "rules": rules}},
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


REPORTERS: dict[str, Reporter] = {
    "full": full,
    "concise": concise,
    "json": as_json,
    "github": github,
    "sarif": sarif,
}
