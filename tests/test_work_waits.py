"""What work items wait for (docs/work.md, bench/bench_work.py), on both backends: a dead
worker's item is claimed again by a live worker once its lease has expired, and not before
(the store's clock set by the test); a slot freed while the worker's round is under way is
filled at once, not a poll later; `complete_work` sends its reads together (one round trip
on PostgreSQL)."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from store_support import Backend, Clock, intercept, job_class

from statechart_runtime.handlers import Outcome, WorkContext
from statechart_runtime.store import open_async_store, open_store
from statechart_runtime.worker import AsyncWorker

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return job_class(tmp_path_factory.mktemp("job"))


async def do_it(work: WorkContext) -> Outcome:
    return Outcome("done", output={"by": "live", "attempt": work.attempt})


def test_a_dead_workers_item_is_claimed_again_once_its_lease_expires_and_not_before(
        job: type[Any], backend: Backend) -> None:
    clock = Clock(T0)
    with open_store(backend.url, clock=clock) as store:
        store.create(job(run_id="r1", clock=clock))
        store.fire(job, "r1", "start")
        dead = store.claim_work(job, owner="dead")  # then no heartbeat, no outcome
    assert dead is not None and dead.lease_until == T0 + dt.timedelta(seconds=10)

    async def live_worker() -> tuple[int, int]:
        async with await open_async_store(backend.url, clock=clock) as store:
            worker = AsyncWorker(store, job, handlers={"do_it": do_it}, owner="live",
                                 listen=False)
            clock.at = dead.lease_until - dt.timedelta(microseconds=1)
            await worker.run_once()
            early = worker.applied
            clock.at = dead.lease_until
            await worker.run_once()
            return early, worker.applied

    assert asyncio.run(live_worker()) == (0, 1)
    with open_store(backend.url) as store:
        assert store.load(job, "r1").record.output == {"by": "live", "attempt": 2}
        [item] = store.work_items("r1")
    assert [(a.owner, a.claimed_at, a.result) for a in item.history] == [
        ("dead", T0, "lease lost"), ("live", dead.lease_until, "applied")]
    assert (item.failures, item.ended_by) == (1, "done")


def test_an_item_that_ends_during_the_workers_round_frees_its_slot_at_once(
        job: type[Any], backend: Backend) -> None:
    """The item claimed in a round ends before the round's last read returns (held here
    until it has): the worker's sleep after that round ends at once and the next item is
    claimed, rather than after `poll` (60 s: the test would time out)."""
    with open_store(backend.url) as store:
        for run_id in ("r1", "r2"):
            store.create(job(run_id=run_id))
            store.fire(job, run_id, "start")

    async def main() -> int:
        async with await open_async_store(backend.url) as store:
            worker = AsyncWorker(store, job, handlers={"do_it": do_it}, concurrency=1,
                                 poll=60, listen=False)
            next_due = store.next_due

            async def after_the_item(*args: Any, **kwargs: Any) -> Any:
                while worker._running:  # the item's end (its slot freed) comes first
                    await asyncio.sleep(0.005)
                return await next_due(*args, **kwargs)

            store.next_due = after_the_item  # type: ignore[method-assign]
            running = asyncio.ensure_future(worker.run())
            try:
                async with asyncio.timeout(20):
                    while worker.applied < 2:
                        await asyncio.sleep(0.01)
            finally:
                worker.stop()
                await running
            return worker.applied

    assert asyncio.run(main()) == 2


class _Fetches:
    """A cursor that notes in `events` when its rows are first asked for."""

    def __init__(self, cursor: Any, sql: str, events: list[tuple[str, str]]) -> None:
        self._cursor, self._sql, self._events = cursor, sql, events

    def fetchone(self) -> Any:
        self._events.append(("fetch", self._sql))
        return self._cursor.fetchone()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def test_complete_work_sends_its_reads_of_the_run_and_the_item_together(
        job: type[Any], backend: Backend) -> None:
    """The run's head, its checks and the item are all sent before the first result is
    waited for: on PostgreSQL (a pipeline) one round trip, as `fire`'s head read."""
    with open_store(backend.url) as store:
        store.create(job(run_id="r1"))
        store.fire(job, "r1", "start")
        claim = store.claim_work(job, owner="w")
        events: list[tuple[str, str]] = []

        def noted(sql: str, args: Any, execute: Any) -> Any:
            events.append(("send", sql))
            return _Fetches(execute(sql, args), sql, events)

        intercept(store, noted)
        assert store.complete_work(job, claim, "done", output=1).applied
    first_wait = next(n for n, (kind, _) in enumerate(events) if kind == "fetch")
    sent = [sql for kind, sql in events[:first_wait] if kind == "send"]
    # A head read that takes no row lock (SQLite: BEGIN IMMEDIATE holds the database) is
    # one statement with its checks.
    head = ({store.sql.head_checked} if store.sql.head_checked
            and store.sql.head_locked == store.sql.head
            else {store.sql.head_locked, store.sql.head_checks})
    assert {*head, store.sql.item_locked} <= set(sent)
