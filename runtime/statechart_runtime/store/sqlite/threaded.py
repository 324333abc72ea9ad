"""The asynchronous SQLite store's connection: the standard library's sqlite3 connection in a
thread of its own, which runs a whole transaction per hand-off (`run_coroutine`), not a
statement (aiosqlite's way: 11 hand-offs of ~0.1 ms each for a `fire`).

A transaction's body is the store's one source (store/_async/run_store.py: coroutines that
await the connection's `execute`). Driven in the connection's thread, every `execute` there
runs at once, so the coroutine never suspends: one `send` runs it to its end. Only the
asynchronous store uses this module; the generated synchronous one calls sqlite3 itself.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import functools
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Error = sqlite3.Error
OperationalError = sqlite3.OperationalError


class Cursor:
    """A statement's rows, read whole in the connection's thread (the store's results are
    small or read whole anyway), and its row count."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    async def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    async def fetchall(self) -> list[Any]:
        return self._rows


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # its task was cancelled: the job ran all the same
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _drive(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine `make()` gives to its end here, where every await it makes is of
    this connection (done at once)."""
    coroutine = make()
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a SQLite transaction's body awaited something other than its "
                       "connection (it runs in the connection's thread)")


class Connection:
    """One sqlite3 connection and the thread that runs everything done with it, in order."""

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None
        self.inside = Inside()
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # A job's outcome goes back to the loop that opened the connection through a pipe
        # of its own that the loop reads (`_results_ready`), not `call_soon_threadsafe`
        # (asyncio's own wakeup): 25 us less a `fire` on a 2-CPU machine (bench_store's
        # per call part: 52-57 against 79-83 us more than the synchronous `fire`). The
        # thread closes its end when it ends; the loop closes its end once it reads that.
        self._results: collections.deque[Any] = collections.deque()
        self._results_reader, self._results_writer = os.pipe()
        os.set_blocking(self._results_reader, False)
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop that reads them
        self._ended: asyncio.Future[None] | None = None  # the thread's end, read there
        self._stopped = False
        self._thread = threading.Thread(target=self._serve, name="statechart-sqlite",
                                        daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            while True:
                job = self._jobs.get()
                if job is None:
                    return
                future, fn = job
                result: Any = None
                error: BaseException | None = None
                try:
                    result = fn()
                except BaseException as exc:  # given to the task, whatever it is
                    error = exc
                if future.get_loop() is self._loop:
                    self._results.append((future, result, error))
                    os.write(self._results_writer, b"\0")  # its reader is open: see close
                    continue
                try:  # a task of another loop (or none: `_Ignored`)
                    future.get_loop().call_soon_threadsafe(_settle, future, result, error)
                except RuntimeError:  # the loop is closed: nobody waits for it
                    pass
        finally:
            os.close(self._results_writer)
            if self._loop is None:  # no loop reads the pipe
                os.close(self._results_reader)

    def _results_ready(self) -> None:
        """On the loop: settle the jobs' outcomes the thread sent; once the thread ended
        (the pipe's end of file), stop reading it and close it."""
        try:
            ended = not os.read(self._results_reader, 4096)
        except BlockingIOError:
            ended = False
        while self._results:
            _settle(*self._results.popleft())
        if ended and self._loop is not None:
            self._loop.remove_reader(self._results_reader)
            os.close(self._results_reader)
            if self._ended is not None and not self._ended.done():
                self._ended.set_result(None)

    def _here(self) -> bool:
        return threading.get_ident() == self._thread.ident

    async def run(self, fn: Callable[[], T]) -> T:
        """`fn()` in the connection's thread, after what was queued before. A task cancelled
        meanwhile does not stop it: it runs whole."""
        if self._here():
            return fn()
        if self._stopped:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        future = asyncio.get_running_loop().create_future()
        # In the caller's context (its context variables: a tracing listener's current
        # span, asked for while the transaction runs here).
        self._jobs.put((future, functools.partial(contextvars.copy_context().run, fn)))
        return await future  # type: ignore[no-any-return]

    async def run_coroutine(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """The coroutine `make()` gives, run whole in the connection's thread: one hand-off
        for a whole transaction. Its awaits must be of `inside`, this connection as seen
        from its thread. (`run`'s steps written out: this is every call's path.)"""
        if self._stopped:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        future = asyncio.get_running_loop().create_future()
        # In the caller's context, as `run`.
        self._jobs.put((future, functools.partial(contextvars.copy_context().run, _drive, make)))
        return await future  # type: ignore[no-any-return]

    async def open(self, database: str, kwargs: dict[str, Any]) -> None:
        """Open the sqlite3 connection (`sqlite3.connect(database, **kwargs)`) in the
        thread; the thread ends if that fails (or the task is cancelled meanwhile)."""
        loop = asyncio.get_running_loop()
        try:
            loop.add_reader(self._results_reader, self._results_ready)
        except NotImplementedError:  # a loop that watches no pipes: call_soon_threadsafe
            pass
        else:
            self._loop, self._ended = loop, loop.create_future()

        def opened() -> None:
            self._db = self.inside.db = sqlite3.connect(database, **kwargs)
        try:
            await self.run(opened)
        except BaseException:
            self._stop()
            raise

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor:
        return await self.run(lambda: self.inside.statement(sql, args))

    async def executemany(self, sql: str, rows: list[Any]) -> Cursor:
        return await self.run(lambda: self.inside.statements(sql, rows))

    @property
    def in_transaction(self) -> bool:
        return self._db is not None and self._db.in_transaction

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()

    def _stop(self) -> None:
        """Close the connection after the jobs queued, and end its thread (not waited for)."""
        if not self._stopped:
            self._stopped = True
            self._jobs.put((_Ignored(), self._close))
            self._jobs.put(None)

    async def close(self) -> None:
        """Close the connection after the jobs queued (a cancelled task's transaction runs
        whole first), and end its thread."""
        if self._stopped:
            return
        try:
            await self.run(self._close)
        finally:
            self._stopped = True
            self._jobs.put(None)
        if self._ended is not None and self._loop is asyncio.get_running_loop():
            await self._ended  # the results' pipe closed too, before the loop may end


class Inside:
    """A connection as a transaction's body sees it in the connection's own thread
    (`Connection.run_coroutine`; only there): each statement runs at once, its awaits
    never suspend."""

    __slots__ = ("db",)

    def __init__(self) -> None:
        self.db: Any = None  # the sqlite3 connection, once opened

    def statement(self, sql: str, args: Sequence[Any]) -> Cursor:
        cursor = self.db.execute(sql, args)
        return Cursor(cursor.fetchall(), cursor.rowcount)

    def statements(self, sql: str, rows: list[Any]) -> Cursor:
        cursor = self.db.executemany(sql, rows)
        return Cursor([], cursor.rowcount)

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor:
        cursor = self.db.execute(sql, args)  # not `statement`: a call fewer per statement
        return Cursor(cursor.fetchall(), cursor.rowcount)

    async def executemany(self, sql: str, rows: list[Any]) -> Cursor:
        return self.statements(sql, rows)


class _Ignored:
    """The future of a job nobody waits for."""

    def get_loop(self) -> Any:
        return self

    def call_soon_threadsafe(self, *args: Any) -> None:
        pass


async def connect(database: str, **kwargs: Any) -> Connection:
    """A sqlite3 connection (`sqlite3.connect(database, **kwargs)`) in a thread of its own."""
    connection = Connection()
    await connection.open(database, kwargs)
    return connection
