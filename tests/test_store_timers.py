"""Timers through the run store on both backends (tests/conftest.py): a timer whose guard
refuses does not starve the others, and one time source per store call (the store's clock,
or the `now`/`at` given), with steps that never go back in time within a run."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from store_support import Backend, Clock, gate_class, import_path

from statechart.cli import main
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return gate_class(tmp_path_factory.mktemp("gate"))


def test_a_refused_timer_does_not_starve_later_ones(gate: type[Any], backend: Backend) -> None:
    """The run due first has a timer whose guard says no; the documented loop still ends,
    and the run due later fires."""
    store = open_store(backend.url)
    store.create(gate(run_id="stubborn", clock=lambda: T0))
    store.create(gate(run_id="later", clock=lambda: T0 + 5 * SECOND))
    now = T0 + 60 * SECOND
    assert store.due(gate, now) == ["stubborn", "later"]
    calls = []
    while (fired := store.fire_next_due(gate, now)) is not None:
        calls.append((fired.run.record.runId, fired.applied, fired.events))
        assert len(calls) < 5, f"the loop does not end: {calls}"
    assert calls == [("stubborn", False, []), ("later", True, ["after.delay1.waiting"])]
    assert store.due(gate, now + 3600 * SECOND) == []
    assert store.find(gate, status="expired") == ["later"]
    stubborn = store.load(gate, "stubborn")  # the declined timer is in the stored record
    assert [t.declined for t in stubborn.timers] == [True]
    assert store.fire(gate, "stubborn", "answer").run.status.value == "done"


def test_the_store_clock_is_the_one_time_source(gate: type[Any], backend: Backend) -> None:
    """Every call not given a time takes the store's clock for its steps, its row times and
    its due query; a time given (`at`, `now`) is used for all three."""
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    store.create(gate(run_id="a", clock=clock))
    store.create(gate(run_id="b", clock=clock))
    [row] = [r for r in store.stored_runs() if r.run_id == "a"]
    assert row.created_at == row.updated_at == T0
    assert store.due(gate) == []  # the store's now, not the wall clock's (2030 is later)
    clock.advance(10 * SECOND)
    fired = store.fire(gate, "a", "answer")
    assert fired.run.record.lastTransitionAt == T0 + 10 * SECOND
    assert [r.at for r in store.history("a")] == [T0 + 10 * SECOND]
    clock.advance(30 * SECOND)
    assert store.due(gate) == ["b"]
    assert store.fire_next_due(gate).events == ["after.delay1.waiting"]
    assert [r.at for r in store.history("b")] == [T0 + 30 * SECOND]  # its due time
    assert {r.run_id: r.updated_at for r in store.stored_runs()} == {
        "a": T0 + 10 * SECOND, "b": T0 + 40 * SECOND}
    # A time given is the call's time, for the row too.
    store.create(gate(run_id="c", clock=clock))
    given = T0 + 3600 * SECOND
    assert store.fire_next_due(gate, given).run.record.runId == "c"
    assert {r.run_id: r.updated_at for r in store.stored_runs()}["c"] == given
    store.create(gate(run_id="d", clock=clock))
    answered = T0 + 50 * SECOND  # before its timer is due (T0 + 70 s)
    store.fire(gate, "d", "answer", at=answered)
    assert [r.at for r in store.history("d")] == [answered]
    assert {r.run_id: r.updated_at for r in store.stored_runs()}["d"] == answered
    # A run the store restores takes the store's clock.
    assert store.load(gate, "d").clock is clock


def test_a_run_made_on_a_fast_clock_and_answered_by_a_slow_one_stays_readable(
        backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    """Created on a machine 10 minutes ahead, answered by one that is right: each step is
    stamped no earlier than the run's last one, so the run loads and `runs verify` passes."""
    agent = import_path(ROOT / "generated" / "agent_run.py", "agent_run")
    ahead, right = Clock(T0 + 600 * SECOND), Clock(T0)
    fast = open_store(backend.url, clock=ahead)
    fast.create(run := agent.AgentRun(clock=ahead))
    run_id = run.record.runId
    fast.fire(agent.AgentRun, run_id, "triage")
    slow = open_store(backend.url, clock=right)
    right.advance(SECOND)
    slow.fire(agent.AgentRun, run_id, "start")
    right.advance(SECOND)
    slow.fire(agent.AgentRun, run_id, "interrupt",
              interruptReason=agent.AgentRunInterruptReason.approval)
    times = [r.at for r in slow.history(run_id)]
    assert times == [T0 + 600 * SECOND] * 3  # never back in time within the run
    loaded = slow.load(agent.AgentRun, run_id)
    assert loaded.record.createdAt == T0 + 600 * SECOND
    assert loaded.status.value == "interrupted"
    # Later, when the slow clock passes the fast one's, steps take its time again.
    right.advance(3600 * SECOND)
    slow.fire(agent.AgentRun, run_id, "resume")
    assert slow.history(run_id)[-1].at == T0 + 3602 * SECOND
    fast.close()
    slow.close()
    code = main(["runs", "verify", "--store", backend.url, "--spec",
                 str(ROOT / "specs" / "agent_run.yaml")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "no problems" in out
