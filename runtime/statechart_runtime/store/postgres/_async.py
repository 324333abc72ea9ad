"""The PostgreSQL run store's driver (store/postgres: its SQL): how it connects, runs a
transaction in one pipeline, and pools connections (the asynchronous store: psycopg_pool).

THE SOURCE of both drivers: `tools/async_to_sync.py` generates `PostgresStore`
(store/postgres/_sync.py, psycopg's Connection) from `AsyncPostgresStore` here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, TypeVar

import psycopg

from statechart_runtime.store._async.run_store import AsyncRunStore
from statechart_runtime.store._async.transactions import Attempt
from statechart_runtime.store.core import failures
from statechart_runtime.store.postgres import (
    DUE_CHANNEL,
    LISTEN,
    LISTEN_STEPS,
    MIGRATIONS,
    SQL,
    failure,
    redacted,
)

T = TypeVar("T")


class AsyncPostgresStore(AsyncRunStore):
    sql = SQL
    migrations = MIGRATIONS
    driver_errors = (psycopg.Error,)
    due_channel = DUE_CHANNEL

    def __init__(self, url: str, *, timeout: float = 30.0, max_attempts: int = 5,
                 read_only: bool = False, pool_size: int = 8,
                 pool_timeout: float | None = None) -> None:
        self.url = url
        self.pool_size = pool_size
        self.pool_timeout = timeout if pool_timeout is None else pool_timeout
        self._pool: Any = None
        self._last: Any = None  # the connection given back last, kept out of the pool
        # Tasks of this store in `pool.getconn()`: `_last` goes back to the pool for them
        # (one still waiting for the pool's lock is not yet in its `requests_waiting`).
        self._getting = 0
        super().__init__(redacted(url), timeout=timeout, max_attempts=max_attempts,
                         read_only=read_only)

    def _failure(self, exc: BaseException, db: Any = None) -> str | None:
        return failure(exc, db)

    async def _connect(self) -> Any:
        return await self.new_connection()

    async def new_connection(self) -> psycopg.AsyncConnection[Any]:
        """A new connection to the store's database, opened as the store opens its own:
        autocommit (every transaction is begun and ended explicitly), `timeout` for
        connecting, read-only when the store is."""
        conn = await psycopg.AsyncConnection.connect(
            self.url, autocommit=True, connect_timeout=max(2, int(self.timeout)))
        if self.read_only:  # the server refuses any write of this session
            await conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        return conn

    async def listening_connection(self, *, steps: bool = False
                                   ) -> psycopg.AsyncConnection[Any]:
        """A new connection that LISTENs on the store's due channel (a worker sleeps on it:
        a write of an earlier deadline, or of a work item, wakes it), or with `steps` on the
        channel every step notifies (`watch` sleeps on it)."""
        conn = await self.new_connection()
        try:
            await conn.execute(LISTEN_STEPS if steps else LISTEN)
        except BaseException:
            with suppress(Exception):
                await conn.close()
            raise
        return conn

    async def _many(self, db: Any, sql: str, rows: list[tuple[Any, ...]]) -> None:
        await db.cursor().executemany(sql, rows)

    async def _transact(self, db: Any, begin: str, call: Attempt,
                        work: Callable[[Any], Awaitable[T]]) -> T:
        # Pipeline mode: statements are sent without waiting for their results until one is
        # read, so BEGIN travels with the first SELECT, and the writes with the COMMIT: a
        # `fire` takes three round trips, not ten, and holds the run's row that much less.
        # An error of a pipelined statement surfaces at a later one (a create's duplicate
        # key at the UPDATE after its INSERT), in an aborted pipeline: `_abandon` gets the
        # connection out of it whatever was sent.
        if not begin:  # one statement, in a transaction of its own (autocommit)
            return await work(db)
        abandoned = False
        try:
            async with db.pipeline():
                try:
                    await db.execute(begin)
                    done = await work(db)
                    call.committing = True  # a failure from here may come after the commit
                    await db.execute("COMMIT")
                except BaseException:
                    abandoned = True
                    await self._abandon(db)
                    raise
            # Leaving the pipeline sent its Sync and read every result up to it: the
            # COMMIT's outcome too (one round trip, where a `pipeline.sync()` before it
            # took one more).
            call.committing = False
        except psycopg.Error as exc:
            if not abandoned:  # the pipeline's results, read as it was left, say it failed
                if self._failure(exc, db) != "disconnected":
                    # The server refused a statement: the rest, the COMMIT too, was skipped.
                    call.committing = False
                await self._abandon(db)
            raise
        return done

    async def _abandon(self, db: Any) -> None:
        """End a failed transaction so that the next call starts clean: psycopg's rollback
        leaves an aborted pipeline, rolls back, and forgets the statements it meant to
        prepare (an aborted pipeline never prepared them). A connection that cannot even do
        that is closed: the next call reconnects."""
        if db.closed or db.broken:
            return
        try:
            await db.rollback()
        except Exception:
            with suppress(Exception):
                await db.close()

    # -- the asynchronous store's pool ------------------------------------------------

    async def _open_pool(self) -> None:
        from psycopg_pool import AsyncConnectionPool

        self._pool = AsyncConnectionPool(
            self.url, min_size=self.pool_size, max_size=self.pool_size, open=False,
            timeout=self.pool_timeout, connection_class=psycopg.AsyncConnection,
            kwargs={"autocommit": True, "connect_timeout": max(2, int(self.timeout))},
            configure=self._configure if self.read_only else None,
            reconnect_timeout=self.timeout)
        await self._pool.open(wait=True, timeout=self.timeout)

    async def _configure(self, conn: Any) -> None:
        await conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

    async def _take_pooled(self) -> tuple[Any, Any]:
        from psycopg_pool import PoolTimeout

        pool = self._pool  # the connection goes back to it, even after a close or reopen
        if pool is None:
            raise failures.closed(self.where)
        # The connection given back last is taken first (the pool's order is FIFO): calls
        # made one after another stay on one server process, whose caches are warm, rather
        # than going round all of them (0.6 ms a `fire` on a loaded 2-CPU machine).
        db, self._last = self._last, None
        if db is None:
            self._getting += 1
            try:
                db = await pool.getconn()
            except PoolTimeout as exc:
                if pool.get_stats().get("pool_size", 0) < self.pool_size:
                    # Fewer connections than it should have: it cannot make new ones.
                    raise failures.unreachable(self.where, exc) from None
                raise failures.pool_exhausted(self.where, self.pool_size,
                                              self.pool_timeout) from None
            finally:
                self._getting -= 1
        return pool, db

    async def _give_back_pooled(self, pool: Any, db: Any, failure: BaseException | None
                                ) -> None:
        if self._last is None and self._pool is pool and not db.closed and not db.broken \
                and db.info.transaction_status == psycopg.pq.TransactionStatus.IDLE \
                and not self._getting and not pool.get_stats().get("requests_waiting", 0):
            self._last = db  # no call waits for the pool: the next one takes it here
        else:
            # Given back in a transaction (a task cancelled mid-call) it is rolled back by
            # the pool; a connection that is lost or mid-statement is discarded; a closed
            # pool closes it (a call under way when the store closed).
            await pool.putconn(db)

    async def _give_back_last(self) -> None:
        db, self._last = self._last, None
        if db is not None and self._pool is not None:
            await self._pool.putconn(db)

    async def _refresh_pool(self) -> None:
        if self._pool is not None:
            await self._give_back_last()  # checked with the others
            await self._pool.check()

    async def _close_pool(self) -> None:
        # The pool is forgotten before anything is awaited: a call made during the close
        # is refused (closed), rather than taking `_last` or a connection of a closing pool.
        pool, self._pool = self._pool, None
        db, self._last = self._last, None
        if pool is not None:
            if db is not None:
                await pool.putconn(db)
            await pool.close()
