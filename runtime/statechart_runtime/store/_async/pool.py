"""A small pool of connections for the asynchronous SQLite store (PostgreSQL's is
psycopg_pool): up to `size` connections made when first needed, each lent to one task's
transaction at a time; a task that finds none free within `timeout` seconds gets the
pool's `exhausted()` error, never waits for ever. A connection given back by a cancelled
task, or inside a transaction, is closed, not lent again."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any


class Pool:
    def __init__(self, connect: Callable[[], Awaitable[Any]], size: int, timeout: float,
                 exhausted: Callable[[], Exception]) -> None:
        if size < 1:
            raise ValueError(f"pool_size must be at least 1, got {size!r}")
        self.size = size
        self._connect = connect
        self._timeout = timeout
        self._exhausted = exhausted
        self._free: collections.deque[Any] = collections.deque()
        self._made = 0
        self._all: set[Any] = set()
        self._closed = False
        self._changed = asyncio.Event()  # a connection given back, or closed: look again

    async def _get(self) -> Any:
        try:
            async with asyncio.timeout(self._timeout):
                while True:
                    if self._free:
                        return self._free.popleft()
                    if self._made < self.size:
                        self._made += 1
                        try:
                            db = await self._connect()
                        except BaseException:
                            self._made -= 1
                            self._changed.set()
                            raise
                        self._all.add(db)
                        return db
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            raise self._exhausted() from None

    def _discard(self, db: Any) -> None:
        self._all.discard(db)
        self._made -= 1
        self._changed.set()
        task = asyncio.ensure_future(db.close())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def take(self) -> Any:
        """A connection for one transaction, given back with `give_back` (the pool's
        `exhausted()` error if none is free within the pool's timeout)."""
        if self._free:  # the usual case: no timer to arm and cancel
            return self._free.popleft()
        return await self._get()

    def give_back(self, db: Any, failure: BaseException | None) -> None:
        """Take back `db` after its transaction, which raised `failure` or None."""
        if db not in self._all:  # closed with the pool already
            return
        if failure is not None and not isinstance(failure, Exception):
            # Cancelled: the call's transaction may still run in the connection's thread
            # (whole: it commits or rolls back), so its state cannot be read yet: closed
            # after it, not lent again.
            self._discard(db)
        elif self._closed or db.in_transaction:
            self._discard(db)
        else:
            # Done, or failed and rolled back (awaited: nothing of it is still queued).
            self._free.append(db)
            self._changed.set()

    async def close(self) -> None:
        self._closed = True
        for db in list(self._all):
            with suppress(Exception):
                await db.close()
        self._all.clear()
