"""The committed generated/agent_run.py, driven through an agent run's whole life."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from statemachine.exceptions import TransitionNotAllowed

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "generated" / "agent_run.py"
SCHEMA = json.loads((ROOT / "generated" / "agent_run.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_run", MODULE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_run"] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


ar = load()
Reason = ar.AgentRunInterruptReason
Status = ar.AgentRunStatus
Change = ar.AgentRunRetryChange


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        self.now += dt.timedelta(seconds=1)
        return self.now


def new_run(**kwargs: Any) -> Any:
    return ar.AgentRun(run_id="run-1", clock=Clock(), **kwargs)


def names(run: Any) -> list[str]:
    return [s.value for s in run.configuration]


def valid(record: Any) -> dict[str, Any]:
    data = json.loads(record.to_json())
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    assert not errors, errors
    return data


def running(run: Any | None = None) -> Any:
    run = run or new_run()
    run.triage()
    run.start()
    return run


def test_a_new_run_starts_created_with_a_valid_record() -> None:
    run = new_run()
    assert names(run) == ["created"] and run.status is Status.created
    data = valid(run.record)
    assert data["runId"] == "run-1" and data["history"] == [] and data["counts"] == {"retrying": 0}
    assert data["specVersion"] == 2 and data["status"] == "created" and data["retryCount"] == 0


def test_interrupt_with_a_reason_wait_for_input_and_resume() -> None:
    run = running()
    run.call_tool(toolCallId="call-7")
    assert names(run) == ["running", "tool_call"]
    run.interrupt(interruptReason=Reason.external_input)
    assert names(run) == ["interrupted", "suspended"]
    assert run.record.interruptReason is Reason.external_input
    run.await_input()
    assert names(run) == ["interrupted", "waiting_for_input"]
    assert run.status is Status.waiting and valid(run.record)["status"] == "waiting"
    run.provide_input(humanInput="use the staging key")
    assert names(run) == ["resumed"] and run.record.humanInput == "use the staging key"
    assert run.record.interruptReason is None  # cleared on leaving interrupted
    run.proceed()
    # Back at the execution point: the tool call that was in flight, with its id.
    assert names(run) == ["running", "tool_call"] and run.record.toolCallId == "call-7"
    run.tool_result()
    assert names(run) == ["running", "reasoning"] and run.record.toolCallId is None
    last = valid(run.record)["history"][-3]
    assert last == {"event": "provide_input", "source": "waiting_for_input",
                    "target": "resumed", "at": last["at"],
                    "values": {"humanInput": "use the staging key"}}


DEADLINE = dt.datetime(2025, 1, 2, tzinfo=dt.UTC)


def waiting_for_approval(run: Any | None = None) -> Any:
    run = running(run)
    run.interrupt(interruptReason=Reason.approval)
    run.await_approval(approvalId="appr-1", approvalDeadline=DEADLINE)
    return run


def test_wait_for_approval_then_approve_or_deny() -> None:
    run = waiting_for_approval()
    assert run.status is Status.waiting and run.next_deadline == DEADLINE
    run.approve(approvedBy="alice")
    assert names(run) == ["resumed"] and run.record.approvedBy == "alice"
    assert run.record.approvalId is None and run.next_deadline is None  # the wait is over
    other = waiting_for_approval()
    other.deny(cancelReason="reviewer said no")
    assert other.status is Status.cancelled and other.is_terminated


def test_a_bare_resume_cannot_skip_a_pending_approval() -> None:
    run = waiting_for_approval()
    with pytest.raises(TransitionNotAllowed, match="resume"):
        run.resume()
    assert "resume" not in [e.value for e in run.allowed_events]
    with pytest.raises(TypeError):
        run.approve()  # what came back is required: who approved
    assert names(run) == ["interrupted", "waiting_for_approval"]


def test_an_unanswered_approval_times_out_at_its_deadline() -> None:
    run = waiting_for_approval()
    assert run.fire_due(DEADLINE - dt.timedelta(seconds=1)) == []
    assert run.fire_due(DEADLINE) == ["after.approvalDeadline.waiting_for_approval"]
    assert names(run) == ["timed_out"] and run.is_terminated
    assert run.status is Status.failed  # the design's status for a run that did not finish
    valid(run.record)


def test_the_application_moves_a_deadline_and_the_timer_follows() -> None:
    run = waiting_for_approval()
    later = DEADLINE + dt.timedelta(hours=4)
    run.update(approvalDeadline=later)
    assert run.next_deadline == later and run.fire_due(DEADLINE) == []
    restored = ar.AgentRun.restore(ar.AgentRunRecord.from_json(run.record.to_json()))
    assert restored.next_deadline == later
    restored.fire_due(later)
    assert names(restored) == ["timed_out"]


def test_input_that_never_comes_times_out_after_a_day() -> None:
    clock = Clock()
    run = running(ar.AgentRun(run_id="r", clock=clock))
    run.interrupt(interruptReason=Reason.human_review)
    run.await_input()
    entered = run.record.lastTransitionAt
    assert run.next_deadline == entered + dt.timedelta(hours=24)
    assert run.fire_due(entered + dt.timedelta(hours=23)) == []
    run.fire_due(entered + dt.timedelta(hours=24))
    assert names(run) == ["timed_out"]


def test_run_context_is_set_at_creation_and_updated_without_a_step() -> None:
    run = new_run(threadId="thread-9", sessionId="session-3")
    assert (run.record.threadId, run.record.sessionId) == ("thread-9", "session-3")
    running(run)
    steps = len(run.record.history)
    run.update(sessionId="session-4")
    assert run.record.sessionId == "session-4" and len(run.record.history) == steps
    run.update(sessionId=None)  # None unsets, it does not raise
    assert run.record.sessionId is None
    data = valid(run.record)
    assert data["threadId"] == "thread-9" and "sessionId" not in data
    with pytest.raises(TypeError, match="not a run-context field"):
        run.update(failureType="x")


def test_interrupt_needs_its_reason_with_its_type() -> None:
    run = running()
    with pytest.raises(TypeError):
        run.interrupt()  # a required keyword argument
    with pytest.raises(TypeError, match="interruptReason"):
        run.interrupt(interruptReason="approval")  # a str is not the enum
    with pytest.raises(ar.AgentRunMissingField, match="interruptReason"):
        run.interrupt(interruptReason=None)
    assert names(run) == ["running", "reasoning"] and len(run.record.history) == 2


def retry(run: Any, attempt: int) -> dt.datetime:
    """`error` with a backoff of `attempt` minutes; the time the retry starts."""
    at = run.record.lastTransitionAt + dt.timedelta(minutes=attempt)
    run.error(retryReason=f"timeout {attempt}", retryChange=Change.parameters, retryAt=at)
    return at  # type: ignore[no-any-return]


def test_a_retry_waits_for_its_backoff_and_keeps_its_context() -> None:
    run = running()
    run.call_tool(toolCallId="call-1")
    at = retry(run, 1)
    assert run.status is Status.retrying and run.next_deadline == at
    assert (run.record.retryReason, run.record.retryChange) == ("timeout 1", Change.parameters)
    assert run.fire_due(at - dt.timedelta(seconds=1)) == []  # still backing off
    with pytest.raises(TransitionNotAllowed):
        run.send("retry")  # no way around the backoff: the event is gone
    assert run.fire_due(at) == ["after.retryAt.retrying"]
    assert names(run) == ["running", "reasoning"] and run.record.retryCount == 1


def test_retry_up_to_the_limit_then_the_error_fails_the_run() -> None:
    run = running()
    for attempt in range(1, 4):
        at = retry(run, attempt)
        assert run.status is Status.retrying
        assert run.record.counts == {"retrying": attempt} and run.record.retryCount == attempt
        run.fire_due(at)
    # The fourth error: `retrying` is at its limit, so that alternative is not enabled and
    # the next one is taken: the error could be retried, so the spec says why the run failed
    # (`assign:`), whatever failureType the caller passed for a non-retryable error.
    run.error(retryReason="timeout 4", retryChange=Change.model, retryAt=DEADLINE,
              failureType="crash")
    assert run.status is Status.failed and run.record.failureType == "retries_exhausted"
    assert run.record.retryReason == "timeout 3" and run.record.retryCount == 3
    stored = valid(run.record)
    assert stored["history"][-1]["values"] == {"failureType": "retries_exhausted"}
    assert ar.AgentRunRecord.from_dict(stored).failureType == "retries_exhausted"


def test_the_fourth_error_needs_no_failure_type() -> None:
    run = running()
    for attempt in range(1, 4):
        run.fire_due(retry(run, attempt))
    run.error(retryReason="timeout 4")  # the spec gives failureType: nothing is missing
    assert run.status is Status.failed and run.record.failureType == "retries_exhausted"
    assert run.machine.configuration_values == {"failed"}


def test_a_guard_that_says_no_takes_the_next_alternative() -> None:
    class NoRetry(ar.AgentRun):  # type: ignore[misc, name-defined]
        def can_retry(self) -> bool:
            return False

    run = running(NoRetry(run_id="r", clock=Clock()))
    with pytest.raises(ar.AgentRunMissingField, match="failureType"):
        run.error(retryReason="x")  # the fallback needs failureType
    run.error(retryReason="x", failureType="model crashed")
    assert run.status is Status.failed
    assert run.record.retryReason is None  # only the fields of the taken transition are set
    assert valid(run.record)["history"][-1]["values"] == {"failureType": "model crashed"}


def test_a_model_object_can_answer_guards() -> None:
    class Model:
        def can_retry(self) -> bool:
            return False

    run = running(new_run(model=Model()))
    run.error(failureType="no retries for this model")
    assert run.status is Status.failed


def test_complete_fail_and_cancel_are_terminal() -> None:
    done = running()
    done.complete()
    failed = running()
    failed.fail(failureType="boom")
    cancelled = new_run()
    cancelled.cancel(cancelReason="user")
    rejected = new_run()
    rejected.triage()
    rejected.reject(failureType="out of scope")
    for run, status in ((done, "completed"), (failed, "failed"), (cancelled, "cancelled"),
                        (rejected, "failed")):
        assert run.status.value == status and run.is_terminated
        valid(run.record)


def reachable_runs() -> dict[str, Any]:
    """One run per configuration of the spec, reached through the public methods."""
    runs: dict[str, Any] = {}

    def at(*steps: tuple[str, dict[str, Any]]) -> Any:
        run = new_run()
        for event, kwargs in steps:
            getattr(run, event)(**kwargs)
        return run

    i = ("interrupt", {"interruptReason": Reason.approval})
    base = [("triage", {}), ("start", {})]
    runs["created"] = at()
    runs["triaging"] = at(("triage", {}))
    runs["reasoning"] = at(*base)
    runs["tool_call"] = at(*base, ("call_tool", {"toolCallId": "c"}))
    runs["suspended"] = at(*base, i)
    runs["waiting_for_approval"] = at(*base, i, ("await_approval", {
        "approvalId": "a", "approvalDeadline": DEADLINE}))
    runs["waiting_for_input"] = at(*base, i, ("await_input", {}))
    runs["resumed"] = at(*base, i, ("resume", {}))
    runs["retrying"] = at(*base, ("error", {"retryReason": "x", "retryChange": Change.tool,
                                             "retryAt": DEADLINE}))
    runs["completed"] = at(*base, ("complete", {}))
    runs["failed"] = at(*base, ("fail", {"failureType": "x"}))
    runs["cancelled"] = at(("cancel", {"cancelReason": "x"}))
    return runs


ALL_VALUES = {"interruptReason": Reason.approval, "retryReason": "r", "failureType": "f",
              "cancelReason": "c", "humanInput": "h", "toolCallId": "t", "approvalId": "a",
              "approvalDeadline": DEADLINE, "approvedBy": "b", "retryChange": Change.nothing,
              "retryAt": DEADLINE, "toolOutput": {"rows": [1, 2], "ok": True}}


def try_event(run: Any, event: str) -> list[str] | None:
    """The configuration after `event`, or None when the machine refuses it."""
    method = getattr(run, event)
    kwargs = {k: v for k, v in ALL_VALUES.items()
              if k in method.__code__.co_varnames[:method.__code__.co_kwonlyargcount + 1]}
    try:
        method(**kwargs)
    except TransitionNotAllowed:
        return None
    return names(run)


def run_events() -> list[Any]:
    """The events a caller can send (the run raises `after.*` itself)."""
    return [e for e in ar.AgentRunEvent if "." not in e.value]


@pytest.mark.parametrize("state", list(reachable_runs()))
def test_every_forbidden_move_of_the_rules_raises(state: str) -> None:
    interrupted = {"interrupted", "suspended", "waiting_for_approval", "waiting_for_input"}
    for event in run_events():
        run = reachable_runs()[state]
        after = try_event(run, event.value)
        if state in ("completed", "failed", "cancelled"):
            assert after is None, f"{state} left on {event.value}"  # terminal and never replayed
        if after is None:
            continue
        assert run.status.value not in ("running",) or state not in ("completed",)
        if state in interrupted:  # rule interrupted-exits
            assert after[0] in ("interrupted", "resumed", "cancelled", "failed"), (state, event)
        if state == "waiting_for_approval":  # rule approval-is-answered
            assert after[0] != "interrupted" or after[1] == state, event
        valid(run.record)


def test_sending_to_the_machine_directly_goes_through_the_run() -> None:
    run = new_run()
    with pytest.raises(ar._api.EventNotAccepted, match="no active state handles it"):
        run.machine.send("start")  # refused as the run refuses it
    assert names(run) == ["created"] and run.record.history == []
    run.machine.send("triage")  # taken as `run.triage()`: the record keeps it
    assert names(run) == ["triaging"]
    assert [s.event.value for s in run.record.history] == ["triage"]
    with pytest.raises(TypeError, match="send values with"):
        run.machine.send("reject", failureType="x")


def test_saved_to_json_and_continued_in_a_new_process(tmp_path: Path) -> None:
    run = running()
    run.interrupt(interruptReason=Reason.human_review)
    run.await_input()
    saved = tmp_path / "run.json"
    saved.write_text(run.record.to_json())
    script = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("agent_run", {str(MODULE)!r})
m = importlib.util.module_from_spec(spec); sys.modules["agent_run"] = m; spec.loader.exec_module(m)
record = m.AgentRunRecord.from_json(open({str(saved)!r}).read())
later = record.lastTransitionAt + __import__("datetime").timedelta(minutes=5)
run = m.AgentRun.restore(record, clock=lambda: later)  # within the input wait's day
assert [s.value for s in run.configuration] == ["interrupted", "waiting_for_input"]
run.provide_input(humanInput="done")
run.proceed()
assert [s.value for s in run.configuration] == ["running", "reasoning"]
run.complete()
print(run.record.to_json())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    data = json.loads(out)
    assert data["status"] == "completed" and data["humanInput"] == "done"
    assert [h["event"] for h in data["history"]][-4:] == [
        "await_input", "provide_input", "proceed", "complete"]
    assert not list(VALIDATOR.iter_errors(data))
    ar.AgentRunRecord.from_dict(data)  # and this process reads it back


def test_restore_continues_exactly_where_it_stopped() -> None:
    run = running()
    run.call_tool(toolCallId="c")
    copy = ar.AgentRun.restore(ar.AgentRunRecord.from_json(run.record.to_json()))
    assert copy.machine.configuration_values == run.machine.configuration_values
    copy.tool_result()
    assert names(copy) == ["running", "reasoning"]
    assert copy.record.history[-1].source is ar.AgentRunState.tool_call


def broken(run: Any, change: Any) -> dict[str, Any]:
    data = json.loads(run.record.to_json())
    change(data)
    return data


def interrupted_run() -> Any:
    run = running()
    run.interrupt(interruptReason=Reason.approval)
    return run


CASES = {
    "unknown status": (lambda d: d.update(status="sleeping"), "status"),
    "status disagrees": (lambda d: d.update(status="resumed"), "status"),
    "missing required field": (lambda d: d.pop("interruptReason"), "interruptReason"),
    "wrong enum value": (lambda d: d.update(interruptReason="boredom"), "interruptReason"),
    "unknown key": (lambda d: d.update(color="red"), "color"),
    "naive time": (lambda d: d.update(lastTransitionAt="2025-01-01T00:00:00"),
                   "lastTransitionAt"),
    "other version": (lambda d: d.update(specVersion=3), "specVersion"),
    "history breaks the graph": (lambda d: d["history"][1].update(event="complete",
                                                                   target="completed"),
                                 "history[1]"),
    "history of unknown event": (lambda d: d["history"][0].update(event="teleport"),
                                 "history[0].event"),
    "history skips a step": (lambda d: d["history"].pop(0), "history[0]"),
    "counts disagree": (lambda d: d["counts"].update(retrying=2) or d.update(retryCount=2),
                        "counts"),
    "counter disagrees": (lambda d: d.update(retryCount=1), "retryCount"),
    "status is not the vocabulary's": (lambda d: d.update(status="suspended"), "status"),
    "configuration disagrees": (lambda d: d.update(configuration=["interrupted",
                                                                  "waiting_for_input"]),
                                "configuration"),
}
SCHEMA_CATCHES = {"unknown status", "missing required field", "wrong enum value",
                  "unknown key", "naive time", "other version", "history of unknown event"}


@pytest.mark.parametrize("case", list(CASES))
def test_an_invalid_record_is_refused_naming_the_field(case: str) -> None:
    change, field = CASES[case]
    data = broken(interrupted_run(), change)
    with pytest.raises(ar.AgentRunInvalidRecord) as info:
        ar.AgentRunRecord.from_dict(data)
    assert info.value.field == field and str(info.value).startswith(field)
    if case in SCHEMA_CATCHES:
        assert list(VALIDATOR.iter_errors(data)), f"the schema accepts: {case}"


def test_a_retry_count_beyond_the_limit_is_refused_by_both() -> None:
    run = running()
    for attempt in range(1, 4):
        run.fire_due(retry(run, attempt))
    data = json.loads(run.record.to_json())
    step = dict(data["history"][-2])
    last = data["history"][-1]["at"]  # time only moves forward: the forged steps come last
    data["history"] += [{**step, "at": last}, dict(data["history"][-1])]
    data["counts"]["retrying"] = 4
    data["retryCount"] = 4
    with pytest.raises(ar.AgentRunInvalidRecord, match="more than 3"):
        ar.AgentRunRecord.from_dict(data)
    assert any("maximum" in e.message for e in VALIDATOR.iter_errors(data))


def test_an_action_that_fails_rolls_the_record_back() -> None:
    class Sharp(ar.AgentRun):  # type: ignore[misc, name-defined]
        def can_retry(self) -> bool:
            raise OSError("cannot reach the retry budget service")

    run = running(Sharp(run_id="r", clock=Clock()))
    before = run.record.to_json()
    with pytest.raises(OSError):
        run.error(retryReason="x", retryChange=Change.tool, retryAt=DEADLINE, failureType="y")
    assert run.record.to_json() == before and names(run) == ["running", "reasoning"]


def test_allowed_events_and_tags_follow_the_active_states() -> None:
    run = running()
    E = ar.AgentRunEvent
    # Declared on reasoning, then on its parent running, in the spec's order of first use.
    assert run.allowed_events == (E.cancel, E.interrupt, E.error, E.complete, E.fail,
                                  E.call_tool)
    assert run.has_tag("active") and not run.has_tag("paused") and not run.has_tag("nope")
    run.interrupt(interruptReason=Reason.approval)
    run.await_approval(approvalId="a", approvalDeadline=DEADLINE)
    assert run.has_tag("paused")
    assert run.allowed_events == (E.cancel, E.fail, E.approve, E.deny)
    run.deny(cancelReason="no")
    assert run.has_tag("terminal") and run.is_terminated
    assert run.allowed_events == ()


def test_refusals_name_the_spec_event_and_states_and_type_errors_the_enum() -> None:
    run = running()
    with pytest.raises(TransitionNotAllowed) as info:
        run.approve(approvedBy="alice")
    assert str(info.value) == ("event `approve`: no active state handles it (active: running, "
                               "reasoning)")
    assert info.value.cause == "unhandled"  # type: ignore[attr-defined]
    with pytest.raises(TypeError) as type_info:
        run.interrupt(interruptReason="approval")  # type: ignore[arg-type]
    assert str(type_info.value) == (
        "interruptReason: expected a AgentRunInterruptReason (one of ['approval', "
        "'human_review', 'external_input', 'risky_tool']), got 'approval'")
