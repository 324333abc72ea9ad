"""The run store's machinery, in no SQL dialect and for no driver in particular: opening and
closing, the connection a call leases, transactions, retries and reconnection, the store's
own schema, and its listeners. `RunCalls` (run_calls.py), `WorkCalls` (work_calls.py) and
`AsyncRunStore` (run_store.py) build the API on it.

tools/async_to_sync.py generates its synchronous twin in store/_sync/ (edit this file, then run
the script).
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any, Self, TypeVar

from statechart_runtime import listeners as heard
from statechart_runtime.chart.values import Clock, now, utcnow
from statechart_runtime.errors import (
    ReadOnlyStore,
    StoreError,
)
from statechart_runtime.listeners import Listener, Listeners
from statechart_runtime.run import Run
from statechart_runtime.store._async import is_async
from statechart_runtime.store.core import (
    failures,
    observe,
    schema,
)
from statechart_runtime.store.core import work as work_core
from statechart_runtime.store.core.statements import Statements
from statechart_runtime.store.core.writes import (
    Mark,
)

T = TypeVar("T")
RunT = TypeVar("RunT", bound=Run[Any, Any, Any])
# How many of the runs due first a claim that is only a read (SQLite) picks one of, once
# overtaken.
_CLAIM_AMONG = 8
# How many runs' contexts (`_context`) a store remembers.
_CONTEXTS = 10_000
LOG = logging.getLogger("statechart_runtime.listeners")


class Attempt:
    """One attempt of a call: whether it reached its COMMIT (a failure from there on may
    come after the commit happened)."""

    __slots__ = ("committing",)

    def __init__(self) -> None:
        self.committing = False


class StoreTransactions:
    """The first layer of the run store (AsyncRunStore, run_store.py): what a backend
    provides (its `sql`, its `migrations`, how it connects and what its errors mean),
    opening and closing, leases, transactions and retries."""

    sql: Statements
    # MIGRATIONS[v]: the statements that turn store schema version v-1 into v (0: the
    # version table). Applied in one transaction when a writable store is opened.
    migrations: Sequence[Sequence[str]]
    # The driver's exception classes: any of them that a call meets becomes a StoreError.
    driver_errors: tuple[type[BaseException], ...] = ()
    # Whether `fire` computes the step before it takes the write lock and writes it only if
    # the run is unchanged (SQLite, whose write lock is the whole database's), rather than
    # holding the run from its read to its write (PostgreSQL's lock is the run's row).
    optimistic_fire = False
    # The channel a write of an earlier deadline is announced on (backends that can, with
    # `sql.announce_due`); None: workers of this store poll.
    due_channel: str | None = None

    def __init__(self, where: str, *, timeout: float, max_attempts: int = 5,
                 read_only: bool = False) -> None:
        self.where = where
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.read_only = read_only
        # The one time source of every call not given a time; restored runs get it too.
        self.clock: Clock = utcnow
        self._db: Any = None  # the synchronous store's one connection
        self._closed = False  # closed by `close()`: every call is refused, none reconnects
        self._warned: set[str] = set()  # what this store warned of already
        # Told of what its calls did, after they committed (statechart_runtime.listeners).
        self.listeners = Listeners()
        # Run id -> the context its listeners keep with it (`_context`): it never changes.
        self._contexts: collections.OrderedDict[str, str | None] = collections.OrderedDict()
        if is_async():
            pass  # opened by `await store.open()` (open_async_store does)
        else:
            self.open()  # type: ignore[unused-coroutine]

    # -- what a backend provides ---------------------------------------------------------

    async def _connect(self) -> Any:
        """A new connection, in autocommit mode (every transaction is begun and ended
        explicitly), read-only when the store is."""
        raise NotImplementedError

    def _failure(self, exc: BaseException, db: Any = None) -> str | None:
        """What a driver error (met on connection `db`, if any) means: "busy" (retry the
        transaction), "disconnected" (reconnect, then retry), "duplicate" (a unique key
        taken), "full" (no room left), "unstorable" (a value the database cannot hold),
        "damaged" (not a database, or a corrupt one), or None (anything else)."""
        return None

    async def _begin(self, db: Any, begin: str) -> None:
        await db.execute(begin)

    async def _many(self, db: Any, sql: str, rows: list[tuple[Any, ...]]) -> None:
        await db.executemany(sql, rows)

    async def _take_pooled(self) -> tuple[Any, Any]:
        """The asynchronous store: a connection of its pool for one transaction, and the
        pool to give it back to (`_give_back_pooled`; the store's pool may be another by
        then: closed, or closed and opened again)."""
        raise NotImplementedError

    async def _give_back_pooled(self, pool: Any, db: Any, failure: BaseException | None
                                ) -> None:
        """The asynchronous store: give `db` back to `pool` after its transaction, which
        raised `failure` (a task's cancellation too) or None."""
        raise NotImplementedError

    async def _open_pool(self) -> None:
        """The asynchronous store: open its pool of connections."""

    async def _close_pool(self) -> None:
        """The asynchronous store: close its pool of connections."""

    async def _refresh_pool(self) -> None:
        """The asynchronous store, after the database came back: replace its pool's
        connections that were lost."""

    async def _transact(self, db: Any, begin: str, call: Attempt,
                        work: Callable[[Any], Awaitable[T]]) -> T:
        """`work(db)` between BEGIN and COMMIT, or ROLLBACK on any exception (on a
        connection that died, the server rolls back by itself). No `begin`: no transaction
        (one statement that reads: autocommit makes it one of its own). A backend may run it
        whole elsewhere (the asynchronous SQLite store: in the connection's thread).
        Written out rather than as a context manager: it is on every call's path."""
        if not begin:
            return await work(db)
        try:
            # Inside: a call cancelled while its BEGIN is under way (on PostgreSQL) still
            # rolls back.
            await self._begin(db, begin)
            done = await work(db)
            call.committing = True  # a failure from here on may come after the commit
            await db.execute("COMMIT")
            call.committing = False
        except BaseException:
            with suppress(Exception):
                await db.execute("ROLLBACK")
            raise
        return done

    # -- opening and closing -------------------------------------------------------------

    async def open(self) -> None:
        """Connect, and create or upgrade the store's tables (a read-only store checks
        them): done when the store is made (the asynchronous store: awaited once)."""
        self._closed = False
        try:
            db = await self._connect()
        except StoreError:
            raise
        except Exception as exc:  # a file that cannot be opened, a server that is not there
            if self._failure(exc) == "disconnected":  # may be back later: not the caller's
                raise failures.unreachable(self.where, exc) from None
            raise failures.cannot_open(self.where, exc) from None
        if is_async():
            await db.close()
            await self._open_pool()
        else:
            self._db = db
        # The schema version found (set by the upgrade: a failed one says from which).
        found = [schema.SCHEMA_VERSION]
        try:
            if self.read_only:
                await self._read(self._check_schema)
            else:
                await self._with_retries(functools.partial(self._upgrade_schema, found),
                                         repeatable=True)
        except BaseException as exc:
            with suppress(Exception):
                await self.close()
            # A driver error while steps of a migration were run (on PostgreSQL it may
            # surface at the COMMIT): say which upgrade failed.
            if type(exc) is StoreError and found[0] < schema.SCHEMA_VERSION:
                raise schema.failed_upgrade(self.where, found[0], exc) from exc
            raise

    async def close(self) -> None:
        self._closed = True
        if is_async():
            await self._close_pool()
        elif self._db is not None:
            self._db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def now(self) -> dt.datetime:
        """The store's clock's time (aware; TypeError for a clock that is not)."""
        return now(self.clock)

    # -- listeners (statechart_runtime.listeners) -----------------------------------------

    def listen(self, listener: Listener) -> Listener:
        """Tell `listener` what this store's calls do from now on, after each commits
        (docs/observability.md); returns it."""
        return self.listeners.add(listener)

    def unlisten(self, listener: Listener) -> None:
        """Stop telling `listener` (ValueError if it does not listen here)."""
        self.listeners.remove(listener)

    async def _context(self, run_id: str) -> str | None:
        """The context a listener kept with the run when it was created (a tracing
        listener's trace context), or None; read only when a listener wants it, once per run
        (it never changes), after the call committed: a failure to read it is logged, the
        listeners are told without it."""
        if not self.listeners.wants_context:
            return None
        if run_id in self._contexts:
            return self._contexts[run_id]
        try:
            found = await self._rows(self.sql.read_context, (run_id,))
        except Exception:
            LOG.exception("the trace context of run %r could not be read", run_id)
            return None
        context = found[0][0] if found else None
        self._remember_context(run_id, context)
        return context

    def _remember_context(self, run_id: str, context: str | None) -> None:
        self._contexts[run_id] = context
        while len(self._contexts) > _CONTEXTS:
            self._contexts.popitem(last=False)

    def _start_steps(self, run: Run[Any, Any, Any], via: str, started: float,
                     head: tuple[Any, ...] | None, mark: Mark,
                     claim: work_core.WorkClaim | None = None,
                     run_context: str | None = None,
                     origins: Mapping[str, str] | None = None) -> dict[str, str] | None:
        """Before a write: a trace context for each macrostep `run` took (a tracing
        listener's span, started now, ended once the write committed), and the one of each
        state those steps entered (kept with its run_states row and the work items it
        enqueued); None when no listener gives one (the columns stay NULL). `head`: the
        run's head as a traced read gave it (`_head_checks`): the stored contexts of its
        states (what a fired timer links to) and the run's; `origins`: those states'
        contexts read before (a loaded run's), without `head`."""
        linked = self._linked(type(run))
        if not linked:
            return None
        if head is not None:
            run_context = observe.run_context(head)
            self._remember_context(run.record.runId, run_context)
        return heard.start_steps(run, self.listeners, via=via, started=started,
                                 revision=mark.revision + 1, trace_context=run_context,
                                 linked=linked, before=mark.active,
                                 origins=functools.partial(observe.origins, head or ())
                                 if origins is None else functools.partial(dict, origins),
                                 work=None if claim is None else claim.key,
                                 attempt=None if claim is None else claim.attempt,
                                 work_origin=None if claim is None else claim.origin_context)

    def _linked(self, run_class: type[Run[Any, Any, Any]]) -> frozenset[str]:
        """The states of `run_class` whose entering step a tracing listener's spans link
        back to (`observe.linked_states`); none when no listener gives contexts of steps:
        then nothing of it is read or written."""
        return observe.linked_states(run_class) if self.listeners.wants_step_context \
            else frozenset()

    def _head_checks(self, run_id: str, traced: bool) -> tuple[str, tuple[str, ...]]:
        """head_checks and its arguments, `traced` (the stored trace contexts too) or
        not."""
        if traced:
            return self.sql.head_checks_traced, (run_id, run_id, run_id)
        return self.sql.head_checks, (run_id, run_id)

    def _head_checked(self, run_class: type[Run[Any, Any, Any]]) -> str:
        """head_checked, traced when steps of `run_class` keep trace contexts."""
        return self.sql.head_checked_traced if self._linked(run_class) \
            else self.sql.head_checked

    # -- the store's own schema ----------------------------------------------------------

    async def _schema_version(self, db: Any) -> int:
        """The store's schema version, -1 for a database with no store tables at all."""
        has_meta = (await (await db.execute(self.sql.table_count, ("store_meta",)))
                    .fetchone())[0]
        row = (await (await db.execute(self.sql.read_version)).fetchone()) if has_meta \
            else None
        if row is None:
            if (await (await db.execute(self.sql.table_count, ("runs",))).fetchone())[0]:
                repair = self.sql.version_repair(schema.SCHEMA_VERSION, missing=True)
                raise schema.missing_version_row(
                    self.where, [repair] if has_meta else [self.migrations[0][0], repair])
            return -1
        return schema.checked_version(self.where, schema.parsed_version(
            self.where, row[0], self.sql.version_repair(schema.SCHEMA_VERSION,
                                                        missing=False)))

    async def _upgrade_schema(self, found: list[int], db: Any) -> None:
        """Bring the schema to SCHEMA_VERSION, every missing step in this one transaction
        (another store opening at the same time waits, then finds it done)."""
        if self.sql.lock_schema:
            await (await db.execute(self.sql.lock_schema)).fetchone()
        version = found[0] = await self._schema_version(db)
        if version == schema.SCHEMA_VERSION:
            return
        for statement in schema.upgrade_steps(self.migrations, version):
            await db.execute(statement)
        await db.execute(self.sql.write_version, (str(schema.SCHEMA_VERSION),))

    async def _check_schema(self, db: Any) -> None:
        schema.check_read_only(self.where, await self._schema_version(db))

    # -- transactions --------------------------------------------------------------------

    async def _lease(self) -> Any:
        """The synchronous store's connection for one transaction (connected again after
        it was lost); the asynchronous store takes one of its pool's (`_take_pooled`)."""
        failures.warn_in_event_loop(self.where, self._warned)
        if self._closed:
            raise failures.closed(self.where)
        if self._db is None:
            self._db = await self._connect()
        return self._db

    async def _with_retries(self, work: Callable[[Any], Awaitable[T]], *, repeatable: bool,
                            begin: str | None = None,
                            duplicate: Callable[[], StoreError] | None = None) -> T:
        """`work(db)` in a transaction on a connection `db`, retried when the database was
        busy (`max_attempts` times in all) or the connection was lost (reconnecting for up
        to `timeout` seconds). A connection lost while committing leaves the outcome
        unknown: the work is retried only when it is `repeatable` (a read, or a fire with an
        idempotency key). Any other driver error becomes a StoreError (`duplicate` makes the
        one of a unique key taken), after the transaction was rolled back: the store stays
        usable."""
        begin = self.sql.begin_write if begin is None else begin
        attempt = 0
        deadline: float | None = None
        while True:
            attempt += 1
            call = Attempt()
            db: Any = None
            try:
                if is_async():
                    # The lease written out, not as a context manager: it is on every
                    # call's path.
                    pool, db = await self._take_pooled()
                    try:
                        done = await self._transact(db, begin, call, work)
                    except BaseException as exc:  # a cancellation too
                        await self._give_back_pooled(pool, db, exc)
                        raise
                    await self._give_back_pooled(pool, db, None)
                    return done
                else:
                    db = await self._lease()
                    return await self._transact(db, begin, call, work)
            except Exception as exc:
                kind = self._failure(exc, db)
                if kind == "busy" and attempt < self.max_attempts:
                    continue
                if kind != "disconnected":
                    if isinstance(exc, UnicodeEncodeError):  # the driver encodes UTF-8
                        kind = "unstorable"
                    elif not isinstance(exc, self.driver_errors):
                        raise  # ours (a StoreError, a spec's RunError) as it is
                    raise failures.store_error(
                        self.where, exc, kind, committing=call.committing,
                        max_attempts=self.max_attempts, duplicate=duplicate) from exc
                if call.committing and not repeatable:
                    raise failures.outcome_unknown(self.where, exc) from exc
                if deadline is None:
                    deadline = time.monotonic() + self.timeout
                elif time.monotonic() > deadline:  # reconnected, and lost again, and again
                    raise failures.kept_failing(self.where, self.timeout, exc) from exc
                await self._reconnect(deadline, exc)

    async def _reconnect(self, deadline: float, cause: Exception) -> None:
        """Wait for the database to be back (a new connection succeeds), up to `deadline`:
        the synchronous store keeps that connection, the asynchronous one refreshes its
        pool."""
        delay = 0.05
        if not is_async():
            with suppress(Exception):
                self._db.close()
            self._db = None
        while True:
            try:
                db = await self._connect()
                if is_async():
                    await db.close()
                    await self._refresh_pool()
                else:
                    self._db = db
                return
            except Exception as exc:
                if self._failure(exc) != "disconnected" or time.monotonic() > deadline:
                    raise failures.cannot_reconnect(self.where, self.timeout, exc) from cause
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _read(self, work: Callable[[Any], Awaitable[T]]) -> T:
        return await self._with_retries(work, repeatable=True, begin=self.sql.begin_read)

    async def _rows(self, sql: str, args: Sequence[Any]) -> list[Any]:
        """The rows of one reading statement, in no transaction (the statement is its own
        snapshot)."""
        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(sql, args)).fetchall())
        return await self._with_retries(work, repeatable=True, begin="")

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"{self.where} was opened read-only: open it with "
                                "read_only=False to change runs")

    def store_failed(self, exc: BaseException) -> bool:
        """Whether `exc` is a failure of the store itself (busy, unreachable, full,
        damaged, an unknown outcome, its schema), not of the one run a call was about."""
        return failures.store_failed(exc, self._failure, self.driver_errors)
