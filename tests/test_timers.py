"""Timers (`after:`) at run time: arming, due order across nested and parallel states, the
record's `timers` and `createdAt` and their integrity check, save/restore in another process,
upgrades, and random event/time sequences (hypothesis)."""

from __future__ import annotations

import datetime as dt
import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_spec, checked_text, generate, import_source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statechart_runtime.run import EventNotAccepted

GOLDEN = Path(__file__).parent / "golden" / "timers" / "spec.yaml"
T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
MINUTE = dt.timedelta(minutes=1)


class Clock:
    """An injectable clock that tests move by hand."""

    def __init__(self, at: dt.datetime = T0) -> None:
        self.at = at

    def __call__(self) -> dt.datetime:
        return self.at

    def advance(self, delta: dt.timedelta) -> dt.datetime:
        self.at += delta
        return self.at


def module_of(text_or_path: str | Path, folder: Path, stem: str) -> ModuleType:
    spec = checked_spec(text_or_path) if isinstance(text_or_path, Path) else \
        checked_text(text_or_path)
    assert spec is not None
    py = next(data for name, data in generate(spec).items() if name.endswith(".py"))
    return import_source(py, folder, stem)


@pytest.fixture(scope="module")
def approval(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module_of(GOLDEN, tmp_path_factory.mktemp("approval"), "approval")


def armed(run: Any) -> list[tuple[str, str, dt.datetime]]:
    return [(t.state.value, t.event.value, t.due) for t in run.timers]


def test_entering_arms_and_leaving_disarms(approval: ModuleType) -> None:
    clock = Clock()
    run = approval.Approval(clock=clock)
    assert run.record.createdAt == T0
    assert armed(run) == [("asking", "after.delay1.asking", T0 + dt.timedelta(seconds=30)),
                          ("open", "after.delay1.open", T0 + dt.timedelta(days=1))]
    assert run.next_deadline == T0 + dt.timedelta(seconds=30)
    clock.advance(10 * MINUTE)
    deadline = T0 + 45 * MINUTE
    run.ask(approvalDeadline=deadline)  # asking -> waiting: the 30s timer is disarmed
    assert armed(run) == [
        ("waiting", "after.approvalDeadline.waiting", deadline),
        ("waiting", "after.escalation.waiting", T0 + 70 * MINUTE),
        ("open", "after.delay1.open", T0 + dt.timedelta(days=1))]
    run.approve(approver="ann")  # leaves `open`: all its timers go
    assert armed(run) == []
    assert run.next_deadline is None
    assert run.fire_due(T0 + dt.timedelta(days=30)) == []


def test_a_deadline_is_the_fields_value_and_follows_it(tmp_path: Path) -> None:
    spec = """\
statechart: dl
version: 1
initial: waiting
record:
  until: {type: datetime}
states:
  waiting:
    on:
      extend: {target: waiting, set: [until]}
      done: over
    after:
      until: expired
  expired: {final: true}
  over: {final: true}
"""
    module = module_of(spec, tmp_path, "dl")
    clock = Clock()
    run = module.Dl(clock=clock)
    assert run.timers == ()  # unset field: not armed
    paris = dt.timezone(dt.timedelta(hours=1))
    run.extend(until=dt.datetime(2026, 3, 1, 11, 0, tzinfo=paris))
    assert run.next_deadline == T0 + MINUTE * 60  # aware UTC
    assert run.next_deadline.tzinfo == dt.UTC
    assert run.fire_due(T0 + 59 * MINUTE) == []
    clock.advance(61 * MINUTE)
    assert run.fire_due() == ["after.until.waiting"]
    assert run.is_terminated and run.timers == ()


TIES = """\
statechart: ties
version: 1
initial: both
states:
  both:
    parallel: true
    after: {PT1M: {target: over, guard: never}}
    states:
      a:
        initial: a1
        states:
          a1: {after: {1m: a2}}
          a2: {}
      b:
        initial: b1
        states:
          b1: {after: {60s: b2, 60000ms: b3}}
          b2: {}
          b3: {}
  over: {final: true}
"""


def test_fire_due_fires_in_due_order_across_nested_and_parallel_states(
        approval: ModuleType, tmp_path: Path) -> None:
    clock = Clock()
    run = approval.Approval(clock=clock)
    run.ask(approvalDeadline=T0 + dt.timedelta(days=5))
    run.approve(approver="ann")
    run.recheck()  # both regions of `checks` arm: legal 15m, budget 2h
    entered = run.record.lastTransitionAt
    clock.advance(3 * dt.timedelta(hours=1))
    assert run.fire_due() == ["after.delay1.pending_legal", "after.delay1.pending_budget"]
    # Each step happened when its timer was due, not when a worker got to it.
    steps = [(s.event.value, s.at) for s in run.record.history[-2:]]
    assert steps == [("after.delay1.pending_legal", entered + 15 * MINUTE),
                     ("after.delay1.pending_budget", entered + 120 * MINUTE)]
    assert {s.value for s in run.configuration} >= {"budget_ok", "legal_ok"}

    # Ties: the same due time fires in document order of the states (the parallel state
    # before its regions, region a before b), then in declaration order; a timer whose
    # guards all fail stays armed, declined (the record shows it; it does not fire again).
    ties = module_of(TIES, tmp_path, "ties")
    never = type("Never", (ties.Ties,), {"never": lambda self: False})
    clock = Clock()
    run = never(clock=clock)
    assert [e for _, e, _ in armed(run)] == ["after.delay1.both", "after.delay1.a1", "after.delay1.b1",
                                             "after.delay2.b1"]
    assert run.fire_due(T0 + MINUTE) == ["after.delay1.a1", "after.delay1.b1"]
    assert {s.value for s in run.configuration} == {"both", "a", "a2", "b", "b2"}
    # `both`'s was declined (its guard said no); b1's second left with b1.
    assert [(e, t.declined) for (_, e, _), t in zip(armed(run), run.timers, strict=True)] == [
        ("after.delay1.both", True)]
    assert run.next_deadline is None and run.fire_due(T0 + 2 * MINUTE) == []
    again = ties.TiesRecord.from_json(run.record.to_json())  # a declined timer checks
    assert again.timers == run.record.timers


def test_timers_armed_by_fired_timers_fire_when_due(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    spec = """\
statechart: loop
version: 1
initial: a
states:
  a:
    after: {1s: b}
    on: {stop: end}
  b:
    after: {1s: a}
    on: {stop: end}
  end: {final: true}
"""
    loop = module_of(spec, tmp_path, "loop")
    clock = Clock()
    run = loop.Loop(clock=clock)
    clock.advance(dt.timedelta(minutes=1))
    # Each step is taken at its due time and arms the next one a second later: by now the
    # run went round 60 times, as it would had a worker fired every timer on time.
    assert run.fire_due() == ["after.delay1.a", "after.delay1.b"] * 30
    assert [s.at for s in run.record.history] == [
        T0 + dt.timedelta(seconds=n) for n in range(1, 61)]
    assert run.next_deadline == clock.at + dt.timedelta(seconds=1)
    # A spec that never stops: one call takes at most MAX_TIMER_STEPS steps.
    import statechart_runtime.run.run as run_module
    monkeypatch.setattr(run_module, "MAX_TIMER_STEPS", 5)
    clock.advance(dt.timedelta(minutes=1))
    assert len(run.fire_due()) == 5 and run.next_deadline == T0 + dt.timedelta(seconds=66)


def test_internal_events_cannot_be_sent(approval: ModuleType) -> None:
    run = approval.Approval(clock=Clock())
    with pytest.raises(EventNotAccepted) as info:
        run.send("after.delay1.asking")
    assert "the run raises it itself" in str(info.value)
    assert pickle.loads(pickle.dumps(info.value)).internal
    assert all(not e.value.startswith("after.") for e in run.allowed_events)
    assert not hasattr(run, "after_delay1_asking")


def test_the_record_holds_timers_and_refuses_forged_ones(approval: ModuleType) -> None:
    clock = Clock()
    run = approval.Approval(clock=clock)
    clock.advance(MINUTE)
    run.ask(approvalDeadline=T0 + dt.timedelta(hours=3))
    data = json.loads(run.record.to_json())
    assert data["createdAt"] == "2026-03-01T09:00:00+00:00"
    assert data["timers"][0] == {"state": "waiting", "event": "after.escalation.waiting",
                                 "due": "2026-03-01T10:01:00+00:00"}
    record_class = approval.ApprovalRecord
    assert record_class.from_json(json.dumps(data)) == run.record

    def refused(edit: Any, field: str) -> None:
        forged = json.loads(json.dumps(data))
        edit(forged)
        with pytest.raises(approval.ApprovalInvalidRecord) as info:
            record_class.from_json(json.dumps(forged))
        assert info.value.field == field, info.value

    refused(lambda d: d["timers"][0].update(due="2026-03-01T11:01:00+00:00"), "timers[0].due")
    refused(lambda d: d["timers"].reverse(), "timers")
    refused(lambda d: d["timers"].append(dict(d["timers"][0])), "timers")
    refused(lambda d: d["timers"][0].update(event="after.delay1.asking", state="asking"),
            "timers[0]")
    refused(lambda d: d["timers"][0].update(event="approve"), "timers[0].event")
    refused(lambda d: d.update(createdAt="2026-03-01T09:05:00+00:00"), "createdAt")
    refused(lambda d: d.pop("timers"), "timers")
    refused(lambda d: d.update(timers=[{"state": "waiting"}]), "timers[0]")
    # A missing timer is refused (a declined one stays in the record, marked).
    refused(lambda d: d["timers"].pop(0), "timers")
    declined = json.loads(json.dumps(data))
    declined["timers"][0]["declined"] = True
    assert record_class.from_json(json.dumps(declined)).timers[0].declined
    refused(lambda d: d["timers"][0].update(declined="yes"), "timers[0].declined")


def test_an_older_record_gets_its_timers_from_its_history(tmp_path: Path) -> None:
    v1 = """\
statechart: wait
version: 1
initial: idle
states:
  idle: {on: {ask: asked}}
  asked: {on: {answer: done}}
  done: {final: true}
"""
    v2 = v1.replace("version: 1", "version: 2\nmigrations: [{from_version: 1, states: "
                    "{asked: waiting}}]").replace("  asked: {on: {answer: done}}",
                                                  "  waiting:\n    on: {answer: done}\n"
                                                  "    after: {2h: done}")
    v2 = v2.replace("ask: asked", "ask: waiting")
    old = module_of(v1, tmp_path, "wait1")
    new = module_of(v2, tmp_path, "wait2")
    clock = Clock()
    run = old.Wait(clock=clock)
    clock.advance(MINUTE)
    run.ask()
    upgraded = new.WaitRecord.from_json(run.record.to_json())
    assert upgraded.createdAt == T0 + MINUTE  # the first step: no earlier time is known
    assert [(t.state.value, t.due) for t in upgraded.timers] == [
        ("waiting", T0 + MINUTE + dt.timedelta(hours=2))]
    # ... and back: a version-2 record read by a version 3 without timers drops them.
    v3 = v2.replace("version: 2", "version: 3").replace("    after: {2h: done}\n", "")
    v3 = v3.replace("from_version: 1", "from_version: 2")
    newest = module_of(v3, tmp_path, "wait3")
    restored = new.Wait.restore(upgraded, clock=clock)
    assert "timers" not in newest.WaitRecord.from_json(restored.record.to_json()).to_dict()


def test_timers_survive_a_restore_in_another_process(approval: ModuleType,
                                                     tmp_path: Path) -> None:
    """Process A creates a run and saves it; process B restores it at a later time and fires
    what is due. Nothing ran in between: the timers are data in the record."""
    folder = Path(approval.__file__).parent
    name = approval.__name__
    script = textwrap.dedent(f"""\
        import datetime as dt, json, sys
        sys.path.insert(0, {str(folder)!r})
        import {name} as m
        stage, path = sys.argv[1], sys.argv[2]
        t0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
        if stage == "create":
            run = m.Approval(clock=lambda: t0)
            run.ask(approvalDeadline=t0 + dt.timedelta(minutes=20))
            open(path, "w").write(run.record.to_json())
        else:
            later = t0 + dt.timedelta(minutes=25)
            run = m.Approval.restore(m.ApprovalRecord.from_json(open(path).read()),
                                     clock=lambda: later)
            print(json.dumps({{"next": str(run.next_deadline), "fired": run.fire_due(),
                              "status": run.status.value}}))
        """)
    path = tmp_path / "run.json"
    for stage in ("create", "fire"):
        done = subprocess.run([sys.executable, "-c", script, stage, str(path)],
                              capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"next": "2026-03-01 09:20:00+00:00",
                                       "fired": ["after.approvalDeadline.waiting"],
                                       "status": "expired"}


# -- random event and time sequences ---------------------------------------------------------

def events_and_waits(longest_wait: int, max_size: int) -> st.SearchStrategy[list[str | int]]:
    """Events and waits (seconds to let pass, then fire_due)."""
    return st.lists(st.one_of(
        st.sampled_from(["ask", "approve", "recheck", "finish", "close"]),
        st.integers(min_value=0, max_value=longest_wait)), max_size=max_size)


ACTIONS = events_and_waits(26 * 3600, 25)
# The default run's: waits of up to 3 h (past most deadlines drawn below), shorter sequences.
SHORT_ACTIONS = events_and_waits(3 * 3600, 12)


SEQUENCES = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
DEADLINES = st.integers(min_value=-30, max_value=3000)


# The full run is `slow` (`pytest -m slow`, a CI step of its own): an advance of up to 26 h
# fires every 500 ms reminder of a chain at its own time, so a sequence can hold thousands of
# steps, each checked by replaying the whole history. The default run keeps a few examples.
@pytest.mark.slow
@settings(SEQUENCES, max_examples=60)
@given(actions=ACTIONS, deadline_minutes=DEADLINES, urgent=st.booleans())
def test_any_sequence_keeps_a_record_that_checks_and_round_trips(
        approval: ModuleType, actions: list[str | int], deadline_minutes: int,
        urgent: bool) -> None:
    _sequence_keeps_a_record(approval, actions, deadline_minutes, urgent)


@settings(SEQUENCES, max_examples=10)
@given(actions=SHORT_ACTIONS, deadline_minutes=st.integers(min_value=-30, max_value=150),
       urgent=st.booleans())
def test_any_sequence_keeps_a_record_that_checks_and_round_trips_smoke(
        approval: ModuleType, actions: list[str | int], deadline_minutes: int,
        urgent: bool) -> None:
    _sequence_keeps_a_record(approval, actions, deadline_minutes, urgent)


def _sequence_keeps_a_record(approval: ModuleType, actions: list[str | int],
                             deadline_minutes: int, urgent: bool) -> None:
    clock = Clock()
    facade = type("Run", (approval.Approval,), {"is_urgent": lambda self: urgent})
    run = facade(clock=clock)
    for action in actions:
        if isinstance(action, int):
            now = clock.advance(dt.timedelta(seconds=action))
            run.fire_due()
            # Whatever was due fired or was dropped; what the firing armed is due later.
            assert all(t.due > now for t in run.timers)
        else:
            kwargs: dict[str, Any] = {
                "ask": {"approvalDeadline": clock.at + deadline_minutes * MINUTE},
                "approve": {"approver": "ann"}}.get(action, {})
            try:
                getattr(run, action)(**kwargs)
            except EventNotAccepted:
                continue
        timers = run.timers
        dues = [t.due for t in timers]
        assert dues == sorted(dues)
        assert run.next_deadline == (dues[0] if dues else None)
        active = {s.value for s in run.configuration}
        assert all(t.state.value in active for t in timers)
        approval.check_record(run.record)
        again = approval.ApprovalRecord.from_json(run.record.to_json())
        assert again == run.record
        run = facade.restore(again, clock=clock)


def test_a_stored_run_keeps_its_timers_and_fires_after_loading(approval: ModuleType,
                                                                tmp_path: Path) -> None:
    """What a scheduler over the run store does: load, read `next_deadline`, `fire_due(now)`,
    save (a real SQLite file)."""
    from statechart_runtime.store import open_store

    clock = Clock()
    with open_store(tmp_path / "runs.db") as store:
        run = approval.Approval(clock=clock)
        store.create(run)
        run_id = run.record.runId
    later = T0 + dt.timedelta(minutes=5)
    with open_store(tmp_path / "runs.db") as store:
        loaded = store.load(approval.Approval, run_id, clock=lambda: later)
        assert loaded.next_deadline == T0 + dt.timedelta(seconds=30)
        # Five minutes of asking (30s) and reminding (500ms), each on time: 18 steps.
        fired = loaded.fire_due(later)
        assert fired == ["after.delay1.asking", "after.delay1.reminding"] * 9
        store.save(loaded)
        again = store.load(approval.Approval, run_id, clock=lambda: later)
        assert armed(again) == armed(loaded)
        assert again.next_deadline == T0 + dt.timedelta(milliseconds=9 * 30_500 + 30_000)
        assert [row.event for row in store.history(run_id)] == fired


MIXED = """\
statechart: mixed
version: 1
initial: working
states:
  working:
    initial: step1
    states:
      step1: {on: {next: step2}}
      step2: {after: {1m: finished}}
      finished: {final: true}
    done: wrapped
    on:
      pause: paused
  paused:
    on:
      resume: {target: working, history: deep}
    after: {1h: {target: working, history: deep}}
  wrapped: {final: true}
"""


def test_timers_with_history_and_completion(tmp_path: Path) -> None:
    """A timer of a state re-entered through history starts again at the re-entry; a timer
    whose step completes the parent takes the `done` cascade in the same step; a timer may
    itself take a history transition. The record checks after each step."""
    mixed = module_of(MIXED, tmp_path, "mixed")
    clock = Clock()
    run = mixed.Mixed(clock=clock)
    run.next()
    clock.advance(10 * dt.timedelta(seconds=1))
    run.pause()
    assert armed(run) == [("paused", "after.delay1.paused", clock.at + dt.timedelta(hours=1))]
    paused = clock.at
    clock.advance(dt.timedelta(minutes=61))
    assert run.fire_due(paused + dt.timedelta(hours=1)) == ["after.delay1.paused"]  # deep history
    assert "step2" in {s.value for s in run.configuration}
    back = paused + dt.timedelta(hours=1)  # the step's time: the timer's due time
    assert run.record.lastTransitionAt == back
    assert armed(run) == [("step2", "after.delay1.step2", back + MINUTE)]
    record = mixed.MixedRecord.from_json(run.record.to_json())  # replay gives the re-entry
    run = mixed.Mixed.restore(record, clock=clock)
    assert run.fire_due() == ["after.delay1.step2"]
    assert run.record.history[-1].event.value == "done.state.working"  # one atomic step
    assert run.is_terminated and run.timers == ()
    mixed.MixedRecord.from_json(run.record.to_json())


def test_diagrams_and_pages_label_timers() -> None:
    from statechart.render.docs import spec_page
    from statechart.render.dot import dot_source
    from statechart.render.mermaid import mermaid_source

    spec = checked_spec(GOLDEN)
    mermaid = mermaid_source(spec)
    assert "after 30s" in mermaid and "after approvalDeadline" in mermaid
    assert "after PT1H #91;is_urgent#93;" in mermaid  # `[is_urgent]`, escaped
    assert "after 15m" in dot_source(spec)
    assert "after." not in mermaid  # never the internal event name
    assert "| `after 1d` |" in spec_page(spec)


def test_the_benchmark_specs_check_clean() -> None:
    """bench/bench_timers.py times these; they must stay valid as the format moves."""
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "bench"))
    try:
        import bench_timers
    finally:
        sys.path.remove(str(root / "bench"))
    timed = checked_text(bench_timers.with_timers((root / "bench" / "agent_run_v1.yaml")
                                                  .read_text()))
    assert timed is not None and len(timed.timers()) == 2
    assert any(t.history == "deep" for t in timed.transitions())
    big = checked_text(bench_timers.big_with_timers(100))
    assert big is not None and len(big.timers()) == 200


def test_an_upgrade_renames_a_timers_event_with_its_state(tmp_path: Path) -> None:
    v1 = """\
statechart: ren
version: 1
initial: asked
states:
  asked:
    on: {answer: done}
    after: {2h: asked}
  done: {final: true}
"""
    v2 = v1.replace("version: 1", "version: 2\nmigrations: [{from_version: 1, states: "
                    "{asked: waiting}}]").replace("asked", "waiting").replace(
                        "{waiting: waiting}", "{asked: waiting}")
    old, new = module_of(v1, tmp_path, "ren1"), module_of(v2, tmp_path, "ren2")
    clock = Clock()
    run = old.Ren(clock=clock)
    clock.advance(dt.timedelta(hours=3))
    assert run.fire_due() == ["after.delay1.asked"]
    upgraded = new.RenRecord.from_json(run.record.to_json())
    assert [s.event.value for s in upgraded.history] == ["after.delay1.waiting"]
    assert upgraded.createdAt == T0
    # Re-armed by the step, at its due time (T0 + 2h), for 2h more.
    assert [(t.event.value, t.due) for t in upgraded.timers] == [
        ("after.delay1.waiting", T0 + dt.timedelta(hours=4))]
