"""Escaping free text for each output syntax, in one place.

State names, events, guards, tags and record fields are validated identifiers, but a spec
with errors still builds a model, and descriptions are free text: so every string that reaches
an output goes through one of these functions. The hazards: in DOT, a label that looks like
`<...>` is taken as HTML, a trailing backslash escapes the closing quote, `\\N`, `\\G` and
`\\l` are expanded, and a NUL cannot be passed to Graphviz at all; in Mermaid, `;`, `"` and
newlines break a label and `%%{init: ...}%%` anywhere is a directive. Each of them is in
tests/render_cases/hostile_labels.yaml, which the DOT, SVG, Mermaid and docs tests render.
"""

from __future__ import annotations

import functools
import html
import re
from typing import cast

import graphviz  # no stubs published: see [[tool.mypy.overrides]] in pyproject.toml

from statechart.report import inert

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Characters that mean nothing in a Mermaid label; everything else becomes `#<codepoint>;`.
_MERMAID_ALL_SAFE = re.compile(r"[A-Za-z0-9 _\-.,()/!?']*")  # most labels: kept as they are
_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9 _\-.,()/!?']")  # the others
# Markdown/HTML specials inside a table cell (GitHub flavour, including `$` for math).
# `_` only where it could open or close emphasis: GitHub ignores it inside a word
# (`runId`, `agent_run` stay readable in the page's source).
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<>&|~$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def one_line(text: str) -> str:
    """Control characters and line breaks become spaces; runs of spaces collapse. What is
    left that a terminal or viewer would act on rather than show (a bidi override, a zero-width
    character) is shown as `check` shows it, `<U+202E>`: `render` prints these labels. That
    also keeps every character XML 1.0 forbids (C0 controls, U+FFFE, U+FFFF, surrogates: none
    is printable) out of the SVG, which must parse as XML."""
    return inert(" ".join(_CONTROL.sub(" ", text).split()))


def dot_text(text: str) -> str:
    """A DOT escString shown literally: no HTML, no `\\N`/`\\l` expansion, no raw newline.

    `graphviz.escape` doubles backslashes and marks the string as not-HTML, so `quote`
    never passes `<...>` through raw and a trailing backslash cannot escape the closing quote.
    """
    # A `graphviz.quoting.NoHtml`, a str subclass: `str()` would drop the not-HTML mark.
    return cast(str, graphviz.escape(one_line(text)))


def dot_lines(lines: list[str]) -> str:
    """Several literal lines joined with DOT's centred line break `\\n`."""
    # Joining escaped pieces gives a plain str again, which `quote` would treat as HTML if it
    # happened to look like `<...>`: re-mark the result.
    return cast(str, graphviz.nohtml("\\n".join(dot_text(line) for line in lines)))


def html_text(text: str) -> str:
    """Text inside a Graphviz HTML-like label (the legend): entities for markup characters."""
    return html.escape(one_line(text), quote=True)


# Memoized: a diagram's edges repeat a few labels (`next`, `retry [can_retry]`) thousands of
# times.
@functools.lru_cache(maxsize=1 << 16)
def mermaid_text(text: str) -> str:
    """A Mermaid label: every character outside a small safe set becomes `#<codepoint>;`."""
    line = one_line(text)
    if _MERMAID_ALL_SAFE.fullmatch(line):
        return line
    return _MERMAID_UNSAFE.sub(_codepoint, line)


def _codepoint(match: re.Match[str]) -> str:
    return f"#{ord(match.group())};"


def markdown_cell(text: str | None) -> str:
    """Free text inside a Markdown table cell or list item: one line, specials as entities."""
    if not text:
        return ""
    return _MARKDOWN_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", one_line(text))


def comment_text(text: str, closer: str) -> str:
    """Text for a comment: one line, and the comment's closing sequence cannot occur."""
    line = one_line(text)
    while closer and closer in line:
        line = line.replace(closer, closer[0] + " " + closer[1:])
    return line


def header(lines: list[str], syntax: str) -> str:
    """The generated-file header in one comment syntax: `markdown`, `svg`, `dot`, `mermaid`."""
    if syntax in ("markdown", "svg"):
        return "".join(f"<!-- {comment_text(line, '--')} -->\n" for line in lines)
    if syntax == "mermaid":  # `%%{...}%%` anywhere is a directive, even inside a comment
        return "".join(f"%% {comment_text(line, '%%')}\n" for line in lines)
    return "".join(f"// {comment_text(line, '')}\n" for line in lines)  # DOT


def markdown_paragraph(text: str | None) -> str:
    """Like `markdown_cell`, and a paragraph (or a list item) cannot start a heading, list,
    quote or rule. Text that already starts with an entity (`&#96;`) starts nothing."""
    cell = markdown_cell(text)
    if cell and not cell.startswith("&#") and (not cell[0].isalnum()
                                                or re.match(r"\d+[.)]", cell)):
        cell = f"&#{ord(cell[0])};{cell[1:]}"
    return cell

