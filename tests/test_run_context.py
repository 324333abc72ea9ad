"""Run context (`context:`, `default:`, `clear:`, a migration's `fill:`) and the status
vocabulary (`status:`, `counter:`) on a generated module: tests/golden/context/spec.yaml."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_spec, checked_text, generate, import_source
from hypothesis import given, settings
from hypothesis import strategies as st

from statechart_runtime.errors import InvalidRecord, MissingField, StatechartError

SPEC = Path(__file__).parent / "golden" / "context" / "spec.yaml"
T0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def mod(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = generate(checked_spec(SPEC))
    return import_source(out["generated/ctx_run.py"], tmp_path_factory.mktemp("ctx"), "ctx")


def clock() -> Any:
    times = iter(T0 + dt.timedelta(seconds=i) for i in range(10_000))
    return lambda: next(times)


def test_context_at_creation_and_update(mod: ModuleType) -> None:
    run = mod.CtxRun(threadId="t-1", field_model="m-1", clock=clock())
    assert (run.record.threadId, run.record.field_model) == ("t-1", "m-1")
    assert run.record.priority is mod.CtxRunPriority.normal  # its default
    assert run.record.budget == 2.5 and run.record.startedAt == T0.replace(year=2024)
    before = run.record.lastTransitionAt
    run.update(threadId="t-2", approvalId=None)  # None for an unset value does not raise
    run.update(threadId=None)  # None unsets
    assert run.record.threadId is None and run.record.history == []
    assert run.record.lastTransitionAt == before  # an update is not a transition
    data = json.loads(run.record.to_json())
    assert "threadId" not in data and data["model"] == "m-1"
    with pytest.raises(TypeError, match="expected a string"):
        run.update(threadId=3)
    with pytest.raises(TypeError, match="not a run-context field"):
        run.update(priority=mod.CtxRunPriority.high)  # set by events only
    with pytest.raises(TypeError, match="not a run-context field"):
        mod.CtxRun(interruptReason="x")
    with pytest.raises(TypeError, match="restored run's context"):
        mod.CtxRun(run.record, threadId="t")


def test_update_is_all_or_nothing_and_respects_requires(mod: ModuleType) -> None:
    run = mod.CtxRun(clock=clock())
    run.start()
    run.interrupt(interruptReason="risky")
    with pytest.raises(MissingField, match="approvalId"):
        run.ask()  # waiting_for_approval requires the approval id
    run.update(approvalId="a-1")
    run.ask()
    assert run.status is mod.CtxRunStatus.waiting  # nested in interrupted, reported exactly
    assert [s.value for s in run.configuration] == ["interrupted", "waiting_for_approval"]
    with pytest.raises(MissingField, match="cannot be unset"):
        run.update(threadId="t", approvalId=None)
    assert run.record.threadId is None and run.record.approvalId == "a-1"  # nothing changed


def test_clear_on_exit_and_on_transition(mod: ModuleType) -> None:
    run = mod.CtxRun(clock=clock())
    run.start()
    run.interrupt(interruptReason="risky")
    run.update(approvalId="a-1")
    run.ask()
    run.approve()  # leaving waiting_for_approval clears approvalId; approve clears the reason
    assert run.record.approvalId is None and run.record.interruptReason is None
    assert run.status is mod.CtxRunStatus.running
    again = mod.CtxRunRecord.from_json(run.record.to_json())
    assert again == run.record


def test_counter_and_status_in_the_record(mod: ModuleType) -> None:
    run = mod.CtxRun(clock=clock())
    run.start()
    for attempt in (1, 2):
        run.error()
        assert run.status is mod.CtxRunStatus.retrying and run.record.retryCount == attempt
        run.retry()
    data = json.loads(run.record.to_json())
    assert data["status"] == "running" and data["retryCount"] == 2
    assert data["counts"] == {"retrying": 2}
    run.finish()
    assert run.status is mod.CtxRunStatus.completed


def tampered(mod: ModuleType, data: dict[str, Any], **changes: Any) -> str:
    bad = {**data, **changes}
    with pytest.raises(InvalidRecord) as info:
        mod.CtxRunRecord.from_dict(bad)
    return str(info.value)


def test_the_integrity_check_replays_defaults_and_clears(mod: ModuleType) -> None:
    run = mod.CtxRun(clock=clock())
    run.start()
    run.interrupt(interruptReason="risky")
    run.update(approvalId="a-1")
    run.ask()
    run.approve()
    data = json.loads(run.record.to_json())
    assert "history[3] clears it" in tampered(mod, data, interruptReason="risky")
    assert "its default" in tampered(mod, {k: v for k, v in data.items() if k != "priority"})
    assert "its default" in tampered(mod, data, priority="high")
    assert "reports `running`" in tampered(mod, data, status="waiting")
    assert "unknown status" in tampered(mod, data, status="nowhere")
    assert "retryCount" in tampered(mod, data, retryCount=1)
    # Run context is the application's: any value of its type is accepted.
    assert mod.CtxRunRecord.from_dict({**data, "threadId": "anything"}).threadId == "anything"
    assert "threadId" in tampered(mod, data, threadId=5)


def test_a_failed_transition_clears_nothing(mod: ModuleType) -> None:
    class Refusing(mod.CtxRun):  # type: ignore[misc, name-defined]
        def on_enter_running(self) -> None:
            raise RuntimeError("refused")

    run = mod.CtxRun(clock=clock())
    run.start()
    run.interrupt(interruptReason="risky")
    run.update(approvalId="a-1")
    run.ask()
    broken = Refusing.restore(mod.CtxRunRecord.from_json(run.record.to_json()))
    with pytest.raises(RuntimeError):
        broken.approve()
    assert broken.record.approvalId == "a-1" and broken.record.interruptReason == "risky"
    assert broken.status is mod.CtxRunStatus.waiting


V1 = """\
statechart: fill
version: 1
initial: open
record:
  note: {type: string}
