"""The seed spec passes, and its rules catch the moves they forbid."""

from __future__ import annotations

from pathlib import Path

import pytest

from statechart.linter import check_source

SPEC = Path(__file__).parent.parent / "specs" / "agent_run.yaml"


def _check(text: str) -> list[tuple[str, str]]:
    result = check_source("agent_run.yaml", text.encode())
    return [(d.rule, d.message) for d in result.diagnostics]


def test_seed_spec_has_no_findings() -> None:
    assert _check(SPEC.read_text()) == []


def _add_transition(text: str, state_line: str, transition: str) -> str:
    """Insert `transition` as the `on:` of the state that starts at `state_line`."""
    assert state_line in text
    return text.replace(state_line, f"{state_line}\n    on: {{{transition}}}", 1)


@pytest.mark.parametrize(
    ("state_line", "transition", "expected"),
    [
        ("  completed:", "retry: running", ["terminal-exit"]),
        ("  cancelled:", "reopen: resumed", ["terminal-exit"]),
        ("  failed:", "replay: retrying", ["terminal-exit"]),
    ],
)
def test_terminal_states_cannot_move(state_line: str, transition: str,
                                     expected: list[str]) -> None:
    found = _check(_add_transition(SPEC.read_text(), state_line, transition))
    text = "\n".join(f"{rule}: {message}" for rule, message in found)
    for fragment in expected:
        assert fragment in text
    # The run ends in a top-level final state: the transition is never taken, so it breaks
    # none of the rules that keep terminal states terminal (terminal-exit refuses it).
    assert "rule-violation" not in [rule for rule, _ in found]


def test_interrupted_may_only_resume_cancel_or_fail() -> None:
    text = SPEC.read_text().replace("          resume: resumed\n",
                                    "          resume: resumed\n          restart: running\n", 1)
    found = _check(text)
    assert [r for r, _ in found] == ["rule-violation"]
    assert 'rule "interrupted-exits"' in found[0][1]
    assert "-restart-> running" in found[0][1]


def test_waiting_inside_interrupted_must_not_skip_to_running() -> None:
    text = SPEC.read_text().replace("          approve: {target: resumed,",
                                    "          approve: {target: running,", 1)
    found = _check(text)
    assert [r for r, _ in found] == ["rule-violation", "rule-violation"]
    assert all("waiting_for_approval` -approve-> `running`" in m for _, m in found)

