"""The asynchronous run store (`open_async_store`) as an asyncio service uses it: many tasks
on one store at once, a pool that runs out says so, tasks cancelled at any point leave every
run whole, the synchronous store refuses a running event loop, and the asynchronous worker
(`AsyncWorker`). The store's API itself is the conformance suite's (tests/test_store*.py
run through both APIs)."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import sqlite3
import time
import uuid
import warnings
from types import ModuleType
from typing import Any

import psycopg
import pytest
from store_support import Backend, timed

from statechart_runtime.errors import PoolExhausted
from statechart_runtime.store import (
    AsyncRunStore,
    BlockingInEventLoop,
    open_async_store,
    open_store,
)
from statechart_runtime.worker import AsyncWorker


def test_many_tasks_share_one_store(ticket: ModuleType, backend: Backend) -> None:
    async def main() -> None:
        async with open_async_store(backend.url, pool_size=3) as store:
            assert isinstance(store, AsyncRunStore)
            runs = [ticket.Ticket(run_id=f"r{i}") for i in range(40)]
            await asyncio.gather(*(store.create(run) for run in runs))
            fired = await asyncio.gather(*(
                store.fire(ticket.Ticket, f"r{i}", "approve", idempotency_key="k", note=str(i))
                for i in range(40)))
            assert [f.revision for f in fired] == [2] * 40
            # Two events racing for one run: one is taken, the other refused, never both.
            outcomes = await asyncio.gather(
                store.fire(ticket.Ticket, "r0", "reopen", note="a"),
                store.fire(ticket.Ticket, "r0", "reopen", note="b"), return_exceptions=True)
            assert sum(not isinstance(o, BaseException) for o in outcomes) == 1
            assert len(await store.history("r0")) == 2
            assert await store.find(ticket.Ticket, status="approved") == sorted(
                f"r{i}" for i in range(1, 40))
    asyncio.run(main())


def test_a_pool_exhausted_past_its_timeout_is_pool_exhausted(ticket: ModuleType,
                                                             backend: Backend) -> None:
    """Another connection holds what the store's one pooled connection waits for (SQLite's
    write lock, PostgreSQL's row): a second call finds no connection free within `timeout`
    and says so, rather than waiting for ever; once released, the store goes on."""
    with open_store(backend.url) as setup:
        setup.create(ticket.Ticket(run_id="held"))
        setup.create(ticket.Ticket(run_id="other"))
    def hold() -> Any:
        """Another connection holding the write lock (SQLite) or the run's row."""
        if backend.name == "sqlite":
            db: Any = sqlite3.connect(backend.url.removeprefix("sqlite:///"),
                                      isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            return db
        db = psycopg.connect(backend.url)
        db.execute("SELECT 1 FROM runs WHERE run_id = 'held' FOR UPDATE")
        return db

    async def main() -> None:
        store = await open_async_store(backend.url, pool_size=1, timeout=5.0,
                                       pool_timeout=0.5)
        holder = hold()
        try:
            waiting = asyncio.ensure_future(
                store.fire(ticket.Ticket, "held", "approve", note="x"))
            await asyncio.sleep(0.2)  # it holds the pool's one connection, waiting
            started = time.monotonic()
            with pytest.raises(PoolExhausted, match="none of the pool's 1 connections"):
                await store.fire(ticket.Ticket, "other", "approve", note="y")
            assert time.monotonic() - started < 5
            holder.rollback() if backend.name != "sqlite" else holder.execute("ROLLBACK")
            holder.close()
            await asyncio.gather(waiting, return_exceptions=True)
            fired = await store.fire(ticket.Ticket, "other", "approve", note="z")
            assert fired.applied
        finally:
            await store.close()
    asyncio.run(main())


def test_the_sync_store_in_a_running_event_loop_warns(backend: Backend) -> None:
    store = open_store(backend.url)

    async def inside() -> None:
        with pytest.warns(BlockingInEventLoop, match="open_async_store"):
            open_store(backend.url).close()
        with pytest.warns(BlockingInEventLoop, match="inside a running asyncio event loop"):
            assert store.stored_runs() == []
        with warnings.catch_warnings():  # once per store
            warnings.simplefilter("error")
            assert store.stored_runs() == []
        # In a thread of its own (no loop there) it says nothing.
        assert await asyncio.to_thread(store.stored_runs) == []
    try:
        asyncio.run(inside())
    finally:
        store.close()


def _cancel_under_load(ticket: ModuleType, url: str, seconds: float, seed: int) -> None:
    """Tasks fire keyed events at a few runs, and are cancelled at random moments (inside a
    store call, at whatever `await` it is at). Then: every run loads whole (its history
    replays), every event a cancelled task may have committed is reported by a keyed retry
    (applied once: `applied` says whether this retry did it), the history holds each key's
    event once, and the store goes on working."""
    rng = random.Random(seed)

    async def main() -> None:
        async with open_async_store(url, pool_size=4) as store:
            ids = [f"c{i}" for i in range(6)]
            for run_id in ids:
                await store.create(ticket.Ticket(run_id=run_id))
            sent: dict[str, list[tuple[str, str]]] = {run_id: [] for run_id in ids}
            serial = 0

            async def toggle(run_id: str, key: str) -> None:
                run = await store.load(ticket.Ticket, run_id)
                event = "approve" if run.status.value == "open" else "reopen"
                await store.fire(ticket.Ticket, run_id, event, idempotency_key=key, note=key)

            end = time.monotonic() + seconds
            while time.monotonic() < end:
                tasks = []
                for _ in range(8):
                    serial += 1
                    run_id = rng.choice(ids)
                    key = f"k{serial}"
                    sent[run_id].append((key, ""))
                    tasks.append(asyncio.ensure_future(toggle(run_id, key)))
                await asyncio.sleep(rng.uniform(0, 0.01))
                for task in tasks:
                    if rng.random() < 0.5:
                        task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            for run_id in ids:
                loaded = await store.load(ticket.Ticket, run_id)  # whole, replayed, checked
                notes = [step.values["note"] for step in loaded.record.history]
                assert len(notes) == len(set(notes)), notes  # no key applied twice
                for key, _ in sent[run_id]:
                    if key in notes:  # committed (perhaps by a cancelled task): a retry says so
                        event = loaded.record.history[notes.index(key)].event.value
                        again = await store.fire(ticket.Ticket, run_id, event,
                                                 idempotency_key=key, note=key)
                        assert not again.applied
                history = await store.history(run_id)
                assert [row.values["note"] for row in history] == notes
            # Still usable, on every connection of its pool.
            closes = await asyncio.gather(*(store.fire(ticket.Ticket, run_id, "close")
                                            for run_id in ids), return_exceptions=True)
            # Every close that returned is stored (a refused one: a run already closed, or
            # one whose state takes no `close`), and only runs of this test are closed.
            done = {run_id for run_id, r in zip(ids, closes, strict=True)
                    if not isinstance(r, BaseException)}
            closed = set(await store.find(ticket.Ticket, status="closed"))
            assert done <= closed <= set(ids)
            assert sorted(r.run_id for r in await store.stored_runs()) == ids
    asyncio.run(main())
    if url.startswith("postgresql"):
        # Every connection went back to its pool clean: none is left inside a transaction.
        # (Counted by this call's own application_name: under xdist another seed of this
        # test runs at the same time, on the same server.)
        name = url.rsplit("application_name=", 1)[1]
        with psycopg.connect(url, autocommit=True) as db:
            assert db.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%%' "
                "AND application_name = %s", (name,)).fetchone() == (0,)