states:
  open: {on: {work: working, hold: {target: held, set: [note]}}}
  working: {on: {done: closed}}
  held: {on: {done: closed}}
  closed: {final: true}
"""
V2 = """\
statechart: fill
version: 2
initial: open
record:
  note: {type: string}
  priority: {enum: [low, normal], default: normal}
  owner: {type: string, context: true, default: nobody}
states:
  open: {on: {work: working, hold: {target: held, set: [note]}}}
  working:
    requires: [priority, owner]
    status: busy
    counter: workCount
    on: {done: closed}
  held: {on: {done: {target: closed, clear: [note]}}}
  closed: {final: true}
migrations:
  - from_version: 1
    fill: [priority, owner]
"""


def test_a_migration_fills_fields_that_became_required(tmp_path: Path) -> None:
    modules = []
    for i, text in enumerate((V1, V2)):
        spec = checked_text(text)
        assert spec is not None
        modules.append(import_source(generate(spec)["generated/fill.py"], tmp_path, f"fill{i}"))
    old, new = modules
    run = old.Fill(clock=clock())
    run.work()
    upgraded = new.FillRecord.from_json(run.record.to_json())
    assert upgraded.priority is new.FillPriority.normal and upgraded.owner == "nobody"
    assert upgraded.status is new.FillStatus.busy and upgraded.workCount == 1
    assert new.Fill.restore(upgraded).status is new.FillStatus.busy
    held = old.Fill(clock=clock())
    held.hold(note="n")
    held.done()  # v1 did not clear the note; v2 replays a clear: the old record is refused
    with pytest.raises(InvalidRecord, match="note"):
        new.FillRecord.from_json(held.record.to_json())


EVENTS = ("start", "event_update", "interrupt", "error", "finish", "bump", "ask", "approve",
          "retry")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(EVENTS), st.booleans(), st.booleans(),
                          st.sampled_from([None, "a", "b"])), max_size=25))
def test_random_runs_with_updates_always_round_trip(mod: ModuleType,
                                                    steps: list[tuple[str, bool, bool,
                                                                      str | None]]) -> None:
    """Events and context updates in any order: every record a run writes is read back
    equal, restores to the same status, and a non-context value changed behind the run's
    back is refused."""
    run = mod.CtxRun(clock=clock())
    rng = random.Random(len(steps))
    for event, update_first, restore, value in steps:
        if update_first:
            try:
                run.update(approvalId=value, threadId=value)
            except MissingField:
                pass
        kwargs: dict[str, Any] = {"interrupt": {"interruptReason": "r"},
                                  "bump": {"priority": rng.choice(list(mod.CtxRunPriority))}
                                  }.get(event, {})
        try:
            getattr(run, event)(**kwargs)
        except StatechartError:
            pass
        text = run.record.to_json()
        again = mod.CtxRunRecord.from_json(text)
        assert again == run.record
        assert again.status is mod.CtxRun._sc_spec.reported(
            [s.value for s in run.configuration])
        if restore:
            run = mod.CtxRun.restore(again, clock=clock())
    data = json.loads(run.record.to_json())
    if data["priority"] == "normal":
        with pytest.raises(InvalidRecord):
            mod.CtxRunRecord.from_dict({**data, "priority": "high"})


def test_the_run_store_finds_runs_by_reported_status(mod: ModuleType, tmp_path: Path) -> None:
    from statechart_runtime.store_sqlite import SqliteStore

    with SqliteStore(tmp_path / "runs.db") as store:
        waiting = mod.CtxRun(run_id="w", threadId="t", clock=clock())
        waiting.start()
        waiting.interrupt(interruptReason="risky")
        waiting.update(approvalId="a")
        waiting.ask()
        store.create(waiting)
        store.create(mod.CtxRun(run_id="c", clock=clock()))
        assert store.find(mod.CtxRun, status=mod.CtxRunStatus.waiting) == ["w"]
        assert store.find(mod.CtxRun, status="created") == ["c"]
        assert store.find(mod.CtxRun, state="interrupted") == ["w"]
        with pytest.raises(ValueError, match="no status"):
            store.find(mod.CtxRun, status="suspended")  # a state, not a status
        loaded = store.load(mod.CtxRun, "w")
        assert loaded.record.threadId == "t" and loaded.status is mod.CtxRunStatus.waiting
