"""A run whose class has no actions steps through the step kernel alone, without building a
python-statemachine machine (`Run.machine` is built when first asked for); a class with an
action, a convention method, a guard taking arguments or a `model=` keeps the machine. Both
give the same runs: guards overridden in a subclass are asked, actions run, and a machine
built after some steps carries on from where the run is (its remembered history too)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source
from store_support import Backend, import_path

from statechart_runtime.run import EventNotAccepted, steps_without_machine
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


def _bench_actions() -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_actions
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return bench_actions


class _Listener:
    """A `model=` with nothing of its own: the run steps through its machine."""


def test_a_class_whose_actions_take_only_self_calls_them_without_a_machine(
        tmp_path: Path) -> None:
    """The agent run with the actions bench/bench_actions.py times (entry and exit actions of
    a compound state and of its children, a transition's action): stepped without a machine,
    its run calls the same actions in the same order as python-statemachine's machine does,
    on the same path (a tool call, an interruption, history back into `running`, the end),
    and ends with the same record; restored, it calls none again."""
    bench = _bench_actions()
    text = bench.typical_actions((ROOT / "bench" / "agent_run_v1.yaml").read_text())
    spec = checked_text(text)
    assert spec is not None
    module = import_source(generate(spec)["generated/agent_run.py"], tmp_path, "typical")
    names = ("noted", "start_clock", "stop_clock", "log_tool_call", "notify_owner",
             "publish_result")

    def logger(name: str) -> Any:
        def action(self: Any) -> None:
            self.log.append((name, tuple(s.value for s in self.configuration)))
        return action

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        self.log = []
        module.AgentRun.__init__(self, *args, **kwargs)

    logged = type("Logged", (module.AgentRun,), {"__init__": init,
                                                  **{n: logger(n) for n in names}})
    assert not steps_without_machine(logged)  # it acts: a store never computes it twice
    def clock() -> dt.datetime:
        return LATER  # both runs' steps at one time: their records compare whole

    runs = {"direct": logged(run_id="r", clock=clock),
            "machine": logged(run_id="r", clock=clock, model=_Listener())}
    assert runs["direct"]._machine is None and runs["machine"]._machine is not None
    path = [("triage", {}), ("start", {}), ("call_tool", {}), ("tool_result", {}),
            ("interrupt", {"interruptReason": module.AgentRunInterruptReason.approval}),
            ("await_approval", {}), ("approve", {}), ("proceed", {}), ("call_tool", {}),
            ("complete", {})]
    logs: dict[str, list[Any]] = {}
    for way, run in runs.items():
        for event, values in path:
            getattr(run, event)(**values)
        logs[way] = run.log
    assert logs["direct"] == logs["machine"]
    assert [name for name, _ in logs["direct"]] == [
        "start_clock", "noted", "log_tool_call", "noted", "stop_clock", "notify_owner",
        "start_clock", "noted",  # deep history: back into `running` where it was
        "log_tool_call", "stop_clock", "publish_result"]  # exits, then the transition's
    # Each action sees the record as the step leaves it: `start_clock` runs in `running`.
    assert logs["direct"][0] == ("start_clock", ("running", "reasoning"))
    records = {way: json.loads(run.record.to_json()) for way, run in runs.items()}
    assert records["direct"] == records["machine"]
    halfway = logged(run_id="h")
    for event, values in path[:4]:
        getattr(halfway, event)(**values)
    again = logged.restore(module.AgentRunRecord.from_json(halfway.record.to_json()))
    assert again.log == [] and again._machine is None
    again.interrupt(interruptReason=module.AgentRunInterruptReason.approval)
    assert [name for name, _ in again.log] == ["stop_clock", "notify_owner"]


def test_an_action_that_raises_takes_the_event_back_without_a_machine(tmp_path: Path) -> None:
    """All or nothing on the direct path too: the record and the configuration are as before
    the event, and the run goes on."""
    spec = checked_text(_bench_actions().one_action(
        (ROOT / "bench" / "agent_run_v1.yaml").read_text()))
    assert spec is not None
    module = import_source(generate(spec)["generated/agent_run.py"], tmp_path, "one")
    calls: list[str] = []

    class Failing(module.AgentRun):  # type: ignore[misc, name-defined]
        def noted(self) -> None:
            calls.append("noted")
            if len(calls) == 2:
                raise RuntimeError("the action failed")

    run = Failing(run_id="f")
    run.triage()
    run.start()  # enters `reasoning`: the first call
    run.call_tool()
    before = run.record.to_json()
    with pytest.raises(RuntimeError, match="the action failed"):
        run.tool_result()
    assert run._machine is None and run.record.to_json() == before
    assert [s.value for s in run.configuration] == ["running", "tool_call"]
    run.tool_result()  # the third call passes
    assert calls == ["noted"] * 3 and run.configuration[-1].value == "reasoning"


def test_an_initial_entry_action_cannot_send_an_event_before_the_run_exists(
        tmp_path: Path) -> None:
    """An entry action of an initial state runs while the run is being made: an event it
    sends is refused, the same way on both paths (before, the direct path took it in the
    middle of the constructor and the machine path failed on an assertion)."""
    text = (ROOT / "bench" / "agent_run_v1.yaml").read_text()
    assert text.count("\n  created:\n") == 1
    text = text.replace("\n  created:\n", "\n  created:\n    entry: [greet]\n")
    spec = checked_text(text)
    assert spec is not None
    module = import_source(generate(spec)["generated/agent_run.py"], tmp_path, "greeting")

    class Eager(module.AgentRun):  # type: ignore[misc, name-defined]
        def greet(self) -> None:
            self.triage()

    for kwargs in ({}, {"model": _Listener()}):
        with pytest.raises(RuntimeError,
                           match="event `triage` sent while `the run's creation` is being "
                                 "handled; send it after the action returns"):
            Eager(run_id="e", **kwargs)

    class Polite(module.AgentRun):  # type: ignore[misc, name-defined]
        def greet(self) -> None:
            pass

    run = Polite(run_id="p")
    run.triage()  # after the constructor returned, the run takes events
    assert run.status.value == "triaging"
