"""The run store under faults, on every backend: 8 worker processes firing conflicting events
at shared runs, and PostgreSQL restarted while they run. What must hold: every accepted event
is in exactly one history, no refused one is in any, every stored history replays to its
stored state (a full check, as `store.load` does), and a retried event (the same idempotency
key) is applied once. (A worker killed in the middle of a transaction: tests/test_store.py.)

Then the errors a driver raises, each of which a caller must see as a documented StoreError
with the same store object still usable afterwards: a run id created twice at once, values
the database cannot hold, a full disk, a connection cut in the middle of a call.

The SQLite file of the concurrency test is in /dev/shm when there is one: fsync is free
there, so 4,000 serialized commits take seconds, not a minute; the locking is SQLite's all
the same. The PostgreSQL test servers run with fsync off for the same reason."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import random
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg
import pytest
from pg_server import Server
from store_support import TICKET_MODULE, Backend, assert_usable, import_path, intercept, timed

from statechart_runtime.errors import (
    OutcomeUnknown,
    RunIdTaken,
    RunNotFound,
    StoreFull,
    StoreUnavailable,
    UnstorableValue,
)
from statechart_runtime.run import EventNotAccepted
from statechart_runtime.store import RunStore, open_store

WORKERS = 8
RUNS = 50
EVENTS = 4000
RESTART_EVENTS = 1600  # fewer: the restart test starts a server of its own, and waits for it


def _opened(url: str) -> Any:
    """The store, opened as a supervised worker process opens it: opening fails at once when
    the server is away (StoreUnavailable, documented), and the process tries again. A worker
    that starts late may open it while the restart test's server is restarting."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return open_store(url, timeout=60)
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _worker(module_path: str, url: str, run_ids: list[str], worker: int, count: int
            ) -> tuple[list[str], int, int]:
    """Fire `count` random events at the shared runs: (notes of those accepted, how many were
    refused, how many repeats were applied again: must be 0)."""
    module = import_path(Path(module_path), TICKET_MODULE)
    store = _opened(url)
    rng = random.Random(worker)
    accepted, refused, doubled = [], 0, 0
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
            doubled += store.fire(module.Ticket, run_id, event, idempotency_key=note,
                                  note=note).applied
    store.close()
    return accepted, refused, doubled


def _create_runs(store: RunStore, ticket: ModuleType) -> list[str]:
    run_ids = []
    for _ in range(RUNS):
        store.create(run := ticket.Ticket())
        run_ids.append(run.record.runId)
    return run_ids


def _check_nothing_lost(store: RunStore, ticket: ModuleType, run_ids: list[str],
                        results: list[tuple[list[str], int, int]], events: int) -> None:
    accepted = [note for notes, _, _ in results for note in notes]
    assert sum(len(notes) + refused for notes, refused, _ in results) == events
    assert sum(refused for _, refused, _ in results) > 0  # the workers did conflict
    assert sum(doubled for _, _, doubled in results) == 0
    rows = [row for run_id in run_ids for row in store.history(run_id)]
    # Every accepted event is in exactly one history row, and no row is of a refused one.
    assert sorted(row.values["note"] for row in rows) == sorted(accepted)
    for run_id in run_ids:
        loaded = store.load(ticket.Ticket, run_id)  # replays the whole history, or refuses
        assert [(s.event.value, s.source.value, s.target.value, s.values)
                for s in loaded.record.history] == [
            (r.event, r.source, r.target, r.values) for r in store.history(run_id)]
        assert store.find(ticket.Ticket, status=loaded.status).count(run_id) == 1


