"""Watching the steps of a spec's runs as they commit (part of the conformance suite: every
backend, both APIs): `changes` reads the steps after a position in commit order,
`watch_position` is the end of what committed, `watch` yields them without end. Several
writers at once: every step seen once, each run's in order; on PostgreSQL a step of a
younger transaction waits for the older ones (which may still commit before it), and the
notice every step sends wakes a watch before its poll."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from types import ModuleType
from typing import Any

import psycopg
import pytest
from store_support import Backend, assert_usable, job_class, settled

from statechart_runtime.errors import BadPosition
from statechart_runtime.store import open_async_store, open_store
from statechart_runtime.store import open_store as open_sync_store


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return job_class(tmp_path_factory.mktemp("job"))


def test_changes_are_the_steps_after_a_position_in_commit_order(
        ticket: ModuleType, job: type[Any], backend: Backend) -> None:
    store = open_store(backend.url)
    for run_id in ("a", "b"):
        store.create(ticket.Ticket(run_id=run_id))
    store.create(job(run_id="other-spec"))
    store.fire(job, "other-spec", "start")  # another spec's steps: not the ticket's watch
    store.fire(ticket.Ticket, "b", "approve", note="1")
    store.fire(ticket.Ticket, "a", "deny", note="2")
    store.fire(ticket.Ticket, "b", "close")
    every = settled(store, ticket.Ticket, 3)
    assert [(c.run_id, c.index, c.event, c.source, c.target) for c in every] == [
        ("b", 0, "approve", "open", "approved"), ("a", 0, "deny", "open", "denied"),
        ("b", 1, "close", "approved", "closed")]
    assert every[1].values == {"note": "2"} and every[1].kind is None
    assert every[0].at <= every[1].at <= every[2].at
    # From a change's position: the ones after it; at most `limit`.
    assert store.changes(ticket.Ticket, after=every[0].position) == every[1:]
    assert store.changes(ticket.Ticket, after=every[0].position, limit=1) == every[1:2]
    assert store.changes(ticket.Ticket, after=every[-1].position) == []
    # From now: only what commits later, even on a store opened anew.
    end = store.watch_position()
    assert store.changes(ticket.Ticket, after=end) == []
    open_store(backend.url).fire(ticket.Ticket, "a", "reopen", note="3")
    [later] = settled(store, ticket.Ticket, 1, after=end)
    assert (later.run_id, later.index, later.event) == ("a", 1, "reopen")
    assert [c.event for c in settled(store, job, 1)] == ["start"]


def test_a_position_no_change_gave_is_refused_and_the_store_stays_usable(
        ticket: ModuleType, backend: Backend) -> None:
    store = open_store(backend.url)
    for bad in ("", "later", "1:2", "x:1:a", "1:y:a", f"{2**63}:0:a", f"1:{2**64}:a"):
        with pytest.raises(BadPosition, match="not a watch position: pass a Change's"):
            store.changes(ticket.Ticket, after=bad)
    assert_usable(store, ticket)


def _writers(url: str, ticket: ModuleType, runs: int, steps: int) -> None:
    """`runs` threads, each with a store of its own, firing `steps` steps at its run."""
    def write(run_id: str) -> None:
        store = open_sync_store(url)
        for n in range(steps):
            store.fire(ticket.Ticket, run_id, "approve" if n % 2 == 0 else "reopen",
                       note=str(n))
        store.close()

    threads = [threading.Thread(target=write, args=(f"w{i}",)) for i in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@pytest.mark.sync_only("the test runs a watch of each API itself")
@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_watch_sees_every_step_of_concurrent_writers_once_in_order(
        ticket: ModuleType, backend: Backend, api: str) -> None:
    runs, steps = 4, 25
    with open_store(backend.url) as store:
        for i in range(runs):
            store.create(ticket.Ticket(run_id=f"w{i}"))
        start = store.watch_position()
    seen: list[Any] = []
    done = threading.Event()

    def watch_sync() -> None:
        with open_sync_store(backend.url) as store, contextlib.closing(
                store.watch(ticket.Ticket, after=start, poll=0.05, batch=7)) as changes:
            for change in changes:
                seen.append(change)
                if len(seen) == runs * steps:
                    break
        done.set()

    async def watch_async() -> None:
        store = await open_async_store(backend.url)
        async with contextlib.aclosing(
                store.watch(ticket.Ticket, after=start, poll=0.05, batch=7)) as changes:
            async for change in changes:
                seen.append(change)
                if len(seen) == runs * steps:
                    break
        await store.close()
        done.set()

    watcher = threading.Thread(target=watch_sync if api == "sync" else
                               lambda: asyncio.run(watch_async()), daemon=True)
    watcher.start()
    _writers(backend.url, ticket, runs, steps)
    assert done.wait(60), f"{len(seen)} of {runs * steps} steps seen"
    keys = [(c.run_id, c.index) for c in seen]
    assert sorted(keys) == sorted((f"w{i}", n) for i in range(runs) for n in range(steps))
    for i in range(runs):  # each run's steps in their order, the values with them
        mine = [c for c in seen if c.run_id == f"w{i}"]
        assert [c.index for c in mine] == list(range(steps))
        assert [c.values["note"] for c in mine] == [str(n) for n in range(steps)]
    # Positions only grow: watching on from any of them gives exactly the rest.
    with open_store(backend.url) as store:
        middle = seen[len(seen) // 2]
        rest = store.changes(ticket.Ticket, after=middle.position, limit=1000)
        assert rest == seen[len(seen) // 2 + 1:]


def test_postgres_holds_a_step_back_until_older_transactions_end(
        ticket: ModuleType, pg_backend: Backend) -> None:
    # A transaction that began first may still commit a step before the younger one's: the
    # younger one's step is given once the older one ended, so no position skips a step.
    store = open_store(pg_backend.url)
    store.create(ticket.Ticket(run_id="t"))
    with psycopg.connect(pg_backend.url, autocommit=True) as older:
        older.execute("BEGIN")
        older.execute("SELECT pg_current_xact_id()")  # holds a transaction id
        store.fire(ticket.Ticket, "t", "approve", note="younger")
        assert store.changes(ticket.Ticket) == []
        older.execute("COMMIT")
    assert [c.values["note"] for c in settled(store, ticket.Ticket, 1)] == ["younger"]


def test_postgres_wakes_a_watch_at_the_commit_not_at_its_poll(
        ticket: ModuleType, pg_backend: Backend) -> None:
    store = open_store(pg_backend.url)
    store.create(ticket.Ticket(run_id="n"))
    arrived: list[float] = []

    def watch() -> None:
        with open_store(pg_backend.url) as mine, contextlib.closing(
                mine.watch(ticket.Ticket, poll=60)) as changes:
            for _change in changes:
                arrived.append(time.monotonic())
                break

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(1.0)  # the watch is asleep on its first (empty) read
    fired = time.monotonic()
    store.fire(ticket.Ticket, "n", "approve", note="now")
    watcher.join(30)
    assert arrived and arrived[0] - fired < 10  # its poll is 60 s


def test_a_rewritten_history_comes_again_whole(backend: Backend, tmp_path: Any) -> None:
    # A run upgraded to a newer spec version has its history written anew (delete, insert):
    # a watch past its steps gets all of them again, on every backend. On SQLite the steps'
    # numbers were one more than the highest left, so a rewrite of the last steps reused
    # numbers the watch had passed, and it missed them.
    from test_migrations import ticket_versions
    v1, v2 = ticket_versions(tmp_path, "watch_test")
    store = open_store(backend.url)
    for run_id in ("b", "a"):
        store.create(v1.Ticket(run_id=run_id))
        store.fire(v1.Ticket, run_id, "hold", why="on leave", note="back monday")
    passed = settled(store, v2.Ticket, 2)
    assert [c.run_id for c in passed] == ["b", "a"]
    store.fire(v2.Ticket, "a", "wake")  # upgrades a: its history is written anew
    again = settled(store, v2.Ticket, 2, after=passed[-1].position)
    assert [(c.run_id, c.index, c.event) for c in again] == [("a", 0, "hold"),
                                                            ("a", 1, "wake")]


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_closed_watch_closes_its_listening_connection(
        ticket: ModuleType, pg_backend: Backend, api: str) -> None:
    name = f"watch-{uuid.uuid4().hex[:12]}"  # the server's other tests' connections aside
    url = f"{pg_backend.url}&application_name={name}"

    def listening() -> int:
        with psycopg.connect(pg_backend.url, autocommit=True) as db:
            row = db.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name "
                             "= %s AND query LIKE 'LISTEN statechart_steps%%'", (name,)
                             ).fetchone()
            return int(row[0]) if row else -1

    store = open_store(pg_backend.url)
    store.create(ticket.Ticket(run_id="c"))
    store.fire(ticket.Ticket, "c", "approve", note="1")
    settled(store, ticket.Ticket, 1)
    during: list[int] = []
    if api == "sync":
        with open_sync_store(url) as mine:
            changes = mine.watch(ticket.Ticket, after="start", poll=0.05)
            next(changes)
            during.append(listening())
            changes.close()
    else:
        async def main() -> None:
            mine = await open_async_store(url)
            changes = mine.watch(ticket.Ticket, after="start", poll=0.05)
            await changes.__anext__()
            during.append(listening())
            await changes.aclose()
            await mine.close()
        asyncio.run(main())
    assert during == [1]
    deadline = time.monotonic() + 5
    while listening() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listening() == 0
