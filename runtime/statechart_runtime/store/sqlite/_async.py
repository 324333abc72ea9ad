"""The SQLite run store's driver (store/sqlite: its SQL): how it connects, takes the write
lock, and pools connections (the asynchronous store: a thread per connection, which runs a
transaction whole: store/sqlite/threaded.py).

THE SOURCE of both drivers: `tools/async_to_sync.py` generates `SqliteStore`
(store/sqlite/_sync.py, on the standard library's sqlite3) from `AsyncSqliteStore` here.
"""

from __future__ import annotations

import asyncio
import functools
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from statechart_runtime.errors import ReadOnlyStore, StoreError
from statechart_runtime.store._async import is_async
from statechart_runtime.store._async.pool import Pool
from statechart_runtime.store._async.run_store import AsyncRunStore
from statechart_runtime.store._async.transactions import Attempt
from statechart_runtime.store.core import failures
from statechart_runtime.store.sqlite import (
    CANTOPEN,
    MIGRATIONS,
    READONLY,
    SQL,
    WAIT_MAX,
    WAIT_MIN,
    failure,
    threaded,
)

T = TypeVar("T")


class AsyncSqliteStore(AsyncRunStore):
    """Runs in a SQLite file (WAL, `synchronous=FULL`). Every write transaction takes the
    database's write lock at once (BEGIN IMMEDIATE): writers take turns, readers never wait."""

    sql = SQL
    migrations = MIGRATIONS
    driver_errors = (sqlite3.Error,)
    optimistic_fire = True

    def __init__(self, path: str | Path, *, timeout: float = 30.0, max_attempts: int = 5,
                 read_only: bool = False, pool_size: int = 1,
                 pool_timeout: float | None = None) -> None:
        self.path = str(path)
        self._uri = self.path  # a read-only store opens a URI: file:PATH?mode=ro...
        self.pool_size = pool_size
        self.pool_timeout = timeout if pool_timeout is None else pool_timeout
        self._pool: Any = None  # the asynchronous store's (store/_async/pool.py)
        self._writing: Any = None  # the asynchronous store's writers take turns on it
        # (a pool of more than one connection)
        super().__init__(self.path, timeout=timeout, max_attempts=max_attempts,
                         read_only=read_only)

    def _failure(self, exc: BaseException, db: Any = None) -> str | None:
        return failure(exc)

    async def _connect(self) -> Any:
        if self.read_only:
            return await self._connect_read_only()
        # Autocommit mode: every transaction is begun and ended here, explicitly. Any thread
        # may use the connection (one at a time), not only the one that opened it.
        db = await threaded.connect(self.path, timeout=self.timeout, isolation_level=None,
                                     check_same_thread=False)
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            row: Any = await (await db.execute("PRAGMA journal_mode = WAL")).fetchone()
            mode = row[0]
            if mode.lower() != "wal":
                raise StoreError(f"{self.path}: could not switch the database to WAL mode "
                                 f"(it is in {mode} mode)")
            # FULL: a commit that returned survives a power cut, not only a crash.
            await db.execute("PRAGMA synchronous = FULL")
            await db.execute("PRAGMA foreign_keys = ON")
            # From here on a writer waits for the write lock in `_begin`, not in SQLite's
            # busy handler: that one sleeps 1, 2, 5, 10, ... up to 100 ms between tries, so
            # under a few writers one of them waited for hundreds of milliseconds while the
            # lock was free most of the time (a commit holds it for about a millisecond).
            await db.execute("PRAGMA busy_timeout = 0")
        except BaseException:
            with suppress(Exception):
                await db.close()
            raise
        return db

    async def _begin(self, db: Any, begin: str) -> None:
        """BEGIN IMMEDIATE, tried again after a short, random sleep (so that waiting
        writers do not wake together) while another writer holds the lock, for up to
        `timeout` seconds; then the busy error (`_with_retries` counts an attempt). (Not
        shorter sleeps for writers that waited longer: on a busy machine, writers that
        spin keep the one holding the lock from running.)"""
        if begin != SQL.begin_write or self.read_only:
            await db.execute(begin)
            return
        started = 0.0
        while True:
            try:
                await db.execute(begin)
                return
            except sqlite3.OperationalError as exc:
                if failure(exc) != "busy":
                    raise
                now = time.monotonic()
                if not started:
                    started = now
                elif now - started >= self.timeout:
                    raise
            # A blocking sleep: a transaction of the asynchronous store runs whole in its
            # connection's thread (`_transact`), never on the event loop.
            time.sleep(random.uniform(WAIT_MIN, WAIT_MAX))

    async def _connect_read_only(self) -> Any:
        path = Path(self.path)
        if not path.is_file():
            raise StoreError(f"{self.path}: no such store file")
        # Plain `mode=ro` sees a live store whole: its -wal file too. It needs the -shm file
        # beside the database, so it fails in a folder we cannot write that has none. Only
        # then is the file opened `immutable` (no lock, no -shm), and only when nothing is in
        # a -wal file: immutable reads ignore it, and would miss the changes it holds.
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        try:
            return await self._open_uri(uri)
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in (READONLY, CANTOPEN):
                raise
            wal = Path(f"{path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise ReadOnlyStore(
                    f"{self.path}: cannot be read as it is: its -wal file holds changes "
                    "not yet in the database file, and SQLite cannot make the -shm file it "
                    "needs to read them (the folder is read-only to us): give this user "
                    "write access to the folder, or read a copy of the store (`sqlite3 "
                    f"{self.path} .backup COPY` by its owner)") from None
            return await self._open_uri(uri + "&immutable=1")

    async def _open_uri(self, uri: str) -> Any:
        db = await threaded.connect(uri, uri=True, timeout=self.timeout,
                                     isolation_level=None, check_same_thread=False)
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            await (await db.execute("SELECT count(*) FROM sqlite_master")).fetchone()
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF in (READONLY, CANTOPEN):
                with suppress(Exception):
                    await db.close()
                raise
            # Not a database, damaged: the first read says so, as for any store.
        self._uri = uri
        return db

    @property
    def uri(self) -> str:
        """What the store opened: the path, or the URI of a read-only open (`mode=ro`, and
        `immutable=1` where SQLite could not make its -shm file)."""
        return self._uri

    # -- the asynchronous store's pool ------------------------------------------------

    async def _transact(self, db: Any, begin: str, call: Attempt,
                        work: Callable[[Any], Awaitable[T]]) -> T:
        if is_async():
            # The whole transaction in the connection's thread: one hand-off, not one per
            # statement (its coroutines await only the connection there, which runs each
            # statement at once: `inside`, threaded.py).
            thread: threaded.Connection = db
            body = functools.partial(super()._transact, thread.inside, begin, call, work)
            if self._writing is not None and begin == SQL.begin_write and not self.read_only:
                # The pool's writers take turns here, on the loop, rather than on the
                # database's lock: a writer that found it taken would sleep and try again
                # in its thread, while the one holding it waits for its turn on the loop.
                async with self._writing:
                    return await thread.run_coroutine(body)
            return await thread.run_coroutine(body)
        return await super()._transact(db, begin, call, work)

    def _computes_before_locking(self, run_class: Any) -> bool:
        if is_async():
            # Not optimistic: a `fire` (its read, step and write) is one transaction, so one
            # hand-off to the connection's thread, not two (a read, then the write). The
            # pool's writers take turns on the loop anyway (`_transact`); the step is
            # computed holding the database's write lock (~0.1 ms that a writer of another
            # process waits longer).
            return False
        return super()._computes_before_locking(run_class)

    async def _open_pool(self) -> None:
        # A pool of one connection lends it to one transaction at a time already: its
        # writers need no other turns.
        self._writing = asyncio.Lock() if self.pool_size > 1 else None
        self._pool = Pool(self._connect, self.pool_size, self.pool_timeout,
                          lambda: failures.pool_exhausted(self.where, self.pool_size,
                                                          self.pool_timeout))

    async def _take_pooled(self) -> tuple[Any, Any]:
        pool = self._pool
        if pool is None:
            raise failures.closed(self.where)
        return pool, await pool.take()

    async def _give_back_pooled(self, pool: Any, db: Any, failure: BaseException | None
                                ) -> None:
        pool.give_back(db, failure)

    async def _close_pool(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()


