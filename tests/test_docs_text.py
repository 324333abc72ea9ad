"""The project's documentation pages (docs/*.md, README.md) stay finished and say what they
measured: no page leaves a TODO or has two sections of one title, and docs/scxml.md names
every conformance trace family its engine figures cover or leave out."""

from __future__ import annotations

import re
from pathlib import Path

from conformance_traces import trace_files

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"])


def _headings(text: str) -> list[str]:
    """A page's section titles, whatever their level (not `#` lines of code blocks)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (found := re.match(r"#{1,6} (.+)", line)):
            out.append(found.group(1).strip())
    return out


def test_no_page_leaves_a_todo_or_repeats_a_section() -> None:
    for page in PAGES:
        text = page.read_text()
        assert not re.search(r"\b(TODO|FIXME|XXX)\b|to be written", text, re.I), page.name
        titles = _headings(text)
        assert sorted({t for t in titles if titles.count(t) > 1}) == [], page.name


def test_the_scxml_engine_figures_name_every_trace_family() -> None:
    """Each family's specs are named `PREFIX_NNN`; the page says which the table covers."""
    names = [spec["name"] for _, _, specs in trace_files() for spec in specs]
    text = (ROOT / "docs" / "scxml.md").read_text()
    prefixes = sorted({name.split("_")[0] for name in names})
    assert [p for p in prefixes if f"`{p}_*`" not in text] == []
    assert f"conformance specs\nof `tests/conformance/traces/`, {len(names)} now" in text
