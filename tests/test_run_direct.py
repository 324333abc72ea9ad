"""A run whose class has no actions steps through the step kernel alone, without building a
python-statemachine machine (`Run.machine` is built when first asked for); a class with an
action, a convention method, a guard taking arguments or a `model=` keeps the machine. Both
give the same runs: guards overridden in a subclass are asked, actions run, and a machine
built after some steps carries on from where the run is (its remembered history too)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_support import Backend, import_path

from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
LATER = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def running(run: Any) -> Any:
    run.triage()
    run.start()
    return run


def test_a_run_of_a_class_without_actions_has_no_machine_until_asked(ar: ModuleType) -> None:
    run = running(ar.AgentRun())
    run.call_tool(toolCallId="t1")
    assert run._machine is None  # stepped by the kernel alone
    assert run.allowed_events  # the run answers without one
    machine = run.machine  # built now, where the run is
    assert [s.value for s in machine.configuration] == ["running", "tool_call"]
    run.machine.send("tool_result")  # the run's own send, through the machine from now on
    assert run.configuration == (ar.AgentRunState.running, ar.AgentRunState.reasoning)
    assert [s.value for s in machine.configuration] == ["running", "reasoning"]


def test_a_machine_built_late_remembers_the_history(ar: ModuleType) -> None:
    """Deep history (`proceed` re-enters `running` where it was) whether the machine was
    built before the interruption or after it."""
    for build_at in ("start", "interrupted"):
        run = running(ar.AgentRun())
        if build_at == "start":
            assert run.machine is not None
        run.call_tool(toolCallId="t1")
        run.interrupt(interruptReason=ar.AgentRunInterruptReason.human_review)
        run.resume()
        if build_at == "interrupted":
            assert run._machine is None
            assert run.machine is not None
        run.proceed()
        assert run.configuration == (ar.AgentRunState.running, ar.AgentRunState.tool_call), \
            build_at


def test_an_overridden_guard_is_asked(ar: ModuleType) -> None:
    class NoRetries(ar.AgentRun):  # type: ignore[misc, name-defined]
        def can_retry(self) -> bool:
            return False

    run = running(NoRetries())
    run.error(failureType="boom")
    assert run._machine is None
    assert run.status.value == "failed"
    assert run.record.failureType == "boom"  # the unguarded alternative, not the guarded ones
    retried = running(ar.AgentRun())
    retried.error(retryReason="flaky", retryChange=ar.AgentRunRetryChange.nothing,
                  retryAt=LATER)
    assert retried.status.value == "retrying"


def test_a_guard_that_raises_leaves_the_run_as_it_was(ar: ModuleType) -> None:
    class Broken(ar.AgentRun):  # type: ignore[misc, name-defined]
        def can_retry(self) -> bool:
            raise RuntimeError("guard failed")

    run = running(Broken())
    before = run.record.to_json()
    with pytest.raises(RuntimeError, match="guard failed"):
        run.error(retryReason="flaky", retryChange=ar.AgentRunRetryChange.nothing,
                  retryAt=LATER)
    assert run.record.to_json() == before
    run.complete()
    assert run.status.value == "completed"


def test_classes_that_need_the_machine_keep_it(ar: ModuleType) -> None:
    entered: list[str] = []

    class Convention(ar.AgentRun):  # type: ignore[misc, name-defined]
        def on_enter_tool_call(self) -> None:
            entered.append("tool_call")

    class GuardWithArguments(ar.AgentRun):  # type: ignore[misc, name-defined]
        def can_retry(self, event: Any) -> bool:
            entered.append(f"asked for {event}")
            return True

    class Listener:
        def on_enter_reasoning(self) -> None:
            entered.append("reasoning (model)")

    run = running(Convention())
    assert run._machine is not None
    run.call_tool(toolCallId="t1")
    asked = running(GuardWithArguments())
    assert asked._machine is not None
    asked.error(retryReason="flaky", retryChange=ar.AgentRunRetryChange.nothing,
                retryAt=LATER)
    with_model = ar.AgentRun(model=Listener())
    assert with_model._machine is not None
    running(with_model)
    assert entered == ["tool_call", "asked for error", "reasoning (model)"]


def test_refusals_are_the_same_without_a_machine(ar: ModuleType) -> None:
    run = running(ar.AgentRun())
    with pytest.raises(EventNotAccepted) as refused:
        run.approve(approvedBy="alice")
    assert refused.value.cause == "unhandled"
    assert run._machine is None
    machine_run = running(ar.AgentRun())
    assert machine_run.machine is not None
    with pytest.raises(EventNotAccepted) as also:
        machine_run.approve(approvedBy="alice")
    assert str(also.value) == str(refused.value)


def test_the_store_fires_with_the_subclass_guards_and_actions(ar: ModuleType,
                                                              backend: Backend) -> None:
    """`store.fire` restores the run as the class given: a guard it overrides and an action
    it defines are honoured whether the class steps with a machine or without."""
    entered: list[str] = []

    class NoRetries(ar.AgentRun):  # type: ignore[misc, name-defined]
        def can_retry(self) -> bool:
            return False

    class Noted(ar.AgentRun):  # type: ignore[misc, name-defined]
        def on_enter_tool_call(self) -> None:
            entered.append(self.record.toolCallId)

    store = open_store(backend.url)
    first, second = running(ar.AgentRun()), running(ar.AgentRun())
    store.create(first)
    store.create(second)
    fired = store.fire(NoRetries, first.record.runId, "error", failureType="boom")
    assert fired.run.status.value == "failed"
    store.fire(Noted, second.record.runId, "call_tool", toolCallId="t7")
    assert entered == ["t7"]
    store.close()
