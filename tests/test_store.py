"""The SQLite run store (`statechart_runtime.store`), on real database files: round trips,
the lost update it refuses, `fire` from many processes at once, a process killed in the middle
of a transaction, idempotency keys, history and find."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import pickle
import random
import signal
import sqlite3
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from codegen_support import checked_text, generate

from statechart_runtime.errors import ConcurrentUpdate, RunError, RunNotFound, StoreError
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import SCHEMA_VERSION, SqliteStore, open_store

ROOT = Path(__file__).resolve().parents[1]

# A loop with conflicts: from `open`, `approve` and `deny` race; only one of them is taken.
# Every event sets `note`, so each accepted event leaves a token in exactly one history row.
TICKET = """\
statechart: ticket
version: 1
initial: open
record:
  note: {type: string}
states:
  open:
    tags: [waiting]
    on:
      approve: {target: approved, set: [note]}
      deny: {target: denied, set: [note]}
  approved: {on: {reopen: {target: open, set: [note]}, close: closed}}
  denied: {on: {reopen: {target: open, set: [note]}, close: closed}}
  closed: {final: true}
"""


def import_path(path: Path, name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ticket_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = checked_text(TICKET)
    assert spec is not None
    path = tmp_path_factory.mktemp("ticket") / "ticket_store_test.py"
    path.write_bytes(generate(spec)["generated/ticket.py"])
    return path


@pytest.fixture(scope="module")
def ticket(ticket_path: Path) -> ModuleType:
    return import_path(ticket_path, "ticket_store_test")


@pytest.fixture(scope="module")
def ar() -> ModuleType:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def waiting_for_approval(ar: ModuleType) -> Any:
    run = ar.AgentRun()
    run.triage()
    run.start()
    run.interrupt(interruptReason=ar.AgentRunInterruptReason.approval)
    run.await_approval()
    return run


def test_create_load_save_round_trip(ar: ModuleType, tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/runs.db")
    run = waiting_for_approval(ar)
    store.create(run)
    loaded = store.load(ar.AgentRun, run.record.runId)
    assert loaded.record == run.record
    assert loaded.configuration == run.configuration
    loaded.approve()
    assert store.save(loaded) == 2
    again = open_store(tmp_path / "runs.db").load(ar.AgentRun, run.record.runId)
    assert again.record.to_json() == loaded.record.to_json()
    assert [r.event for r in store.history(run.record.runId)] == [
        "triage", "start", "interrupt", "await_approval", "approve"]
    mode = sqlite3.connect(tmp_path / "runs.db").execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)
    with pytest.raises(StoreError, match="already in the store"):
        store.create(run)
    with pytest.raises(RunNotFound):
        store.load(ar.AgentRun, "nobody")


def test_the_second_saver_of_a_lost_update_is_refused(ar: ModuleType, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    open_store(db).create(run := waiting_for_approval(ar))
    run_id = run.record.runId
    one, two = open_store(db), open_store(db)  # two workers
    first, second = one.load(ar.AgentRun, run_id), two.load(ar.AgentRun, run_id)
    first.approve()
    second.deny(cancelReason="too risky")
    one.save(first)
    with pytest.raises(ConcurrentUpdate) as caught:
        two.save(second)
    assert (caught.value.expected, caught.value.found) == (1, 2)
    assert isinstance(caught.value, RunError)
    assert str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)
    stored = open_store(db).load(ar.AgentRun, run_id)
    assert stored.status == ar.AgentRunState.resumed  # the approval, and nothing of the denial
    assert [r.event for r in one.history(run_id)][-1] == "approve"
    # The loser reloads and finds the event refused: nothing is lost silently.
    with pytest.raises(EventNotAccepted):
        two.fire(ar.AgentRun, run_id, "deny", cancelReason="too risky")
    assert open_store(db).load(ar.AgentRun, run_id).record == stored.record


def test_load_refuses_a_run_of_another_spec_or_a_bad_record(ar: ModuleType, ticket: ModuleType,
                                                           tmp_path: Path) -> None:
    store = open_store(tmp_path / "runs.db")
    store.create(run := ticket.Ticket())
    with pytest.raises(ar.AgentRunInvalidRecord, match="a run of 'ticket'"):
        store.load(ar.AgentRun, run.record.runId)
    store.create(other := ar.AgentRun())
    with sqlite3.connect(tmp_path / "runs.db") as db:  # a record written by a newer version
        db.execute("UPDATE runs SET record = replace(record, '\"specVersion\": 1', "
                   "'\"specVersion\": 2') WHERE run_id = ?", (other.record.runId,))
    with pytest.raises(ar.AgentRunInvalidRecord, match="specVersion"):
        store.load(ar.AgentRun, other.record.runId)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    open_store(tmp_path / "runs.db").close()
    with sqlite3.connect(tmp_path / "runs.db") as db:
        db.execute("UPDATE store_meta SET value = ? WHERE key = 'schema_version'",
                   (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer statechart-runtime"):
        open_store(tmp_path / "runs.db")
    with pytest.raises(StoreError, match="only sqlite"):
        open_store("postgresql://localhost/runs")


def test_one_idempotency_key_applies_an_event_once(ticket: ModuleType, tmp_path: Path) -> None:
    store = open_store(tmp_path / "runs.db")
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    first = store.fire(ticket.Ticket, run_id, "approve", idempotency_key="k1", note="ok")
    repeat = store.fire(ticket.Ticket, run_id, "approve", idempotency_key="k1", note="ok")
    assert (first.applied, repeat.applied) == (True, False)
    assert first.revision == repeat.revision == 2
    assert len(store.history(run_id)) == 1
    with pytest.raises(StoreError, match="idempotency key 'k1'"):
        store.fire(ticket.Ticket, run_id, "reopen", idempotency_key="k1", note="x")
    # A refused event changes nothing and does not use up its key.
    with pytest.raises(EventNotAccepted):
        store.fire(ticket.Ticket, run_id, "deny", idempotency_key="k2", note="no")
    assert store.load(ticket.Ticket, run_id).record == first.run.record
    store.fire(ticket.Ticket, run_id, "reopen", note="again")
    assert store.fire(ticket.Ticket, run_id, "deny", idempotency_key="k2", note="no").applied


def test_history_and_find(ticket: ModuleType, tmp_path: Path) -> None:
    store = open_store(tmp_path / "runs.db")
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


def _worker(module_path: str, db: str, run_ids: list[str], worker: int, count: int
            ) -> tuple[list[str], int]:
    """Fire `count` random events at the shared runs; the notes of those accepted."""
    module = import_path(Path(module_path), "ticket_store_test")
    store = open_store(db)
    rng = random.Random(worker)
    accepted, refused = [], 0
    for n in range(count):
        note = f"w{worker}-{n}"
        event = rng.choice(["approve", "deny", "reopen"])
        run_id = rng.choice(run_ids)
        try:
            fired = store.fire(module.Ticket, run_id, event, idempotency_key=note, note=note)
        except EventNotAccepted:
            refused += 1
            continue
        assert fired.applied
        accepted.append(note)
        if n % 10 == 0:  # a retry after a lost reply: applied once
            again = store.fire(module.Ticket, run_id, event, idempotency_key=note, note=note)
            assert not again.applied
    store.close()
    return accepted, refused


def test_fire_from_eight_processes_loses_nothing(ticket: ModuleType, ticket_path: Path,
                                                tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    store = open_store(db)
    run_ids = []
    for _ in range(5):
        store.create(run := ticket.Ticket())
        run_ids.append(run.record.runId)
    workers, count = 8, 150
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        results = pool.starmap(_worker, [(str(ticket_path), db, run_ids, w, count)
                                         for w in range(workers)])
    elapsed = time.monotonic() - started
    accepted = [note for notes, _ in results for note in notes]
    assert sum(len(notes) + refused for notes, refused in results) == workers * count
    assert sum(refused for _, refused in results) > 0  # the workers did conflict
    rows = [row for run_id in run_ids for row in store.history(run_id)]
    # Every accepted event is in exactly one history row, and no row is of a refused one.
    assert sorted(row.values["note"] for row in rows) == sorted(accepted)
    for run_id in run_ids:
        loaded = store.load(ticket.Ticket, run_id)
        stored = ticket.TicketRecord.from_json(loaded.record.to_json())  # replays
        assert [(s.event.value, s.source.value, s.target.value, s.values)
                for s in stored.history] == [
            (r.event, r.source, r.target, r.values) for r in store.history(run_id)]
    assert elapsed < 60, elapsed


def _die_in_the_middle_of_fire(module_path: str, db: str, run_id: str) -> None:
    module = import_path(Path(module_path), "ticket_store_test")
    write_states = SqliteStore._write_states

    def write_then_die(self: SqliteStore, *args: Any) -> None:
        write_states(self, *args)  # the run, its history and its states are written ...
        os.kill(os.getpid(), signal.SIGKILL)  # ... and the process dies before COMMIT

    SqliteStore._write_states = write_then_die  # type: ignore[method-assign]
    open_store(db).fire(module.Ticket, run_id, "reopen", note="lost")


def test_a_process_killed_in_a_transaction_leaves_no_partial_run(
        ticket: ModuleType, ticket_path: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
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
