"""The step kernel as a user meets it: deadlines hold without a worker (in memory and through
the store, on both backends), a run's time only moves forward, limits fall through to the next
alternative, refusals name their cause, a timer whose guard says no does not starve the store's
other timers, and `kernel.step` computes without changing anything."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate, import_source
from store_support import Backend, import_path

from statechart_runtime import kernel
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


class Clock:
    def __init__(self, at: dt.datetime = T0) -> None:
        self.at = at

    def __call__(self) -> dt.datetime:
        return self.at


def waiting(ar: ModuleType, clock: Clock, run_id: str = "run-1") -> Any:
    run = ar.AgentRun(run_id=run_id, clock=clock)
    run.triage()
    run.start()
    run.interrupt(interruptReason=ar.AgentRunInterruptReason.approval)
    run.await_approval(approvalId="appr-1", approvalDeadline=clock.at + 2 * HOUR)
    return run


def test_an_approval_after_its_deadline_finds_the_run_timed_out(ar: ModuleType) -> None:
    clock = Clock()
    run = waiting(ar, clock)
    deadline = run.record.approvalDeadline
    clock.at += 3 * HOUR  # nobody called fire_due in between
    with pytest.raises(EventNotAccepted, match="has ended") as info:
        run.approve(approvedBy="alice")
    assert info.value.cause == "ended"
    assert [s.value for s in run.configuration] == ["timed_out"]
    last = run.record.history[-1]
    assert (last.event.value, last.at) == ("after.approvalDeadline.waiting_for_approval",
                                           deadline)  # stamped with its due time
    ar.AgentRunRecord.from_json(run.record.to_json())  # and the record checks


def test_an_approval_before_its_deadline_is_taken(ar: ModuleType) -> None:
    clock = Clock()
    run = waiting(ar, clock)
    clock.at += HOUR
    run.approve(approvedBy="alice")
    assert run.status is ar.AgentRunStatus.resumed


def test_the_store_fires_the_deadline_first_and_keeps_it(ar: ModuleType,
                                                         backend: Backend) -> None:
    clock = Clock()
    store = open_store(backend.url)
    run = waiting(ar, clock)
    store.create(run)
    deadline = run.record.approvalDeadline
    with pytest.raises(EventNotAccepted, match="has ended"):
        store.fire(ar.AgentRun, "run-1", "approve", approvedBy="alice",
                   at=deadline + HOUR)
    # The refusal did not undo what time did: the stored run timed out, at its deadline.
    loaded = store.load(ar.AgentRun, "run-1")
    assert [s.value for s in loaded.configuration] == ["timed_out"]
    assert store.history("run-1")[-1].at == deadline
    assert store.find(ar.AgentRun, status="failed") == ["run-1"]
    # An explicit time before the deadline: the event is taken at that time.
    store.create(early := waiting(ar, Clock(), "run-2"))
    at = early.record.lastTransitionAt + dt.timedelta(minutes=5)
    fired = store.fire(ar.AgentRun, "run-2", "approve", approvedBy="bob", at=at)
    assert fired.applied and store.history("run-2")[-1].at == at


def test_time_never_goes_back_in_a_runs_history(ar: ModuleType) -> None:
    clock = Clock()
    run = ar.AgentRun(clock=clock)
    run.triage()
    clock.at -= dt.timedelta(minutes=10)  # a worker whose clock is behind
    run.start()
    run.send_at(T0 - HOUR, "call_tool", toolCallId="c-1")
    times = [s.at for s in run.record.history]
    assert times == [T0, T0, T0] and run.record.lastTransitionAt == T0
    ar.AgentRunRecord.from_json(run.record.to_json())
    data = run.record.to_dict()
    data["history"][2]["at"] = (T0 - HOUR).isoformat()
    data["lastTransitionAt"] = data["history"][2]["at"]
    with pytest.raises(ar.AgentRunInvalidRecord, match="only moves forward") as info:
        ar.AgentRunRecord.from_dict(data)
    assert info.value.field == "history[2].at"


LIMITED = """\
statechart: limited
version: 1
initial: idle
states:
  idle:
    on:
      go: {target: busy, guard: may_go}
      stop: done
  busy:
    limit: 2
    on: {back: idle}
  done: {final: true}