def _named(url: str) -> str:
    if not url.startswith("postgresql"):
        return url
    name = f"cancel_test_{uuid.uuid4().hex[:12]}"  # this call's connections, no other's
    return url + ("&" if "?" in url else "?") + f"application_name={name}"


def test_tasks_cancelled_at_random_points_leave_every_run_whole(ticket: ModuleType,
                                                                 backend: Backend) -> None:
    _cancel_under_load(ticket, _named(backend.url), seconds=1.5, seed=26)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_tasks_cancelled_at_random_points_for_longer(ticket: ModuleType, backend: Backend,
                                                     seed: int) -> None:
    _cancel_under_load(ticket, _named(backend.url), seconds=10, seed=seed)


def test_the_async_worker_fires_due_timers_and_stops(ticket: ModuleType,
                                                     backend: Backend) -> None:
    timed_ticket = timed(ticket)

    async def main() -> None:
        async with open_async_store(backend.url) as store:
            run = timed_ticket(run_id="due")
            await store.create(run)
            later = run.record.lastTransitionAt + dt.timedelta(hours=2)
            store.clock = lambda: later
            worker = AsyncWorker(store, timed_ticket, max_sleep=0.2)
            task = asyncio.ensure_future(worker.run())
            for _ in range(100):
                if worker.fired:
                    break
                await asyncio.sleep(0.05)
            assert worker.fired == 1
            assert (await store.load(timed_ticket, "due")).status.value == "denied"
            worker.stop()
            await asyncio.wait_for(task, 5)  # stop() ends it after its transaction
            # Cancelled while it sleeps: it ends too, its listener closed.
            again = AsyncWorker(store, timed_ticket, max_sleep=30)
            task = asyncio.ensure_future(again.run())
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)
    asyncio.run(main())


