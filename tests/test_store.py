"""The run store (`statechart_runtime.store`), on real SQLite files and a real PostgreSQL
server (every test runs on both; tests/conftest.py says where the server comes from): round
trips, the lost update it refuses, `fire` from many processes at once, a process killed in
the middle of a transaction, idempotency keys, history and find."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import pickle
import signal
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate
from store_support import TICKET_MODULE, Backend, import_path, timed

from statechart_runtime.errors import (
    ConcurrentUpdate,
    RunError,
    RunNotFound,
    StoreError,
    StoreUnavailable,
)
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import SCHEMA_VERSION, RunStore, open_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def waiting_for_approval(ar: ModuleType) -> Any:
    run = ar.AgentRun()
    run.triage()
    run.start()
    run.interrupt(interruptReason=ar.AgentRunInterruptReason.approval)
    run.await_approval(approvalId="approval-1",
                       approvalDeadline=dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    return run


def test_create_load_save_round_trip(ar: ModuleType, backend: Backend) -> None:
    store = open_store(backend.url)
    run = waiting_for_approval(ar)
    store.create(run)
    loaded = store.load(ar.AgentRun, run.record.runId)
    assert loaded.record == run.record
    assert loaded.configuration == run.configuration
    loaded.approve(approvedBy="alice")
    assert store.save(loaded) == 2
    loaded.proceed()  # saved again from the same object: only the new step is appended
    assert store.save(loaded) == 3
    again = open_store(backend.url).load(ar.AgentRun, run.record.runId)
    assert again.record.to_json() == loaded.record.to_json()
    assert [r.event for r in store.history(run.record.runId)] == [
        "triage", "start", "interrupt", "await_approval", "approve", "proceed"]
    if backend.name == "sqlite":
        path = backend.url.removeprefix("sqlite:///")
        assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with pytest.raises(StoreError, match="already in the store"):
        store.create(run)
    with pytest.raises(RunNotFound):
        store.load(ar.AgentRun, "nobody")
    with pytest.raises(StoreError, match="not created or loaded by a store"):
        store.save(ar.AgentRun())


def test_fire_restores_from_the_head_and_appends(ar: ModuleType, backend: Backend) -> None:
    """`fire` reads the run's head, not its history, and writes only the new steps: what is
    stored is what the same events give in memory, and `load` (which replays) agrees."""
    store = open_store(backend.url)
    store.create(run := waiting_for_approval(ar))
    run_id = run.record.runId
    fired = store.fire(ar.AgentRun, run_id, "approve", approvedBy="alice")
    assert fired.events == ["approve"]
    assert [s.event.value for s in fired.run.record.history] == ["approve"]  # only the new
    fired = store.fire(ar.AgentRun, run_id, "proceed")
    for n in range(6):
        fired = (store.fire(ar.AgentRun, run_id, "call_tool", toolCallId=f"c{n}")
                 if n % 2 == 0 else store.fire(ar.AgentRun, run_id, "tool_result"))
    run.approve(approvedBy="alice")
    run.proceed()
    for n in range(6):
        run.call_tool(toolCallId=f"c{n}") if n % 2 == 0 else run.tool_result()
    loaded = store.load(ar.AgentRun, run_id)
    assert fired.revision == 9
    assert loaded.record.status == run.record.status == fired.run.record.status
    assert [(s.event, s.source, s.target, s.values) for s in loaded.record.history] == [
        (s.event, s.source, s.target, s.values) for s in run.record.history]
    assert store.find(ar.AgentRun, status=run.record.status) == [run_id]
    # A head run fired by `fire` can be saved again: its new steps are appended after the
    # stored ones.
    fired.run.call_tool(toolCallId="c9")
    assert store.save(fired.run) == 10
    assert len(store.load(ar.AgentRun, run_id).record.history) == len(run.record.history) + 1


def test_the_second_saver_of_a_lost_update_is_refused(ar: ModuleType, backend: Backend) -> None:
    db = backend.url
    open_store(db).create(run := waiting_for_approval(ar))
    run_id = run.record.runId
    one, two = open_store(db), open_store(db)  # two workers
    first, second = one.load(ar.AgentRun, run_id), two.load(ar.AgentRun, run_id)
    first.approve(approvedBy="alice")
    second.deny(cancelReason="too risky")
    one.save(first)
    with pytest.raises(ConcurrentUpdate) as caught:
        two.save(second)
    assert (caught.value.expected, caught.value.found) == (1, 2)
    assert isinstance(caught.value, RunError)
    assert str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)
    stored = open_store(db).load(ar.AgentRun, run_id)
    assert stored.status == ar.AgentRunStatus.resumed  # the approval, and nothing of the denial
    assert [r.event for r in one.history(run_id)][-1] == "approve"
    # The loser reloads and finds the event refused: nothing is lost silently.
    with pytest.raises(EventNotAccepted):
        two.fire(ar.AgentRun, run_id, "deny", cancelReason="too risky")
    assert open_store(db).load(ar.AgentRun, run_id).record == stored.record


def test_load_refuses_a_run_of_another_spec_or_a_bad_record(ar: ModuleType, ticket: ModuleType,
                                                           backend: Backend) -> None:
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    with pytest.raises(ar.AgentRunInvalidRecord, match="a run of 'ticket'"):
        store.load(ar.AgentRun, run.record.runId)
    with pytest.raises(ar.AgentRunInvalidRecord, match="a run of 'ticket'"):
        store.fire(ar.AgentRun, run.record.runId, "triage")
    store.create(other := ar.AgentRun())
    backend.execute("UPDATE runs SET record = replace(record, '\"specVersion\": 2', "
                    "'\"specVersion\": 3') WHERE run_id = ?", (other.record.runId,))
    with pytest.raises(ar.AgentRunInvalidRecord, match="specVersion"):
        store.load(ar.AgentRun, other.record.runId)
    # A damaged history row: `load` replays the whole history and refuses it, naming the step.
    store.create(third := waiting_for_approval(ar))
    backend.execute("UPDATE history SET target = 'completed' WHERE run_id = ? AND idx = 1",
                    (third.record.runId,))
    with pytest.raises(ar.AgentRunInvalidRecord, match=r"history\[1\]: the spec has no transition"):
        store.load(ar.AgentRun, third.record.runId)
    backend.execute("UPDATE runs SET record = 'nonsense' WHERE run_id = ?",
                    (third.record.runId,))
    with pytest.raises(ar.AgentRunInvalidRecord, match="not JSON"):
        store.fire(ar.AgentRun, third.record.runId, "approve", approvedBy="alice")


def test_a_newer_schema_is_refused(backend: Backend) -> None:
    open_store(backend.url).close()
    backend.execute("UPDATE store_meta SET value = ? WHERE key = 'schema_version'",
                    (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer statechart-runtime"):
        open_store(backend.url)
    backend.execute("UPDATE store_meta SET value = '1' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="create a new store"):
        open_store(backend.url)


def test_a_closed_store_refuses_every_call_saying_so(ticket: ModuleType,
                                                    backend: Backend) -> None:
    """After `close()` a call is refused with a StoreError that says the store is closed (the
    synchronous store neither reconnects nor names a driver's closed connection); closing
    again is harmless."""
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    store.close()
    for call in (lambda: store.find(ticket.Ticket), lambda: store.create(ticket.Ticket()),
                 lambda: store.fire(ticket.Ticket, run.record.runId, "approve", note="x")):
        with pytest.raises(StoreError, match="the store is closed: nothing was done"):
            call()
    store.close()
    with open_store(backend.url) as again:
        assert again.find(ticket.Ticket) == [run.record.runId]
        assert again.load(ticket.Ticket, run.record.runId).record.note is None


def test_bad_urls_are_store_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unsupported store URL"):
        open_store("mysql://localhost/runs")
    with pytest.raises(StoreError, match="cannot open the run store"):
        open_store(tmp_path / "no such folder" / "runs.db")
    with pytest.raises(StoreUnavailable, match="cannot reach the database"):
        open_store("postgresql://nobody@127.0.0.1:1/runs", timeout=1)


def test_one_idempotency_key_applies_an_event_once(ticket: ModuleType, backend: Backend) -> None:
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    first = store.fire(ticket.Ticket, run_id, "approve", idempotency_key="k1", note="ok")
    repeat = open_store(backend.url).fire(ticket.Ticket, run_id, "approve",
                                          idempotency_key="k1", note="ok")
    assert (first.applied, repeat.applied) == (True, False)
    assert first.revision == repeat.revision == 2
    assert repeat.events == []
    assert len(store.history(run_id)) == 1
    with pytest.raises(StoreError, match="idempotency key 'k1'"):
        store.fire(ticket.Ticket, run_id, "reopen", idempotency_key="k1", note="x")
    # A refused event changes nothing and does not use up its key.
    with pytest.raises(EventNotAccepted):
        store.fire(ticket.Ticket, run_id, "deny", idempotency_key="k2", note="no")
    assert store.load(ticket.Ticket, run_id).record == store.load(ticket.Ticket, run_id).record
    assert store.load(ticket.Ticket, run_id).record.status == ticket.TicketState.approved
    store.fire(ticket.Ticket, run_id, "reopen", note="again")
    assert store.fire(ticket.Ticket, run_id, "deny", idempotency_key="k2", note="no").applied
    assert [r.event for r in store.history(run_id)] == ["approve", "reopen", "deny"]


def test_history_and_find(ticket: ModuleType, backend: Backend) -> None:
    store = open_store(backend.url)
    ids = []
    for _ in range(3):
        store.create(run := ticket.Ticket())
        ids.append(run.record.runId)
    store.fire(ticket.Ticket, ids[0], "approve", note="a")
    store.fire(ticket.Ticket, ids[1], "deny", note="b")
    store.fire(ticket.Ticket, ids[1], "reopen", note="c")
    assert store.find(ticket.Ticket, status="approved") == [ids[0]]
    assert store.find(ticket.Ticket, state=ticket.TicketState.open) == sorted(ids[1:])
    assert store.find(ticket.Ticket, tag="waiting") == sorted(ids[1:])
    assert store.find(ticket.Ticket, tag="nothing") == []
    rows = store.history(ids[1])
    assert [(r.index, r.event, r.source, r.target, r.values) for r in rows] == [
        (0, "deny", "open", "denied", {"note": "b"}), (1, "reopen", "denied", "open", {"note": "c"})]
    assert store.history(ids[1], event="reopen") == rows[1:]
    assert store.history(ids[1], since=rows[1].at) == rows[1:]
    assert store.history(ids[1], until=rows[1].at) == rows[:1]
    # No timers in this spec: nothing is ever due.
    assert store.due(ticket.Ticket) == []
    assert store.fire_next_due(ticket.Ticket) is None
    assert not store.fire_due(ticket.Ticket, ids[0]).applied


def _die_in_the_middle_of_fire(module_path: str, db: str, run_id: str) -> None:
    module = import_path(Path(module_path), TICKET_MODULE)
    write = RunStore._write

    def write_then_die(self: RunStore, db: Any, *args: Any, **kwargs: Any) -> int:
        revision = write(self, db, *args, **kwargs)  # the run, its history and its states are written ...
        db.execute("SELECT 1").fetchone()  # ... and have reached the server (PostgreSQL pipelines)
        os.kill(os.getpid(), signal.SIGKILL)  # ... and the process dies before COMMIT
        return revision

    RunStore._write = write_then_die  # type: ignore[method-assign]
    open_store(db).fire(module.Ticket, run_id, "reopen", note="lost")


@pytest.mark.sync_only("its processes fire through the synchronous store (a spawned "
                       "process does not see the asynchronous variant's patch)")
def test_a_process_killed_in_a_transaction_leaves_no_partial_run(
        ticket: ModuleType, ticket_path: Path, backend: Backend) -> None:
    db = backend.url
    store = open_store(db)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    store.fire(ticket.Ticket, run_id, "deny", note="first")
    before = store.load(ticket.Ticket, run_id).record.to_json()
    child = multiprocessing.get_context("spawn").Process(
        target=_die_in_the_middle_of_fire, args=(str(ticket_path), db, run_id))
    child.start()
    child.join(30)
    assert child.exitcode == -signal.SIGKILL
    after = open_store(db)
    assert after.load(ticket.Ticket, run_id).record.to_json() == before
    assert [r.event for r in after.history(run_id)] == ["deny"]
    assert after.find(ticket.Ticket, status="denied") == [run_id]
    # The dead writer's lock is gone: the next event goes through.
    assert after.fire(ticket.Ticket, run_id, "reopen", note="next").revision == 3


def test_due_runs_are_found_and_fired_once(ticket: ModuleType, backend: Backend) -> None:
    timed_ticket = timed(ticket)
    store = open_store(backend.url)
    runs = []
    for _ in range(3):
        store.create(run := timed_ticket())
        runs.append(run)
    ids = [run.record.runId for run in runs]
    now = runs[-1].record.lastTransitionAt
    assert store.due(timed_ticket, now) == []
    assert store.fire_next_due(timed_ticket, now) is None
    later = now + dt.timedelta(hours=2)
    assert store.due(timed_ticket, later) == ids  # earliest deadline first
    assert store.due(timed_ticket, later, limit=2) == ids[:2]
    # A run whose timer is not due fires nothing; one that is fires it once.
    assert not store.fire_due(timed_ticket, ids[0], now).applied
    fired = store.fire_due(timed_ticket, ids[0], later)
    assert (fired.applied, fired.events, fired.run.status) == (
        True, ["deny"], ticket.TicketState.denied)
    assert not store.fire_due(timed_ticket, ids[0], later).applied  # no longer due
    claimed = [store.fire_next_due(timed_ticket, later) for _ in range(3)]
    assert [c.run.record.runId if c else None for c in claimed] == [*ids[1:], None]
    assert store.due(timed_ticket, later) == []
    # Reopened, a run is due again an hour after its last transition.
    reopened = store.fire(timed_ticket, ids[0], "reopen", note="again").run
    deadline = reopened.record.lastTransitionAt + dt.timedelta(hours=1)
    assert store.due(timed_ticket, deadline - dt.timedelta(seconds=1)) == []
    assert store.due(timed_ticket, deadline) == [ids[0]]
    assert [r.values["note"] for r in store.history(ids[0])] == ["timeout", "again"]


def _work_due(module_path: str, url: str, now: dt.datetime) -> list[str]:
    timed_ticket = timed(import_path(Path(module_path), TICKET_MODULE))
    fired = []
    with open_store(url) as store:
        while (done := store.fire_next_due(timed_ticket, now)) is not None:
            fired.append(done.run.record.runId)
    return fired


@pytest.mark.sync_only("its processes fire through the synchronous store (a spawned "
                       "process does not see the asynchronous variant's patch)")
def test_workers_claiming_due_runs_fire_each_timer_once(
        ticket: ModuleType, ticket_path: Path, backend: Backend) -> None:
    timed_ticket = timed(ticket)
    store = open_store(backend.url)
    ids = []
    for _ in range(40):
        store.create(run := timed_ticket())
        ids.append(run.record.runId)
    later = run.record.lastTransitionAt + dt.timedelta(hours=2)
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        fired = pool.starmap(_work_due, [(str(ticket_path), backend.url, later)] * 4)
    assert sorted(run_id for worker in fired for run_id in worker) == sorted(ids)
    for run_id in ids:
        assert [r.values["note"] for r in store.history(run_id)] == ["timeout"]
    assert store.due(timed_ticket, later) == []


def test_done_and_history_survive_the_head(backend: Backend, tmp_path: Path) -> None:
    """A run restored from its head (no history read) keeps its remembered states: a deep
    resume fired through the store lands where the same events land in memory, and the
    stored record replays."""
    spec = checked_text((ROOT / "tests" / "cases" / "ok" / "done_and_history.yaml").read_text())
    assert spec is not None
    path = tmp_path / "jobs_store_test.py"
    path.write_bytes(generate(spec)["generated/jobs.py"])
    jobs = import_path(path, "jobs_store_test")
    store = open_store(backend.url)
    store.create(run := jobs.Jobs())
    for event in ("go", "found", "pause", "resume", "fetched"):
        store.fire(jobs.Jobs, run.record.runId, event)
        run.send(event)
    loaded = store.load(jobs.Jobs, run.record.runId)  # replays, checks `remembered` too
    assert [(s.event, s.source, s.target) for s in loaded.record.history] == [
        (s.event, s.source, s.target) for s in run.record.history]
    assert loaded.record.remembered == run.record.remembered != {}
    assert loaded.configuration == run.configuration
    assert [s.value for s in loaded.configuration] == ["work", "summarize"]


def test_a_run_of_an_older_spec_version_is_upgraded_once(backend: Backend,
                                                         tmp_path: Path) -> None:
    """`fire` with the new version's class reads an old run whole, upgrades it through the
    migration, and writes its history back under the new names; later events take the
    fast path (the head), and `load` replays the rewritten history."""
    from test_migrations import ticket_versions
    v1, v2 = ticket_versions(tmp_path, "store_test")
    store = open_store(backend.url)
    store.create(old := v1.Ticket())
    run_id = old.record.runId
    store.fire(v1.Ticket, run_id, "hold", why="on leave", note="back monday")
    fired = store.fire(v2.Ticket, run_id, "wake")
    assert fired.run.status == v2.TicketState.open
    assert [(r.event, r.source, r.target, r.values) for r in store.history(run_id)] == [
        ("hold", "open", "paused", {"reason": "on leave"}), ("wake", "paused", "open", {})]
    store.fire(v2.Ticket, run_id, "hold", reason="again")
    loaded = store.load(v2.Ticket, run_id)
    assert [s.target.value for s in loaded.record.history] == ["paused", "open", "paused"]
    assert loaded.record.counts == {"paused": 2}
    with pytest.raises(v1.TicketInvalidRecord, match="specVersion"):
        store.load(v1.Ticket, run_id)  # the old module does not read the new record


TIMED = """\
statechart: reminder
version: 1
initial: waiting
states:
  waiting:
    on: {answer: done}
    after: {30s: expired}
  expired: {final: true}
  done: {final: true}
"""


def test_generated_timers_are_due_and_fired_through_the_store(backend: Backend,
                                                              tmp_path: Path) -> None:
    spec = checked_text(TIMED)
    assert spec is not None
    path = tmp_path / "reminder_store_test.py"
    path.write_bytes(generate(spec)["generated/reminder.py"])
    reminder = import_path(path, "reminder_store_test")
    store = open_store(backend.url)
    runs = []
    for _ in range(3):
        store.create(run := reminder.Reminder())
        runs.append(run)
    ids = [run.record.runId for run in runs]
    store.fire(reminder.Reminder, ids[2], "answer")  # answered: its timer is disarmed
    now = runs[-1].record.lastTransitionAt
    assert store.due(reminder.Reminder, now) == []
    later = now + dt.timedelta(seconds=31)
    assert store.due(reminder.Reminder, later) == ids[:2]
    fired = [store.fire_next_due(reminder.Reminder, later) for _ in range(3)]
    assert [(f.run.record.runId, f.events) for f in fired if f] == [
        (ids[0], ["after.delay1.waiting"]), (ids[1], ["after.delay1.waiting"])]
    assert fired[2] is None
    assert store.find(reminder.Reminder, status="expired") == sorted(ids[:2])
    assert [r.event for r in store.history(ids[0])] == ["after.delay1.waiting"]
    assert store.load(reminder.Reminder, ids[0]).is_terminated  # replays, timers included