"""


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(LIMITED)
    assert spec is not None
    return import_source(generate(spec)["generated/limited.py"],
                         tmp_path_factory.mktemp("limited"), "limited")


def test_refusals_name_their_cause(limited: ModuleType) -> None:
    class Refusing(limited.Limited):  # type: ignore[misc, name-defined]
        def may_go(self) -> bool:
            return False

    run = Refusing()
    with pytest.raises(EventNotAccepted, match=r"its guard said no: `may_go` \(in idle\)") \
            as guard:
        run.go()
    assert (guard.value.cause, guard.value.guards) == ("guard", ("may_go",))
    with pytest.raises(EventNotAccepted, match="no active state handles it") as unhandled:
        run.back()
    assert unhandled.value.cause == "unhandled"
    with pytest.raises(EventNotAccepted, match="no such event") as unknown:
        run.send("fly")
    assert unknown.value.cause == "unknown"
    run = limited.Limited()
    for _ in range(2):
        run.go()
        run.back()
    with pytest.raises(limited.LimitedLimitExceeded, match="at most 2 times"):
        run.go()  # the only alternative is at its limit: nothing else is enabled
    assert [s.value for s in run.configuration] == ["idle"] and len(run.record.history) == 4


GUARDED_TIMER = """\
statechart: nudge
version: 1
initial: waiting
states:
  waiting:
    after:
      1m: {target: nudged, guard: should_nudge}
    on: {answer: done}
  nudged: {on: {answer: done}}
  done: {final: true}
"""


def test_a_declined_timer_does_not_starve_the_stores_other_timers(
        backend: Backend, tmp_path: Path) -> None:
    spec = checked_text(GUARDED_TIMER)
    assert spec is not None
    path = tmp_path / "nudge_kernel_test.py"
    path.write_bytes(generate(spec)["generated/nudge.py"])
    nudge = import_path(path, "nudge_kernel_test")

    class Never(nudge.Nudge):  # type: ignore[misc, name-defined]
        def should_nudge(self) -> bool:
            return self.record.runId != "a"  # run a's guard says no

    store = open_store(backend.url)
    store.create(first := Never(run_id="a", clock=Clock()))
    store.create(nudge.Nudge(run_id="b", clock=Clock(T0 + dt.timedelta(seconds=10))))
    later = T0 + dt.timedelta(minutes=5)
    fired = []
    while (result := store.fire_next_due(Never, later)) is not None:  # the documented loop
        fired.append((result.run.record.runId, result.events))
        assert len(fired) < 5, fired
    assert fired == [("a", []), ("b", ["after.delay1.waiting"])]
    again = store.load(Never, "a")
    assert [t.declined for t in again.timers] == [True] and again.next_deadline is None
    assert first.timers and not first.timers[0].declined  # the caller's copy is its own


def test_step_computes_and_changes_nothing(ar: ModuleType) -> None:
    clock = Clock()
    run = waiting(ar, clock)
    state = run._state()
    before = copy.deepcopy((state.configuration, state.remembered, state.counts,
                            state.timers, run.record))
    spec = ar.AgentRun._sc_spec
    effect = kernel.step(spec, state, "approve",
                         [("waiting_for_approval", "resumed")],
                         {"approvedBy": ("alice", "alice")}, T0 + HOUR)
    assert (state.configuration, state.remembered, state.counts, state.timers,
            run.record) == before
    assert effect.configuration == ("resumed",)
    assert effect.changes == {"interruptReason": None, "approvalId": None,
                              "approvedBy": "alice"}
    assert effect.timers == [] and effect.steps == (
        ("waiting_for_approval", "resumed", None, {"approvedBy": "alice"}),)
    undo = kernel.commit(spec, run.record, effect, ar.AgentRunStep)
    assert run.record.approvedBy == "alice" and run.record.status.value == "resumed"
    undo()
    assert run.record == before[-1]


def test_the_chart_memo_cleared_by_another_thread_meanwhile_is_not_read_back(
        tmp_path: Path) -> None:
    """A chart, and its memo of steps, is shared by the runs of every thread; one of them may
    clear the memo (it is full) right after another stored a step in it. The step's result
    is the one computed, not read back from the memo (a KeyError out of `send`)."""
    text = """\
statechart: parm
version: 1
initial: work
states:
  work:
    parallel: true
    on: {stop: stopped}
    states:
      left: {initial: a1, states: {a1: {on: {both: {target: [a2, b2]}}}, a2: {on: {back: a1}}}}
      right: {initial: b1, states: {b1: {on: {step: b2}}, b2: {on: {back: b1}}}}
  stopped: {final: true}
"""
    spec = checked_text(text)
    assert spec is not None
    run_class = import_source(generate(spec)["generated/parm.py"], tmp_path, "parm_memo").Parm
    chart = run_class._sc_spec.chart
    assert not chart.remembers

    class ClearedByAnotherThread(dict):  # type: ignore[type-arg]
        def __setitem__(self, key: Any, value: Any) -> None:
            super().__setitem__(key, value)
            self.clear()  # the other thread, its memo full

    chart._steps = ClearedByAnotherThread()
    run = run_class(run_id="r")
    run.send("both")  # a multi-target move: the chart's general step
    assert run._active == ("work", "left", "a2", "right", "b2")