def test_a_pool_of_one_serves_many_tasks_at_once(pg_backend: Any) -> None:
    # The connection given back last is kept for the next call (warm), unless a call waits
    # for the pool: then it goes back to the pool, or that call would wait for its timeout.
    from generated.agent_run import AgentRun

    async def main() -> list[Any]:
        async with await open_async_store(pg_backend.url, pool_size=1,
                                          pool_timeout=5) as store:
            for n in range(20):
                await store.create(AgentRun(run_id=f"r{n}"))
            fired = await asyncio.gather(*(store.fire(AgentRun, f"r{n}", "triage")
                                           for n in range(20)))
            again = await asyncio.gather(*(store.fire(AgentRun, f"r{n}", "start")
                                           for n in range(20)))
            return [*fired, *again]

    assert all(f.applied for f in asyncio.run(main()))


def test_a_call_under_way_when_the_store_closes_ends_and_leaves_no_connection(
        pg_backend: Any) -> None:
    # close() while a fire waits for its run's row: the fire still commits (it got its
    # connection before the close) and its connection is closed, not kept open or held as
    # the one given back last of a pool that is gone.
    from generated.agent_run import AgentRun

    name = f"closing-{uuid.uuid4().hex[:12]}"  # the server's other tests' connections aside
    url = f"{pg_backend.url}&application_name={name}"

    def connections(url: str) -> int:
        with psycopg.connect(url, autocommit=True) as db:
            row = db.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name "
                             "= %s", (name,)).fetchone()
            return int(row[0]) if row else -1

    async def main() -> Any:
        store = await open_async_store(url, pool_size=2)
        await store.create(AgentRun(run_id="r"))
        async with await psycopg.AsyncConnection.connect(pg_backend.url) as locker:
            await locker.execute("SELECT 1 FROM runs WHERE run_id = 'r' FOR UPDATE")
            fire = asyncio.ensure_future(store.fire(AgentRun, "r", "triage"))
            await asyncio.sleep(0.3)  # the fire waits for the row
            assert not fire.done()
            await store.close()
            await locker.commit()
        return await asyncio.wait_for(fire, 10)

    assert asyncio.run(main()).applied
    deadline = time.monotonic() + 5
    while connections(pg_backend.url) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert connections(pg_backend.url) == 0