def _run_workers(ticket_path: Path, url: str, run_ids: list[str], events: int
                 ) -> multiprocessing.pool.AsyncResult[list[tuple[list[str], int, int]]]:
    pool = multiprocessing.get_context("spawn").Pool(WORKERS)
    result = pool.starmap_async(_worker, [(str(ticket_path), url, run_ids, w, events // WORKERS)
                                          for w in range(WORKERS)])
    pool.close()
    return result


# The two long fault runs are `slow` (`pytest -m slow`, a CI step of its own); the default run
# keeps the tests below them (many processes at once, a connection cut).
@pytest.mark.slow
@pytest.mark.sync_only("its processes fire through the synchronous store (a spawned "
                       "process does not see the asynchronous variant's patch)")
def test_eight_workers_firing_at_shared_runs_lose_nothing(
        ticket: ModuleType, ticket_path: Path, backend: Backend, tmp_path: Path) -> None:
    url = backend.url
    if backend.name == "sqlite" and Path("/dev/shm").is_dir():
        shm = Path("/dev/shm") / f"statechart-test-{tmp_path.name}-{time.time_ns()}.db"
        url = f"sqlite:///{shm}"
    try:
        store = open_store(url)
        run_ids = _create_runs(store, ticket)
        results = _run_workers(ticket_path, url, run_ids, EVENTS).get(timeout=300)
        _check_nothing_lost(store, ticket, run_ids, results, EVENTS)
    finally:
        if url != backend.url:
            for suffix in ("", "-wal", "-shm"):
                Path(url.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)


@pytest.mark.slow
def test_workers_reconnect_when_postgresql_restarts(
        ticket: ModuleType, ticket_path: Path, own_postgres: Server) -> None:
    store = open_store(own_postgres.url)
    run_ids = _create_runs(store, ticket)
    store.close()
    result = _run_workers(ticket_path, own_postgres.url, run_ids, RESTART_EVENTS)
    busy: list[bool] = []

    def restart_when_busy() -> None:
        with psycopg.connect(own_postgres.url, autocommit=True) as db:
            while db.execute("SELECT count(*) FROM history").fetchone()[0] < 200:
                time.sleep(0.05)  # until the workers are well under way
        busy.append(not result.ready())
        own_postgres.restart()

    thread = threading.Thread(target=restart_when_busy)
    thread.start()
    results = result.get(timeout=300)
    thread.join()
    assert busy == [True]  # the server went down while the workers were firing
    log = (own_postgres.folder / "log").read_text(encoding="utf-8", errors="replace")
    assert "received fast shutdown request" in log
    _check_nothing_lost(open_store(own_postgres.url), ticket, run_ids, results, RESTART_EVENTS)


@pytest.mark.sync_only("its processes fire through the synchronous store (a spawned "
                       "process does not see the asynchronous variant's patch)")
def test_one_key_fired_from_many_processes_at_once_is_applied_once(
        ticket: ModuleType, ticket_path: Path, backend: Backend) -> None:
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        applied = pool.starmap(_fire_once, [(str(ticket_path), backend.url, run_id)] * 4)
    assert sorted(applied) == [False, False, False, True]
    assert [r.values for r in store.history(run_id)] == [{"note": "once"}]


def _fire_once(module_path: str, url: str, run_id: str) -> Any:
    module = import_path(Path(module_path), TICKET_MODULE)
    with open_store(url) as store:
        return store.fire(module.Ticket, run_id, "approve", idempotency_key="the-one",
                          note="once").applied


def test_a_connection_cut_before_the_commit_is_retried_only_when_that_is_safe(
        ticket: ModuleType, pg_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server ends the connection of a `fire` that has written but not committed (as a
    restart or a network cut would). With an idempotency key, `fire` reconnects and applies
    the event once; without one, it cannot tell whether the commit happened and says so."""
    store = open_store(pg_backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    write = RunStore._write
    cuts = []

    def write_then_cut(self: RunStore, db: Any, *args: Any, **kwargs: Any) -> int:
        revision = write(self, db, *args, **kwargs)
        if not cuts:  # once: the retry goes through
            pid = db.execute("SELECT pg_backend_pid()").fetchone()[0]
            with psycopg.connect(pg_backend.url, autocommit=True) as admin:
                # Waits (up to 10 s) until the backend is gone: PostgreSQL 14 and later.
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
            cuts.append(pid)
        return revision

    monkeypatch.setattr(RunStore, "_write", write_then_cut)
    fired = store.fire(ticket.Ticket, run_id, "approve", idempotency_key="k", note="once")
    assert fired.applied and len(cuts) == 1
    assert [r.values for r in store.history(run_id)] == [{"note": "once"}]
    cuts.clear()
    with pytest.raises(OutcomeUnknown, match="whether the change was stored is unknown"):
        store.fire(ticket.Ticket, run_id, "reopen", note="unkeyed")
    assert [r.values for r in store.history(run_id)] == [{"note": "once"}]  # rolled back
    assert store.fire(ticket.Ticket, run_id, "reopen", note="then").revision == 3
    # The same cut in the middle of a worker's `fire_next_due` (no key: it cannot be
    # repeated blindly): the documented OutcomeUnknown, then the store reconnects.
    timed_ticket = timed(ticket)
    store.create(due := timed_ticket())
    later = due.record.lastTransitionAt + dt.timedelta(hours=2)
    cuts.clear()
    with pytest.raises(OutcomeUnknown, match="load the run to see"):
        store.fire_next_due(timed_ticket, later)
    assert len(cuts) == 1
    monkeypatch.setattr(RunStore, "_write", write)
    assert store.history(due.record.runId) == []  # the cut transaction was rolled back
    # Cut earlier, right after the claim and before anything was written: nothing can have
    # been committed, so the store reconnects and runs the transaction again, unseen.
    fire_due = RunStore._fire_due
    cuts.clear()

    def cut_then_fire_due(self: RunStore, *args: Any, **kwargs: Any) -> Any:
        if not cuts:
            pid = args[-1].execute("SELECT pg_backend_pid()").fetchone()[0]  # its connection
            with psycopg.connect(pg_backend.url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
            cuts.append(pid)
        return fire_due(self, *args, **kwargs)

    monkeypatch.setattr(RunStore, "_fire_due", cut_then_fire_due)
    fired = store.fire_next_due(timed_ticket, later)
    assert fired is not None and fired.events == ["deny"] and len(cuts) == 1
    assert [r.values for r in store.history(due.record.runId)] == [{"note": "timeout"}]
    assert_usable(store, ticket)


def test_a_connection_lost_right_after_the_commit_is_a_success_applied_once(
        ticket: ModuleType, pg_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server confirms a `fire`'s COMMIT (as the store leaves pipeline mode: its Sync
    brings the COMMIT's outcome) and then ends the connection (a restart right after the
    commit). The event is stored: `fire` returns it as applied, does not apply it again (no
    idempotency key here), and the next call reconnects."""
    store = open_store(pg_backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    leave = psycopg.Pipeline.__exit__
    cuts: list[int] = []

    def leave_then_cut(self: psycopg.Pipeline, *exc: Any) -> None:
        info = self._conn.info
        leave(self, *exc)
        if armed and not cuts and info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            pid = info.backend_pid
            with psycopg.connect(pg_backend.url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
            cuts.append(pid)

    monkeypatch.setattr(psycopg.Pipeline, "__exit__", leave_then_cut)
    armed = True
    fired = store.fire(ticket.Ticket, run_id, "approve", note="once")
    armed = False
    assert fired.applied and len(cuts) == 1
    assert [r.values for r in store.history(run_id)] == [{"note": "once"}]
    assert store.fire(ticket.Ticket, run_id, "reopen", note="then").revision == 3
    assert_usable(store, ticket)


@pytest.mark.sync_only("holds the synchronous driver's write between its INSERT and its COMMIT")
def test_a_run_id_created_twice_at_once_is_run_id_taken(ticket: ModuleType,
                                                        backend: Backend) -> None:
    """The loser of two `create`s of one id is told so (RunIdTaken), on PostgreSQL too, where
    its INSERT waits for the winner's uncommitted key and fails once the winner commits, at a
    later statement of its pipeline; and its store object goes on working."""
    # SQLite connections stay in the thread that opened them: each thread opens its own.
    inserted, go = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    def create_and_wait() -> None:
        winner = open_store(backend.url)
        write = winner._write

        def write_and_wait(db: Any, *args: Any, **kwargs: Any) -> int:
            revision = write(db, *args, **kwargs)
            db.execute("SELECT 1").fetchone()  # the INSERT has reached the database
            inserted.set()
            assert go.wait(30)
            return revision

        winner._write = write_and_wait  # type: ignore[method-assign]
        winner.create(ticket.Ticket(run_id="same"))
        winner.close()

    loser = open_store(backend.url)

    def create_too() -> None:
        try:
            loser.create(ticket.Ticket(run_id="same"))
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    first = threading.Thread(target=create_and_wait)
    first.start()
    assert inserted.wait(30)
    if backend.name == "postgres":  # (SQLite: the loser's thread must open its own store)
        second = threading.Thread(target=create_too)
    else:
        loser.close()

        def create_too_in_thread() -> None:
            nonlocal loser
            loser = open_store(backend.url)
            create_too()
            loser.close()

        second = threading.Thread(target=create_too_in_thread)
    second.start()
    if backend.name == "postgres":  # the loser's INSERT waits for the winner's key
        with psycopg.connect(backend.url, autocommit=True) as admin:
            for _ in range(300):
                if admin.execute("SELECT count(*) FROM pg_stat_activity WHERE "
                                 "wait_event_type = 'Lock'").fetchone()[0]:
                    break
                time.sleep(0.01)
    else:  # the loser waits for the write lock
        time.sleep(0.2)
    go.set()
    first.join(30)
    second.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], RunIdTaken), outcome
    assert "already in the store" in str(outcome[0]) and outcome[0].run_id == "same"
    if backend.name == "sqlite":
        loser = open_store(backend.url)
    assert loser.load(ticket.Ticket, "same").record.runId == "same"
    assert_usable(loser, ticket)
    with pytest.raises(RunIdTaken):  # and sequentially, the same error
        loser.create(ticket.Ticket(run_id="same"))
    assert_usable(loser, ticket)


def test_values_the_database_cannot_hold_are_refused_cleanly(ticket: ModuleType,
                                                            backend: Backend) -> None:
    """A string with a lone surrogate (no UTF-8 for it), and on PostgreSQL a NUL character
    in a column or a run id too long for the index: UnstorableValue, nothing written, the
    store usable. SQLite holds the NUL and the long id: they round-trip."""
    store = open_store(backend.url)
    with pytest.raises(UnstorableValue, match="change the value"):
        store.create(ticket.Ticket(run_id="bad\ud800id"))
    assert_usable(store, ticket)
    store.create(run := ticket.Ticket())
    with pytest.raises(UnstorableValue, match="lone surrogates"):
        store.fire(ticket.Ticket, run.record.runId, "approve", note="bad\udfffnote")
    assert store.history(run.record.runId) == []
    assert_usable(store, ticket)
    for run_id in ("nul\x00id", "x" * 1_000_000):
        if backend.name == "postgres":
            with pytest.raises(UnstorableValue):
                store.create(ticket.Ticket(run_id=run_id))
            # Looked up, the long id is simply not there; the NUL one cannot even be asked.
            with pytest.raises(UnstorableValue if "\x00" in run_id else RunNotFound):
                store.load(ticket.Ticket, run_id)
        else:
            store.create(ticket.Ticket(run_id=run_id))
            assert store.fire(ticket.Ticket, run_id, "approve", note="n").revision == 2
            assert store.load(ticket.Ticket, run_id).record.runId == run_id
        assert_usable(store, ticket)
    # A NUL inside a value is stored as JSON keeps it (an escape): both backends hold it.
    store.create(nul := ticket.Ticket())
    store.fire(ticket.Ticket, nul.record.runId, "approve", note="a\x00b")
    assert store.load(ticket.Ticket, nul.record.runId).record.note == "a\x00b"


def test_a_full_sqlite_database_is_store_full(ticket: ModuleType, tmp_path: Path) -> None:
    """SQLite's "database or disk is full", from a real size limit (PRAGMA max_page_count on
    the store's connection: a disk that has a few pages left): StoreFull, nothing of the
    call stored, and the calls that fit go on working."""
    store = open_store(tmp_path / "runs.db")
    store.create(run := ticket.Ticket())
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages + 40}")
    with pytest.raises(StoreFull, match="free space"):
        store.fire(ticket.Ticket, run.record.runId, "approve", note="x" * 1_000_000)
    assert store.history(run.record.runId) == []
    assert_usable(store, ticket)
    with pytest.raises(StoreFull):
        store.create(ticket.Ticket(run_id="y" * 1_000_000))
    assert_usable(store, ticket)


def test_a_fire_that_waited_for_the_run_checks_what_the_other_committed(
        ticket: ModuleType, pg_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    # Store `a` fires `approve` and holds the run's row until released; store `b` fires
    # `close` meanwhile and waits for the row. Its SELECT ... FOR UPDATE then sees `a`'s
    # row; the run_states rows and the last step its head is checked against must be `a`'s
    # too (read by a statement that starts after the wait), or `b` refuses a healthy run.
    a, b = open_store(pg_backend.url), open_store(pg_backend.url)
    a.create(run := ticket.Ticket())
    run_id = run.record.runId
    holding, release = threading.Event(), threading.Event()

    def held(sql: str, args: Any, execute: Any) -> Any:
        if sql == a.sql.insert_step:
            holding.set()
            release.wait(30)
        return execute(sql, args)

    intercept(a, held)
    outcome: dict[str, Any] = {}

    def fire(store: RunStore, event: str, **values: Any) -> None:
        try:
            outcome[event] = store.fire(ticket.Ticket, run_id, event, **values)
        except Exception as exc:  # reported below, with the test's assertion
            outcome[event] = exc

    first = threading.Thread(target=fire, args=(a, "approve"), kwargs={"note": "yes"})
    first.start()
    assert holding.wait(30), outcome
    second = threading.Thread(target=fire, args=(b, "close"))
    second.start()
    holder = a._db.info.backend_pid
    with psycopg.connect(pg_backend.url, autocommit=True) as watch:
        deadline = time.monotonic() + 30
        while not watch.execute("SELECT count(*) FROM pg_stat_activity WHERE %s = ANY("
                                "pg_blocking_pids(pid))", (holder,)).fetchone()[0]:
            assert time.monotonic() < deadline, "b never waited for the run's row"
            time.sleep(0.01)
    release.set()
    first.join(30)
    second.join(30)
    assert outcome["approve"].revision == 2, outcome
    assert outcome["close"].revision == 3, outcome  # not an InvalidRecord
    assert [r.target for r in b.history(run_id)] == ["approved", "closed"]
    a.close()
    b.close()


def test_a_connection_lost_after_the_server_committed_but_before_the_store_read_it(
        ticket: ModuleType, pg_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server has committed a `fire` (another connection sees its step), and the
    connection is cut before the store leaves pipeline mode, where it reads the COMMIT's
    outcome: without a key that is OutcomeUnknown (never a silent success, never a second
    apply); with one, the retry finds the key and reports the event applied once."""
    store = open_store(pg_backend.url)
    store.create(run := ticket.Ticket())
    run_id = run.record.runId
    watcher = open_store(pg_backend.url)
    leave = psycopg.Pipeline.__exit__
    cuts: list[int] = []
    steps = [1]  # the steps the run should have once the fire under way committed
    polling: list[bool] = []  # the watcher's own pipelines are left as they are

    def cut_then_leave(self: psycopg.Pipeline, *exc: Any) -> None:
        if armed and not cuts and not polling and exc[0] is None:
            polling.append(True)
            deadline = time.monotonic() + 2
            while len(watcher.history(run_id)) < steps[0] and time.monotonic() < deadline:
                time.sleep(0.01)
            if len(watcher.history(run_id)) >= steps[0]:  # committed: the fire's pipeline
                pid = self._conn.info.backend_pid
                with psycopg.connect(pg_backend.url, autocommit=True) as admin:
                    admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
                cuts.append(pid)
            polling.clear()
        leave(self, *exc)

    monkeypatch.setattr(psycopg.Pipeline, "__exit__", cut_then_leave)
    armed = True
    with pytest.raises(OutcomeUnknown, match="whether the change was stored is unknown"):
        store.fire(ticket.Ticket, run_id, "approve", note="once")
    assert len(cuts) == 1
    assert [r.values for r in watcher.history(run_id)] == [{"note": "once"}]  # committed
    cuts.clear()
    steps[0] = 2
    fired = store.fire(ticket.Ticket, run_id, "reopen", idempotency_key="k", note="keyed")
    armed = False
    assert fired.applied and len(cuts) == 1
    assert [r.values for r in store.history(run_id)] == [{"note": "once"}, {"note": "keyed"}]
    again = store.fire(ticket.Ticket, run_id, "reopen", idempotency_key="k", note="keyed")
    assert not again.applied and again.revision == fired.revision
    watcher.close()
    assert_usable(store, ticket)
