"""A schema error that drops or misreads part of the model is reported first, and the graph
findings it causes are named in its help instead of being reported on their own."""

from __future__ import annotations

from pathlib import Path

from statechart.linter import check_file

CASES = Path(__file__).parent / "cases" / "schema"


def test_misspelt_target_folds_the_unreachable_states_it_causes() -> None:
    result = check_file(CASES / "misspelt_target.yaml")
    rules = [(d.rule, d.span.line) for d in result.diagnostics]
    assert rules == [("schema", 13), ("unreachable-state", 21)]  # `orphan` is its own problem
    help_text = result.diagnostics[0].help
    assert help_text.startswith("did you mean `target`?")
    assert "state `interrupted` is unreachable" in help_text
    assert "state `paused` is unreachable" in help_text


def test_final_yes_reports_the_schema_error_only() -> None:
    result = check_file(CASES / "final_yes.yaml")
    assert [d.rule for d in result.diagnostics] == ["schema"]
    assert "[trap-state] state `done`" in result.diagnostics[0].help
    assert "[no-path-to-final]" in result.diagnostics[0].help


def test_a_transition_with_no_target_at_all_is_targetless_and_leads_nowhere(
        tmp_path: Path) -> None:
    # Before targetless transitions, `{guard: ok}` was a schema error (no `target`) that
    # folded the rest; now it is a transition that exits nothing: its state is a trap.
    spec = tmp_path / "s.yaml"
    spec.write_text("statechart: s\nversion: 1\ninitial: a\nstates:\n"
                    "  a:\n    on: {go: {guard: ok}}\n  b: {on: {end: c}}\n  c: {final: true}\n",
                    encoding="utf-8")
    result = check_file(spec)
    assert [(d.rule, d.message) for d in result.diagnostics][:2] == [
        ("trap-state", "state `a` is not final and has no transition out"),
        ("unreachable-state", "state `b` is unreachable from `a`")]


def test_schema_problems_come_before_model_findings_in_a_file(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("statechart: s\nversion: 1\ninitial: a\nstates:\n"
                    "  a: {on: {go: b}}\n  x: {on: {go: b}}\n  b: {final: true, tagz: [t]}\n",
                    encoding="utf-8")
    result = check_file(spec)
    assert [d.rule for d in result.diagnostics] == ["schema", "unreachable-state"]
