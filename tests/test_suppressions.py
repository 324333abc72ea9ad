"""Inline suppressions (`# statechart: ignore[RULE]`, `statechart.suppressions`): which `#` is
a comment, overlays, the project configuration, and the machine formats. The rule's own
cases are in tests/cases/unused-suppression/ and tests/cases/ok/suppressed.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statechart.cli import main
from statechart.config import Config
from statechart.linter import check_file, check_source
from statechart.suppressions import Suppression
from statechart.suppressions import find as find_in
from statechart.yaml_source import load_text


def find(path: str, text: str) -> list[Suppression]:
    source, _ = load_text(path, text)
    return find_in(source) if source is not None else []


@pytest.mark.parametrize(("text", "lines"), [
    ("a: b  # statechart: ignore[x]\n", [1]),
    ("# statechart: ignore[x]\n", [1]),
    ("a: {b: c}  #statechart:ignore[x]\n", [1]),
    ('a: "q # statechart: ignore[x]"\n', []),
    ('a: "q \\" # statechart: ignore[x]"  # statechart: ignore[y]\n', [1]),
    ("a: 'it''s # statechart: ignore[x]'\n", []),
    ("a: b#statechart: ignore[x]\n", []),  # no space before `#`: part of the plain scalar
    ('a: "two\n  lines # statechart: ignore[x]"\nb: c  # statechart: ignore[y]\n', [3]),
    ("a: |\n  # statechart: ignore[x]\nb: c\n", []),
    ("a: >-\n  text\n  # statechart: ignore[x]\n# statechart: ignore[y]\n", [4]),
    ("a: [b, 'c # statechart: ignore[x]']  # statechart: ignore[z]\n", [1]),
])
def test_only_comments_count(text: str, lines: list[int]) -> None:
    assert [s.line for s in find("t.yaml", text)] == lines


def test_ids_and_their_columns() -> None:
    [s] = find("t.yaml", "a: b  # statechart: ignore[one,  two ]\n")
    assert s.ids == (("one", 28), ("two", 34))
    assert (s.column, s.end_column) == (7, 39)


def test_a_file_that_does_not_tokenize_has_none() -> None:
    assert find("t.yaml", "a: b  # statechart: ignore[x]\nc: 'unterminated\n") == []


SPEC = """\
statechart: demo
version: 1
initial: running
record:
  notes: {type: string}  # statechart: ignore[unused-field]
states:
  running: {on: {stop: done}}
  done: {final: true}
"""


def test_suppression_applies_before_the_configuration() -> None:
    """A rule the project ignores still finds the suppressed finding: no unused warning."""
    config = Config(Path.cwd(), severity={"unused-field": "ignore"})
    assert check_source("t.yaml", SPEC.encode(), config).diagnostics == []
    unused = SPEC.replace("{stop: done}}", "{stop: done}}  # statechart: ignore[trap-state]")
    assert [d.rule for d in check_source("t.yaml", unused.encode()).diagnostics] == [
        "unused-suppression"]
    quiet = Config(Path.cwd(), severity={"unused-suppression": "ignore"})
    assert check_source("t.yaml", unused.encode(), quiet).diagnostics == []
    strict = Config(Path.cwd(), severity={"unused-suppression": "error"})
    assert [d.severity for d in check_source("t.yaml", unused.encode(), strict).diagnostics] \
        == ["error"]


def test_overlay_findings_in_the_base_follow_the_bases_comments(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "base.yaml").write_text(SPEC.replace(
        "  done: {final: true}", "  done: {final: true}\n  spare: {}  # statechart: "
        "ignore[unreachable-state, trap-state, no-path-to-final]"), encoding="utf-8")
    (specs / "team.yaml").write_text(
        "extends: base\nstatechart: team\nrecord:\n  owner: {type: string}"
        "  # statechart: ignore[unused-field]\n", encoding="utf-8")
    base = check_file(specs / "base.yaml").diagnostics
    # The base's own check reports its comment's id that matched nothing ...
    assert [(d.rule, d.message) for d in base] == [
        ("unused-suppression", "no `no-path-to-final` finding on this line to suppress")]
    # ... the overlay's check does not: the base is not the file being checked.
    assert check_file(specs / "team.yaml").diagnostics == []


def test_machine_formats_with_suppressions(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC.replace("{stop: done}}", "{stop: done}}  # statechart: ignore[trap-state]"),
                    encoding="utf-8")
    assert main(["check", "--format", "json", str(spec)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(d["rule"], d["severity"], d["line"]) for d in found] == [
        ("unused-suppression", "warning", 7)]
    assert main(["check", "--format", "sarif", str(spec)]) == 0
    sarif = json.loads(capsys.readouterr().out)
    run = sarif["runs"][0]
    # the unused suppression, then the finding a comment suppressed, marked as such
    assert [(r["ruleId"], r.get("suppressions")) for r in run["results"]] == [
        ("unused-suppression", None), ("unused-field", [{"kind": "inSource"}])]
    assert "unused-suppression" in [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert main(["check", "--strict", str(spec)]) == 1
