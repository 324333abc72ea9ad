"""Rows of a run store edited by hand (or damaged), on every backend: a column time the store
cannot have written, a history row whose values are not JSON. Each is named where it is (the
run, the column or `history[i].values`) by the API, the worker skips that run and fires the
others, and `statechart runs` says it in one line: never a raw parse error or a traceback."""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_support import TICKET, Backend, Clock, assert_usable, gate_class
from store_support import timed as timed_class

from statechart.cli import main
from statechart_runtime.errors import DamagedRow, InvalidRecord, TimerFailed
from statechart_runtime.store import open_store
from statechart_runtime.worker import Worker

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return gate_class(tmp_path_factory.mktemp("gate"))


def test_an_unparsable_next_due_names_the_run_and_the_worker_skips_it(
        gate: type[Any], backend: Backend, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    for run_id in ("damaged", "fine"):
        store.create(gate(run_id=run_id, clock=clock))
    backend.execute("UPDATE runs SET next_due = '2000-13-45' WHERE run_id = 'damaged'")
    with pytest.raises(DamagedRow, match=r"'damaged'.*runs\.next_due.*'2000-13-45'") as caught:
        store.next_due(gate)
    assert (caught.value.run_id, caught.value.column) == ("damaged", "runs.next_due")
    with pytest.raises(DamagedRow, match="'damaged'"):
        store.stored_runs()
    worker = Worker(store, gate, listen=False, retry_after=3600)
    with caplog.at_level(logging.ERROR, logger="statechart_runtime.worker"):
        assert worker._sleep_time() == 30.0  # the other run's deadline
    assert any("run damaged: row damaged, skipped" in r.getMessage() for r in caplog.records)
    clock.advance(dt.timedelta(seconds=31))
    assert worker.run_once() == 1 and store.find(gate, status="expired") == ["fine"]
    worker.close()
    store.close()
    code = main(["runs", "list", "--store", backend.url])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "run 'damaged'" in err and "runs.next_due" in err, err


def test_history_values_that_are_not_json_are_named(
        ticket: ModuleType, backend: Backend, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    store.fire(ticket.Ticket, run_id, "deny", note="no")
    store.fire(ticket.Ticket, run_id, "reopen", note="again")
    backend.execute("UPDATE history SET \"values\" = 'not json' WHERE idx = 1")
    with pytest.raises(InvalidRecord, match=r"history\[1\]\.values: the stored values are "
                                            "not JSON") as caught:
        store.load(ticket.Ticket, run_id)
    assert caught.value.field == "history[1].values"
    with pytest.raises(InvalidRecord, match=r"history\[1\]\.values"):
        store.history(run_id)
    assert [h.index for h in store.history(run_id, event="deny")] == [0]  # others read
    assert_usable(store, ticket)
    store.close()
    spec = tmp_path / "ticket.yaml"
    spec.write_text(TICKET)
    code = main(["runs", "verify", "--store", backend.url, "--spec", str(spec)])
    out, err = capsys.readouterr()
    assert code == 1 and err == "", err
    assert f"error[run-unreplayable]: run `{run_id}`" in out and "history[1].values" in out
    code = main(["runs", "show", run_id, "--store", backend.url, "--spec", str(spec)])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert "history[1].values" in err and "Traceback" not in err


def test_a_run_whose_write_is_refused_fails_alone_and_the_next_run_fires(
        ticket: ModuleType, backend: Backend) -> None:
    """The run due first has a `steps` column edited down: its new step's row collides with
    a stored one (a duplicate key, on PostgreSQL met at the commit). That is the run's
    failure (TimerFailed naming it), not the store's: skipped, the next due run fires."""
    timed = timed_class(ticket)
    clock = Clock(T0)
    store = open_store(backend.url, clock=clock)
    store.create(first := timed(clock=clock))
    store.fire(timed, first.record.runId, "deny", note="no")
    store.fire(timed, first.record.runId, "reopen", note="again")  # open: due in an hour
    clock.advance(dt.timedelta(minutes=10))
    store.create(second := timed(clock=clock))
    backend.execute("UPDATE runs SET steps = 0 WHERE run_id = ?", (first.record.runId,))
    clock.advance(dt.timedelta(hours=2))
    with pytest.raises(TimerFailed) as caught:
        store.fire_next_due(timed)
    assert caught.value.run_id == first.record.runId
    worker = Worker(store, timed, listen=False, retry_after=3600)
    assert worker.run_once() == 1 and (worker.fired, worker.failed) == (1, 1)
    assert store.find(timed, status="denied") == [second.record.runId]
    assert store.due(timed) == [first.record.runId]  # nothing of it was saved
    worker.close()
    assert_usable(store, ticket)


def test_a_value_sqlite_refuses_fails_that_run_alone(ticket: ModuleType,
                                                     tmp_path: Path) -> None:
    """A run id of 3000 characters, the connection's length limit (SQLITE_LIMIT_LENGTH)
    lowered below its record's length: its write is refused (UnstorableValue), which is
    TimerFailed for that run, not a store outage."""
    timed = timed_class(ticket)
    clock = Clock(T0)
    store = open_store(tmp_path / "runs.db", clock=clock)
    long_id = "x" * 3000
    store.create(timed(run_id=long_id, clock=clock))
    clock.advance(dt.timedelta(minutes=10))
    store.create(other := timed(clock=clock))
    clock.advance(dt.timedelta(hours=2))
    store._db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 3050)  # type: ignore[attr-defined]
    with pytest.raises(TimerFailed, match="UnstorableValue") as caught:
        store.fire_next_due(timed)
    assert caught.value.run_id == long_id
    assert store.fire_next_due(timed, skip=[long_id]) is not None
    assert store.find(timed, status="denied") == [other.record.runId]


@pytest.mark.parametrize("forged", ["record", "column"])
def test_a_head_that_disagrees_with_its_row_is_refused_before_any_step(
        ticket: ModuleType, backend: Backend, forged: str) -> None:
    # The record says `approved` (or the status column does), the run is `open`: firing
    # `close` (allowed from approved only) must not apply a step the spec forbids.
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    if forged == "record":
        backend.execute("UPDATE runs SET record = replace(record, '\"open\"', '\"approved\"') "
                        "WHERE run_id = ?", (run_id,))
    else:
        backend.execute("UPDATE runs SET status = 'approved' WHERE run_id = ?", (run_id,))
    with pytest.raises(InvalidRecord, match=rf"run '{run_id}'.*status column says .*"
                                            r"`statechart runs verify`"):
        store.fire(ticket.Ticket, run_id, "close")
    assert [r.index for r in store.history(run_id)] == []  # nothing appended
    assert_usable(store, ticket)
    store.close()


# Each edit makes the head disagree with what `fire` reads with it: the run_states rows (what
# find(state=...) answers from), the row's step count, the last stored step's target or time.
HEAD_FORGERIES = {
    "run_states row": ("UPDATE run_states SET state = 'denied' WHERE run_id = ?",
                       r"run_states rows .* say \['denied'\]"),
    "step count": ("UPDATE runs SET steps = steps + 1 WHERE run_id = ?",
                   r"row says 2 steps, the last history row is history\[0\]"),
    "last step deleted": ("DELETE FROM history WHERE run_id = ?",
                          r"row says 1 steps, the history table holds none"),
    "last step's target": ("UPDATE history SET target = 'denied' WHERE run_id = ?",
                           r"last step \(history\[0\]\) went to `denied`"),
    "last step's time": ("UPDATE history SET at = '2000-01-01T00:00:00.000000Z' "
                         "WHERE run_id = ?", r"last step \(history\[0\]\) at 2000-01-01"),
}


@pytest.mark.parametrize("forged", sorted(HEAD_FORGERIES))
def test_a_head_that_disagrees_with_its_states_or_last_step_is_refused(
        ticket: ModuleType, backend: Backend, forged: str) -> None:
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    store.fire(ticket.Ticket, run_id, "approve", note="yes")
    sql, says = HEAD_FORGERIES[forged]
    backend.execute(sql, (run_id,))
    with pytest.raises(InvalidRecord, match=rf"run '{run_id}'.*{says}.*nothing was fired: "
                                            r"`statechart runs verify`"):
        store.fire(ticket.Ticket, run_id, "close")
    with pytest.raises(InvalidRecord, match=says):  # fire_due reads the same head
        store.fire_due(ticket.Ticket, run_id)
    assert store.stored_runs()[0].revision == 2  # nothing fired, nothing written
    assert_usable(store, ticket)
    store.close()


def test_a_missing_run_states_row_comes_back_with_the_next_state_change(
        ticket: Any, tmp_path: Path) -> None:
    """`load` does not check the run_states rows (`fire`'s head check and `runs verify` do).
    A row deleted by hand is written again by the next save that changes the state (the
    rows of the states left are deleted, those of the states entered inserted), so `find`
    sees the run and the next `fire` accepts it."""
    path = tmp_path / "runs.db"
    store = open_store(path)
    store.create(ticket.Ticket(run_id="t"))
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM run_states WHERE run_id = 't'")
    run = store.load(ticket.Ticket, "t")
    run.approve(note="ok")
    store.save(run)
    assert store.find(ticket.Ticket, state="approved") == ["t"]
    assert store.fire(ticket.Ticket, "t", "close").applied
    store.close()
