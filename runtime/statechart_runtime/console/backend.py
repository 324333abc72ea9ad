"""The console's one way to the run store: every store call the console makes is a coroutine
of `ConsoleStore`, and nothing else in the console touches a store.

Given a URL, it runs on the asynchronous store (`open_async_store`): opened when the app
starts (its lifespan; or at the first call, for a server that runs no lifespan), closed when
it stops, a pool of `size` connections (PostgreSQL: psycopg_pool; SQLite: sqlite3, a thread
each), which requests await directly. Given an `AsyncRunStore`, it awaits that one (the caller's to
close). Given a synchronous `RunStore` (one connection, one thread at a time), it calls it
in a worker thread (`anyio.to_thread.run_sync`), one call at a time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from statechart_runtime.listeners import Listener
from statechart_runtime.store import (
    AsyncRunStore,
    Change,
    Fired,
    HistoryRow,
    RunFilter,
    RunNotFound,
    RunStore,
    StoredRun,
    open_async_store,
)
from statechart_runtime.store.core.pages import Move
from statechart_runtime.store.core.work import WorkItem

T = TypeVar("T")


class _Threaded:
    """A synchronous store behind the asynchronous store's calls the console makes: each call
    in a worker thread, one at a time (the store holds one connection)."""

    def __init__(self, store: RunStore) -> None:
        self._store = store
        self._limiter = anyio.CapacityLimiter(1)

    async def _run(self, work: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(work, limiter=self._limiter)

    def now(self) -> dt.datetime:
        return self._store.now()

    def store_failed(self, exc: BaseException) -> bool:
        return self._store.store_failed(exc)

    async def runs_page(self, conditions: RunFilter, *, by_due: bool = False,
                        after: tuple[Any, ...] | None = None, limit: int = 50
                        ) -> list[StoredRun]:
        return await self._run(lambda: self._store.runs_page(conditions, by_due=by_due,
                                                             after=after, limit=limit))

    async def status_counts(self, conditions: RunFilter, *,
                            statuses: Sequence[str] | None = None, cap: int | None = None
                            ) -> dict[str, int]:
        return await self._run(lambda: self._store.status_counts(conditions,
                                                                 statuses=statuses, cap=cap))

    async def head(self, run_class: type[Any], run_id: str) -> Fired:
        return await self._run(lambda: self._store.head(run_class, run_id))

    async def work_counts(self, spec: str) -> dict[tuple[str, str], int]:
        return await self._run(lambda: self._store.work_counts(spec))

    async def history(self, run_id: str, *, first: int = 0, limit: int | None = None
                      ) -> list[HistoryRow]:
        return await self._run(lambda: self._store.history(run_id, first=first, limit=limit))

    async def moves(self, run_id: str, *, first: int = 0) -> list[Move]:
        return await self._run(lambda: self._store.moves(run_id, first=first))

    async def work_items(self, run_id: str) -> list[WorkItem]:
        return await self._run(lambda: self._store.work_items(run_id))

    async def watch_position(self) -> str:
        return await self._run(self._store.watch_position)

    async def changes(self, run_class: type[Any], *, after: str, limit: int = 100
                      ) -> list[Change]:
        return await self._run(lambda: self._store.changes(run_class, after=after,
                                                           limit=limit))

    async def fire(self, run_class: type[Any], run_id: str, event: str, *,
                   idempotency_key: str | None, if_revision: int | None,
                   **values: Any) -> Fired:
        return await self._run(lambda: self._store.fire(
            run_class, run_id, event, idempotency_key=idempotency_key,
            if_revision=if_revision, **values))


class ConsoleStore:
    """The store the console calls: an asynchronous store it opens from a URL (or is given),
    or a synchronous store called in a worker thread."""

    def __init__(self, store: RunStore | AsyncRunStore | str, *, size: int = 4,
                 read_only: bool = False, listeners: Iterable[Listener] = ()) -> None:
        self._url: str | None = None
        self._listeners = tuple(listeners)  # of the store opened from the URL
        self._store: AsyncRunStore | _Threaded | None = None
        self._size = max(1, size)
        self._read_only = read_only
        self._opening = anyio.Lock()
        if isinstance(store, str):
            self._url = store
        elif isinstance(store, AsyncRunStore):
            self._store = store
        else:
            self._store = _Threaded(store)

    def store_failed(self, exc: BaseException) -> bool:
        """Whether `exc` is a failure of the store itself (`store.store_failed`), not a
        refusal of the one call."""
        store = self._store
        if isinstance(store, _Threaded):
            return store.store_failed(exc)
        return store is not None and store.store_failed(exc)

    async def open(self) -> None:
        """Open the store of the URL (the app's startup): a bad URL or an unreachable
        server fails here, before the first request."""
        await self._opened()

    async def close(self) -> None:
        """Close the store opened from the URL (a store given to it is the caller's)."""
        if self._url is None or self._store is None:
            return
        store, self._store = self._store, None
        assert isinstance(store, AsyncRunStore)
        await store.close()

    async def _opened(self) -> AsyncRunStore | _Threaded:
        if self._store is not None:
            return self._store
        async with self._opening:
            if self._store is None:
                assert self._url is not None
                self._store = await open_async_store(self._url, read_only=self._read_only,
                                                     pool_size=self._size,
                                                     listeners=self._listeners)
            return self._store

    # -- the calls: each request's reads (or its fire) together -----------------------------

    async def now(self) -> dt.datetime:
        return (await self._opened()).now()

    async def listing(self, conditions: Callable[[dt.datetime], RunFilter], *,
                      by_due: bool = False, after: tuple[Any, ...] | None = None,
                      limit: int = 50, counts: Sequence[str] | None = None,
                      cap: int | None = None
                      ) -> tuple[dt.datetime, list[StoredRun], dict[str, int]]:
        """The store's time, a page of the runs matching `conditions(now)`, and the counts
        of the statuses `counts` among the runs matching them but the status, each up to
        `cap` (`store.status_counts`)."""
        store = await self._opened()
        now = store.now()
        found = conditions(now)
        page = await store.runs_page(found, by_due=by_due, after=after, limit=limit)
        return (now, page,
                await store.status_counts(found, statuses=counts, cap=cap) if counts else {})

    async def counts(self, conditions: RunFilter) -> dict[str, int]:
        return await (await self._opened()).status_counts(conditions)

    async def stored_run(self, run_id: str) -> StoredRun | None:
        """The run's columns (no record read), or None when there is no such run."""
        return await _stored(await self._opened(), run_id)

    async def run_view(self, run_id: str, run_class: Callable[[str], type[Any] | None]
                       ) -> tuple[dt.datetime, StoredRun | None, Fired | None]:
        """The store's time, the run's columns (None: no such run) and, when `run_class`
        gives a class for its spec, the run restored from its head (`store.head`)."""
        store = await self._opened()
        now = store.now()
        stored = await _stored(store, run_id)
        found = None if stored is None else run_class(stored.spec)
        return now, stored, None if found is None else await store.head(found, run_id)

    async def work_items(self, run_id: str) -> list[WorkItem]:
        """The run's work items, each with its attempts (`store.work_items`)."""
        return await (await self._opened()).work_items(run_id)

    async def history_view(self, run_id: str,
                           plan: Callable[[StoredRun], tuple[int, int, int | None]]
                           ) -> tuple[StoredRun | None, list[HistoryRow], list[Move]]:
        """The run's columns and, as `plan(stored)` says (first, limit, and the first step
        of a second read to the end, or None), a page of its history and the moves of the
        steps from that second first (`store.moves`)."""
        store = await self._opened()
        stored = await _stored(store, run_id)
        if stored is None:
            return None, [], []
        first, limit, rest = plan(stored)
        page = await store.history(run_id, first=first, limit=limit)
        return stored, page, [] if rest is None else await store.moves(run_id, first=rest)

    async def head(self, run_class: type[Any], run_id: str) -> Fired:
        return await (await self._opened()).head(run_class, run_id)

    async def changes(self, run_class: type[Any], after: str | None, *, limit: int = 100
                      ) -> tuple[str, list[Change]]:
        """The steps of the spec's runs after position `after` (None: from now), at most
        `limit` (`store.changes`), and the position to read on from."""
        store = await self._opened()
        position = after if after is not None else await store.watch_position()
        found = await store.changes(run_class, after=position, limit=limit)
        return (found[-1].position if found else position), found

    async def refresh(self, gauges: Any) -> None:
        """Read the store's gauges (statechart_runtime.metrics.StoreGauges)."""
        await gauges.refresh_async(await self._opened())

    async def fire(self, run_id: str, run_class: type[Any] | Callable[[str], type[Any]],
                   event: str, *, idempotency_key: str | None, if_revision: int | None,
                   values: dict[str, Any]) -> Fired:
        """Fire `event` at the run as a `run_class`, or with the class `run_class(spec)`
        gives for the run's spec (read first; the callable may refuse, raising);
        RunNotFound when there is no such run."""
        store = await self._opened()
        if isinstance(run_class, type):
            found = run_class
        else:
            stored = await _stored(store, run_id)
            if stored is None:
                raise RunNotFound(run_id)
            found = run_class(stored.spec)
        return await store.fire(found, run_id, event, idempotency_key=idempotency_key,
                                if_revision=if_revision, **values)


async def _stored(store: AsyncRunStore | _Threaded, run_id: str) -> StoredRun | None:
    found = await store.runs_page(RunFilter(run_id=run_id), limit=1)
    return found[0] if found else None
