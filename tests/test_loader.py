"""Loader edge cases found in review: standard explicit tags, BOM snippets, names with a
trailing newline."""

from __future__ import annotations

from pathlib import Path

import pytest

from statechart.cli import main
from statechart.linter import check_source

VALID = b"statechart: x\nversion: 1\ninitial: a\nstates:\n  a: {on: {go: b}}\n  b: {final: true}\n"


@pytest.mark.parametrize("tagged", [b"version: !!str 1", b"version: !!int 1", b"version: ! 1"])
def test_every_explicit_tag_is_refused(tagged: bytes) -> None:
    result = check_source("t.yaml", VALID.replace(b"version: 1", tagged))
    assert [(d.rule, d.span.line, d.span.column) for d in result.diagnostics] == [
        ("yaml-syntax", 2, 10)]
    assert "explicit YAML tag" in result.diagnostics[0].message


def test_an_exclamation_mark_in_text_is_not_a_tag() -> None:
    text = VALID.replace(b"version: 1", b'version: 1\ndescription: "wow! it works!"')
    assert check_source("t.yaml", text).diagnostics == []


def test_a_name_with_a_trailing_newline_is_invalid() -> None:
    text = VALID.replace(b"statechart: x", b'statechart: "x\\n"')
    assert [d.rule for d in check_source("t.yaml", text).diagnostics] == ["invalid-name"]


def test_snippet_caret_after_a_bom(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bom.yaml"
    spec.write_bytes(b"\xef\xbb\xbf" + VALID.replace(b"statechart: x", b"statechart: Bad"))
    assert main(["check", str(spec)]) == 1
    out = capsys.readouterr().out
    assert "1 | statechart: Bad\n" in out
    assert "  |             ^^^\n" in out
