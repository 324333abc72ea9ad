"""The console's one way to the run store: every store call the console makes is a coroutine
of `ConsoleStore`, and nothing else in the console touches a store.

Today it runs the synchronous store (`statechart_runtime.store.open_store`) in worker threads
(`anyio.to_thread.run_sync`): a store object holds one connection and serves one thread at a
time, so each call takes a store from a small pool and gives it back. Given a store object,
the pool is that one store (the calls take turns); given a URL, up to `size` stores are opened
as calls need them (PostgreSQL answers them at once; SQLite readers never wait for the
writer). When the run store has an asynchronous API, this module is the one to change.
"""

from __future__ import annotations

import datetime as dt
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio.to_thread

from statechart_runtime.store import (
    Fired,
    HistoryRow,
    RunFilter,
    RunNotFound,
    RunStore,
    StoredRun,
    open_store,
)
from statechart_runtime.store_pages import Move

T = TypeVar("T")


class ConsoleStore:
    """A pool of synchronous stores, called from the event loop through worker threads."""

    def __init__(self, store: RunStore | str, *, size: int = 4, read_only: bool = False
                 ) -> None:
        self._free: queue.Queue[RunStore] = queue.Queue()
        self._lock = threading.Lock()
        self._opened: list[RunStore] = []
        self._url: str | None = None
        self._size = 1
        self._read_only = read_only
        if isinstance(store, str):
            self._url = store
            self._size = max(1, size)
            self._free.put(self._open())  # the first now: a bad URL fails at once
        else:
            self._opened.append(store)
            self._free.put(store)
        self._limiter = anyio.CapacityLimiter(self._size)

    def _open(self) -> RunStore:
        assert self._url is not None
        store = open_store(self._url, read_only=self._read_only)
        with self._lock:
            self._opened.append(store)
        return store

    def _take(self) -> RunStore:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            room = self._url is not None and len(self._opened) < self._size
        return self._open() if room else self._free.get()

    def _call(self, work: Callable[[RunStore], T]) -> T:
        store = self._take()
        try:
            return work(store)
        finally:
            self._free.put(store)

    async def _run(self, work: Callable[[RunStore], T]) -> T:
        return await anyio.to_thread.run_sync(self._call, work, limiter=self._limiter)

    def close(self) -> None:
        """Close the stores this pool opened (a store given to it is the caller's)."""
        if self._url is None:
            return
        with self._lock:
            opened, self._opened = self._opened, []
        for store in opened:
            store.close()

    # -- the calls: each request's reads (or its fire) in one call, one trip to a thread ----

    async def now(self) -> dt.datetime:
        return await self._run(lambda store: store.now())

    async def listing(self, conditions: Callable[[dt.datetime], RunFilter], *,
                      by_due: bool = False, after: tuple[Any, ...] | None = None,
                      limit: int = 50, counts: Sequence[str] | None = None,
                      cap: int | None = None
                      ) -> tuple[dt.datetime, list[StoredRun], dict[str, int]]:
        """The store's time, a page of the runs matching `conditions(now)`, and the counts
        of the statuses `counts` among the runs matching them but the status, each up to
        `cap` (`store.status_counts`)."""
        def work(store: RunStore) -> tuple[dt.datetime, list[StoredRun], dict[str, int]]:
            now = store.now()
            found = conditions(now)
            return (now, store.runs_page(found, by_due=by_due, after=after, limit=limit),
                    store.status_counts(found, statuses=counts, cap=cap) if counts else {})
        return await self._run(work)

    async def counts(self, conditions: RunFilter) -> dict[str, int]:
        return await self._run(lambda store: store.status_counts(conditions))

    async def stored_run(self, run_id: str) -> StoredRun | None:
        """The run's columns (no record read), or None when there is no such run."""
        return await self._run(lambda store: _stored(store, run_id))

    async def run_view(self, run_id: str, run_class: Callable[[str], type[Any] | None]
                       ) -> tuple[dt.datetime, StoredRun | None, Fired | None]:
        """The store's time, the run's columns (None: no such run) and, when `run_class`
        gives a class for its spec, the run restored from its head (`store.head`)."""
        def work(store: RunStore) -> tuple[dt.datetime, StoredRun | None, Fired | None]:
            now = store.now()
            stored = _stored(store, run_id)
            found = None if stored is None else run_class(stored.spec)
            return now, stored, None if found is None else store.head(found, run_id)
        return await self._run(work)

    async def history_view(self, run_id: str,
                           plan: Callable[[StoredRun], tuple[int, int, int | None]]
                           ) -> tuple[StoredRun | None, list[HistoryRow], list[Move]]:
        """The run's columns and, as `plan(stored)` says (first, limit, and the first step
        of a second read to the end, or None), a page of its history and the moves of the
        steps from that second first (`store.moves`)."""
        def work(store: RunStore) -> tuple[StoredRun | None, list[HistoryRow], list[Move]]:
            stored = _stored(store, run_id)
            if stored is None:
                return None, [], []
            first, limit, rest = plan(stored)
            page = store.history(run_id, first=first, limit=limit)
            return stored, page, [] if rest is None else store.moves(run_id, first=rest)
        return await self._run(work)

    async def head(self, run_class: type[Any], run_id: str) -> Fired:
        return await self._run(lambda store: store.head(run_class, run_id))

    async def fire(self, run_id: str, run_class: type[Any] | Callable[[str], type[Any]],
                   event: str, *, idempotency_key: str | None, if_revision: int | None,
                   values: dict[str, Any]) -> Fired:
        """Fire `event` at the run as a `run_class`, or with the class `run_class(spec)`
        gives for the run's spec (read first; the callable may refuse, raising);
        RunNotFound when there is no such run."""
        def work(store: RunStore) -> Fired:
            if isinstance(run_class, type):
                found = run_class
            else:
                stored = _stored(store, run_id)
                if stored is None:
                    raise RunNotFound(run_id)
                found = run_class(stored.spec)
            return store.fire(found, run_id, event, idempotency_key=idempotency_key,
                              if_revision=if_revision, **values)
        return await self._run(work)


def _stored(store: RunStore, run_id: str) -> StoredRun | None:
    found = store.runs_page(RunFilter(run_id=run_id), limit=1)
    return found[0] if found else None
