"""`run.send(name, **values)` takes a field's JSON form as well as its Python value (an enum's
value, RFC 3339 text for a datetime), so that a worker forwarding a JSON payload converts
nothing; a value that is neither is a TypeError saying what the field takes."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from agent_run import AgentRun, AgentRunInterruptReason, AgentRunState


def _interrupted() -> AgentRun:
    run = AgentRun(run_id="r-1")
    run.triage()
    run.start()
    return run


def test_a_json_payload_is_sent_as_it_is() -> None:
    run = _interrupted()
    payload = json.loads('{"interruptReason": "approval"}')
    run.send("interrupt", **payload)
    assert run.record.interruptReason is AgentRunInterruptReason.approval
    deadline = json.loads('{"approvalId": "a-7", "approvalDeadline": "2030-05-01T12:30:00Z"}')
    run.send("await_approval", **deadline)
    assert run.record.approvalDeadline == dt.datetime(2030, 5, 1, 12, 30, tzinfo=dt.UTC)
    assert AgentRunState.waiting_for_approval in run.configuration
    # The record holds the typed values: its JSON is the payload's.
    saved = json.loads(run.record.to_json())
    assert saved["interruptReason"] == "approval"
    assert saved["approvalDeadline"] == "2030-05-01T12:30:00+00:00"


def test_python_values_are_still_taken() -> None:
    run = _interrupted()
    run.send("interrupt", interruptReason=AgentRunInterruptReason.risky_tool)
    assert run.record.interruptReason is AgentRunInterruptReason.risky_tool


@pytest.mark.parametrize(("event", "values", "message"), [
    ("interrupt", {"interruptReason": "fraud"},
     "interruptReason: 'fraud' is not one of ['approval', 'human_review', 'external_input', "
     "'risky_tool'] (a AgentRunInterruptReason or its value)"),
    ("interrupt", {"interruptReason": 3},
     "interruptReason: expected a AgentRunInterruptReason (one of ['approval', 'human_review', "
     "'external_input', 'risky_tool']), got 3"),
    ("await_approval", {"approvalId": "a", "approvalDeadline": "tomorrow"},
     "approvalDeadline: expected a datetime with a time zone, or RFC 3339 text with an offset "
     "(2026-05-01T12:30:00Z), got 'tomorrow'"),
    ("await_approval", {"approvalId": "a", "approvalDeadline": "2030-05-01T12:30:00"},
     "approvalDeadline: expected a datetime with a time zone, or RFC 3339 text with an offset "
     "(2026-05-01T12:30:00Z), got '2030-05-01T12:30:00'"),
])
def test_a_bad_value_is_a_type_error_and_changes_nothing(
        event: str, values: dict[str, object], message: str) -> None:
    run = _interrupted()
    if event == "await_approval":
        run.send("interrupt", interruptReason="approval")
    before = run.record.to_json()
    with pytest.raises(TypeError) as caught:
        run.send(event, **values)
    assert str(caught.value) == message
    assert run.record.to_json() == before
