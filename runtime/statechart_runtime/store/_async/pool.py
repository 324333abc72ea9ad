"""A small pool of connections for the asynchronous SQLite store (PostgreSQL's is
psycopg_pool): up to `size` connections made when first needed, each lent to one task's
transaction at a time; a task that finds none free within `timeout` seconds gets the
pool's `exhausted()` error, never waits for ever. A connection given back inside a
transaction (its task was cancelled while rolling back) is closed, not lent again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
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
        self._free: asyncio.Queue[Any] = asyncio.Queue()
        self._made = 0
        self._all: set[Any] = set()
        self._closed = False

    async def _get(self) -> Any:
        if not self._free.empty():
            return self._free.get_nowait()
        if self._made < self.size:
            self._made += 1
            try:
                db = await self._connect()
            except BaseException:
                self._made -= 1
                raise
            self._all.add(db)
            return db
        try:
            return await asyncio.wait_for(self._free.get(), self._timeout)
        except TimeoutError:
            raise self._exhausted() from None

    def _discard(self, db: Any) -> None:
        self._all.discard(db)
        self._made -= 1
        task = asyncio.ensure_future(db.close())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        db = await self._get()
        try:
            yield db
        finally:
            if self._closed or db.in_transaction:
                self._discard(db)
            else:
                self._free.put_nowait(db)

    async def close(self) -> None:
        self._closed = True
        for db in list(self._all):
            with suppress(Exception):
                await db.close()
        self._all.clear()
