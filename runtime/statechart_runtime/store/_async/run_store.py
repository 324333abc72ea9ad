"""The run store's logic that reads and writes: the API (`AsyncRunStore`), its transactions,
retries and reconnection, in no SQL dialect and for no driver in particular.

THE SOURCE of both APIs: `tools/async_to_sync.py` generates the synchronous `RunStore`
(store/_sync/run_store.py) from this module (`async def` -> `def`, no `await`, `asyncio.sleep`
-> `time.sleep`, the `if is_async():` branches dropped). Edit this file, then run
`python tools/async_to_sync.py`; a test fails while the generated module is stale.

What to read and write is decided without I/O in store/core (writes, restore, checks, rows,
schema, failures); every SQL text is a backend's (`self.sql`, store/sqlite, store/postgres),
and so is how it connects and what its driver's errors mean (`_failure`). The synchronous
store holds one connection; the asynchronous one a pool (`_take_pooled`), so that many tasks use
it at once: each call leases a connection for its transaction.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import functools
import json
import logging
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import suppress
from typing import Any, Self, TypeVar

from statechart_runtime import listeners as heard
from statechart_runtime.chart.values import Clock, is_aware, now, utcnow
from statechart_runtime.chart.work import work_of
from statechart_runtime.errors import (
    ConcurrentUpdate,
    LeaseLost,
    ReadOnlyStore,
    RunError,
    RunIdTaken,
    RunNotFound,
    StoreError,
    TimerFailed,
    WorkEnded,
)
from statechart_runtime.listeners import Listener, Listeners
from statechart_runtime.run import Run, spec_of, steps_without_machine
from statechart_runtime.store._async import is_async
from statechart_runtime.store.core import (
    failures,
    observe,
    pages,
    restore,
    rows,
    schema,
    versions,
    writes,
)
from statechart_runtime.store.core import watch as watch_core
from statechart_runtime.store.core import work as work_core
from statechart_runtime.store.core.checks import utc_text
from statechart_runtime.store.core.pages import RunFilter
from statechart_runtime.store.core.rows import HistoryRow, Stored, StoredRun
from statechart_runtime.store.core.statements import Statements
from statechart_runtime.store.core.writes import (
    Computed,
    Fired,
    Mark,
    Writes,
    json_value,
    mark_of,
    saved,
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


class AsyncRunStore:
    """The API and its logic, in no SQL dialect; a backend subclass (a module of its own)
    gives its `sql`, its `migrations`, and says how it connects and what its errors mean."""

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
                     run_context: str | None = None) -> dict[str, str] | None:
        """Before a write: a trace context for each macrostep `run` took (a tracing
        listener's span, started now, ended once the write committed), and the one of each
        state those steps entered (kept with its run_states row and the work items it
        enqueued); None when no listener gives one (the columns stay NULL). `head`: the
        run's head as a traced read gave it (`_head_checks`): the stored contexts of its
        states (what a fired timer links to) and the run's."""
        linked = self._linked(type(run))
        if not linked:
            return None
        if head is not None:
            run_context = observe.run_context(head)
            self._remember_context(run.record.runId, run_context)
        return heard.start_steps(run, self.listeners, via=via, started=started,
                                 revision=mark.revision + 1, trace_context=run_context,
                                 linked=linked, before=mark.active,
                                 origins=functools.partial(observe.origins, head or ()),
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

    # -- runs ----------------------------------------------------------------------------

    async def create(self, run: Run[Any, Any, Any]) -> None:
        """Store a run that is not stored yet (a new one, or one restored from a record):
        its record, state and history. StoreError if its run id is taken."""
        self._writable()
        record: Any = run.record
        spec = spec_of(run)
        created = Mark(0, 0, 0, (), rewrite=True)
        # What a listener keeps with the run (a tracing listener's context), made first.
        context = self.listeners.new_run_context(record.runId, spec.name) \
            if self.listeners.wants_context else None
        # The states it starts in (and their work items) were entered by its creation.
        contexts = None if context is None or not self._linked(type(run)) \
            else writes.Everywhere(context)

        async def work(db: Any) -> None:
            if await (await db.execute(self.sql.run_exists, (record.runId,))).fetchone():
                raise RunIdTaken(record.runId)
            at = utc_text(self.now())
            await db.execute(self.sql.insert_run, (record.runId, spec.name, spec.version,
                                                   record.status.value, at, at, context))
            await self._write(db, writes.writes(self.sql, run, created, at, contexts),
                              created, locked=True)

        # Two processes creating the same id at once: the loser's INSERT meets the winner's
        # key (on PostgreSQL, at a later statement of the pipeline): the same RunIdTaken.
        await self._with_retries(work, repeatable=False,
                                 duplicate=lambda: RunIdTaken(record.runId))
        saved(run, created, 1)
        if self.listeners:
            if self.listeners.wants_context:
                self._remember_context(record.runId, context)
            self.listeners.notify(observe.created(run, record.lastTransitionAt, context))
            observe.watch(self.listeners, run)  # steps taken on it next: told when saved

    async def load(self, run_class: type[RunT], run_id: str, **kwargs: Any) -> RunT:
        """The stored run `run_id`, restored as a `run_class` (keyword arguments go to
        `run_class.restore`: `model=`, `clock=`), with its whole history. The record is
        checked as `from_json` checks it, replaying the history (the spec's InvalidRecord);
        a run of another spec is refused the same way."""
        async def work(db: Any) -> RunT:
            row = await (await db.execute(self.sql.head, (run_id,))).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            steps = await (await db.execute(self.sql.steps, (run_id,))).fetchall()
            return restore.full_run(run_class, run_id, tuple(row), steps, self.clock, kwargs)
        run = await self._read(work)
        observe.watch(self.listeners, run)  # its steps in memory are told when it is saved
        return run

    async def _checked_head(self, db: Any, run_id: str, sql: str, *,
                            traced: bool = False) -> tuple[Any, ...]:
        """The run's head read by `sql`, with what `restore.head_run` checks it against:
        sent together, the second read once the row is held (a statement of its own: on
        PostgreSQL a SELECT ... FOR UPDATE that waited for another writer sees that writer's
        row, but its other tables as they were when it started). `traced`: with the stored
        trace contexts (`head_checks_traced`)."""
        return (await self._checked_head_and(db, run_id, sql, traced=traced))[0]

    async def _checked_head_and(self, db: Any, run_id: str, sql: str, *then: Any,
                                traced: bool = False) -> tuple[tuple[Any, ...], Any]:
        """`_checked_head`, and the row of `then` (a statement and its arguments) sent with
        them before any is waited for: one round trip on PostgreSQL, which runs them in
        order (a row `then` locks is locked after the run's)."""
        if self.sql.head_checked and sql == self.sql.head:
            # A read that takes no row lock (SQLite's: the write lock is the database's,
            # taken by BEGIN IMMEDIATE), so the head and its checks in one statement.
            checked = await db.execute(
                self.sql.head_checked_traced if traced else self.sql.head_checked,
                (run_id, run_id))
            after = await db.execute(*then) if then else None
            row = await checked.fetchone()
            if row is None:
                raise RunNotFound(run_id)
            return tuple(row), None if after is None else await after.fetchone()
        head = await db.execute(sql, (run_id,))
        checks = await db.execute(*self._head_checks(run_id, traced))
        after = await db.execute(*then) if then else None
        row = await head.fetchone()
        if row is None:
            raise RunNotFound(run_id)
        found = (*row, *(await checks.fetchone()))
        return found, None if after is None else await after.fetchone()

    async def _one_row(self, sql: str, args: tuple[Any, ...], run_id: str) -> tuple[Any, ...]:
        """The row of one reading statement, in no transaction; RunNotFound if none."""
        found = await self._rows(sql, args)
        if not found:
            raise RunNotFound(run_id)
        return tuple(found[0])

    async def _head_run(self, db: Any, run_class: type[RunT], run_id: str,
                        row: tuple[Any, ...]) -> RunT:
        """The run from its stored head (`restore.head_run`); a head of another spec version
        is read whole, with its steps, to be upgraded and checked."""
        if restore.needs_history(run_class, row):
            restore.head_data(run_class, run_id, row)  # a newer version's: refused first
            steps = await (await db.execute(self.sql.steps, (run_id,))).fetchall()
            return restore.full_run(run_class, run_id, row, steps, self.clock, {})
        return restore.head_run(run_class, run_id, row, self.clock)

    async def save(self, run: Run[Any, Any, Any]) -> int:
        """Save a run this store created or loaded; its new revision. ConcurrentUpdate if
        the stored run was saved since (by this process or another): nothing is written."""
        self._writable()
        started = time.time() if self.listeners else 0.0  # for the listeners
        mark = mark_of(run)
        # The stored contexts of its states are not read by `load`: its timers fired in
        # memory link to none.
        contexts = self._start_steps(run, "save", started, None, mark,
                                     run_context=await self._context(run.record.runId)) \
            if self._linked(type(run)) else None
        stored = writes.writes(self.sql, run, mark, utc_text(self.now()), contexts)

        async def work(db: Any) -> int:
            return await self._write(db, stored, mark, locked=False)

        revision = await self._with_retries(work, repeatable=False)
        saved(run, mark, revision)
        if self.listeners:
            observe.steps(self.listeners, run, "save", started,
                          await self._context(run.record.runId))
        return revision

    async def _write(self, db: Any, stored: Writes, mark: Mark, *, locked: bool) -> int:
        """`stored`, inside the caller's transaction; the new revision. Unless the caller
        holds the run's row (`locked`: it read the row in this transaction),
        ConcurrentUpdate if the stored revision is not `mark.revision`. No statement here
        needs a result but that check: PostgreSQL sends them all with the COMMIT, in one
        round trip."""
        if stored.announce is not None and self.due_channel is not None:
            await db.execute(self.sql.announce_due, (self.due_channel, stored.announce))
        if locked:
            await db.execute(self.sql.update_head, stored.head)
        elif not self.sql.update_head_if or (await db.execute(
                self.sql.update_head_if, (*stored.head, mark.revision))).rowcount != 1:
            # Written only if unchanged (one statement where the backend can), else which
            # of the two it is.
            found = await (await db.execute(self.sql.revision_locked,
                                            (stored.run_id,))).fetchone()
            if found is None:
                raise RunNotFound(stored.run_id)
            if found[0] != mark.revision:
                raise ConcurrentUpdate(stored.run_id, mark.revision, found[0])
            await db.execute(self.sql.update_head, stored.head)
        for sql, args in stored.statements:
            if len(args) == 1:  # the common case (one step), in one round trip
                await db.execute(sql, args[0])
            elif args:
                await self._many(db, sql, args)
        return mark.revision + 1

    # -- events --------------------------------------------------------------------------

    async def fire(self, run_class: type[RunT], run_id: str, event: Any, *,
                   idempotency_key: str | None = None, at: dt.datetime | None = None,
                   if_revision: int | None = None, **values: Any) -> Fired:
        """Load the run, send it `event` with `values` at `at` (default: now), save it: one
        transaction, holding the run's row from load to save, or (`optimistic_fire`: SQLite)
        written only if the run's revision is the one the step was computed from, and
        computed again from the new head if not (docs/runs.md). Timers due by then fire first,
        each at its due time (`Run.send_at`). An event the run refuses raises
        (EventNotAccepted, MissingField, ...) and changes nothing, except that the timers
        that fired before it are saved (they happened: an approval sent after its deadline
        finds, and leaves, the run timed out). With `idempotency_key`, an event already
        applied with that key for this run is not fired again (`applied` is False); the key
        reused for another event is a StoreError. With `if_revision`, the event is fired
        only if the run is at that revision (an answer given for what someone saw):
        ConcurrentUpdate otherwise, checked in the transaction that writes (a repeat of an
        applied key is answered as such first). A busy database is retried up to
        `max_attempts` times, a lost connection for up to `timeout` seconds."""
        self._writable()
        started = time.time() if self.listeners else 0.0  # for the listeners
        try:
            return await self._fire(run_class, run_id, event, idempotency_key, at,
                                    if_revision, values, started)
        except RunError as refusal:
            if self.listeners:
                self.listeners.notify(observe.refused(
                    run_class, run_id, event, refusal, "fire", started,
                    await self._context(run_id)))
            raise

    async def _fire(self, run_class: type[RunT], run_id: str, event: Any,
                    idempotency_key: str | None, at: dt.datetime | None,
                    if_revision: int | None, values: dict[str, Any], started: float
                    ) -> Fired:
        spec = spec_of(run_class)
        name = event.value if isinstance(event, spec.event_enum) else event
        ran: list[Any] = []  # the run the committed write stored
        try:
            key_values = "" if idempotency_key is None else json.dumps(
                {f: json_value(spec, f, v) for f, v in values.items()}, sort_keys=True)
        except ValueError as exc:  # an integer too long for JSON text
            raise writes.unstorable(run_id, exc) from None
        # Tells this call's own commit from an earlier call's (a key's retry after a lost
        # connection).
        call = "" if idempotency_key is None else uuid.uuid4().hex

        async def key_row(db: Any) -> Any:
            if idempotency_key is None:
                return None
            return await (await db.execute(self.sql.key_seen,
                                           (run_id, idempotency_key))).fetchone()

        async def compute(db: Any, row: tuple[Any, ...], seen: Any) -> Fired | Computed:
            """The call from the head `row` and the key's row (`seen`), nothing written yet:
            a Fired when there is nothing to write (the key was used already), else the run
            with the event taken (and the refusal, when timers fired before it)."""
            if seen is not None:
                if seen[0] != name or (seen[1] != key_values and not versions
                                       .same_key_values(spec, seen[1], key_values)):
                    raise StoreError(
                        f"idempotency key {idempotency_key!r} of run {run_id!r} was "
                        f"used for `{seen[0]}` {seen[1]}, not `{name}` {key_values}")
                # The call whose commit was cut off by a lost connection did apply it.
                mine = seen[2] == call
                return Fired(await self._head_run(db, run_class, run_id, row), mine, row[2],
                             [name] if mine else [])
            if if_revision is not None and row[2] != if_revision:
                raise ConcurrentUpdate(run_id, if_revision, row[2])
            run = await self._head_run(db, run_class, run_id, row)
            if self.listeners:
                heard.watch(run)
            mark = mark_of(run)
            when = at if at is not None else self.now()  # the one time of this call
            try:
                run.send_at(when, event, **values)
            except RunError as refusal:
                if not run.record.history:  # nothing happened: nothing to save
                    raise
                # Timers fired before the event was refused: they are kept.
                return (run, mark, utc_text(when), refusal,
                        self._start_steps(run, "fire", started, row, mark))
            return (run, mark, utc_text(when), None,
                    self._start_steps(run, "fire", started, row, mark))

        async def write(computed: Computed, stored: Writes, db: Any, *, locked: bool
                        ) -> Fired | RunError:
            run, mark, stamp, refusal, _ = computed
            ran.clear()
            revision = await self._write(db, stored, mark, locked=locked)
            if refusal is None and idempotency_key is not None:
                await db.execute(self.sql.insert_key, (run_id, idempotency_key, name,
                                                       key_values, revision, call, stamp))
            saved(run, mark, revision)
            ran.append(run)
            return refusal if refusal is not None else Fired(run, True, revision, [name])

        traced = bool(self._linked(run_class))

        async def work(db: Any) -> Fired | RunError:  # holding the run from read to write
            head = await self._checked_head(db, run_id, self.sql.head_locked, traced=traced)
            done = await compute(db, head, await key_row(db))
            if isinstance(done, Fired):
                return done
            return await write(done, writes.writes(self.sql, *done[:3], done[4]), db,
                               locked=True)

        async def read_unlocked(db: Any) -> tuple[tuple[Any, ...], Any]:
            return (await self._checked_head(db, run_id, self.sql.head, traced=traced),
                    await key_row(db))

        async def no_io(db: Any) -> None:
            return None

        repeatable = idempotency_key is not None
        done: Fired | RunError | None = None
        if self._computes_before_locking(run_class):
            # The step is computed before the write lock is taken, and written only if the
            # run's revision is still the one it was computed from; else computed again.
            for _ in range(self.max_attempts):
                # The head, what its checks read and the key, in one snapshot: with no key,
                # one statement (no transaction).
                if idempotency_key is None:
                    row, seen = await self._one_row(self._head_checked(run_class),
                                                    (run_id, run_id), run_id), None
                else:
                    row, seen = await self._read(read_unlocked)
                if restore.stored_version(run_id, row) < spec.version:
                    # An older version's head is upgraded from its whole history, read with
                    # it in one moment: holding the run.
                    break
                computed = await compute(None, row, seen)
                if isinstance(computed, Fired):
                    return computed
                # Encoded before the lock, too.
                stored = writes.writes(self.sql, *computed[:3], computed[4])
                try:
                    done = await self._with_retries(
                        functools.partial(write, computed, stored, locked=False),
                        repeatable=repeatable)
                    break
                except ConcurrentUpdate:  # another writer fired the run meanwhile: again
                    continue
        if done is None:  # overtaken every time, or a backend that holds the run
            done = await self._with_retries(work, repeatable=repeatable)
        if self.listeners and ran:
            observe.steps(self.listeners, ran[0], "fire", started, await self._context(run_id))
        if isinstance(done, RunError):
            raise done  # refused, after the timers that fired were committed
        return done

    async def fire_due(self, run_class: type[RunT], run_id: str,
                       now: dt.datetime | None = None) -> Fired:
        """Load the run, fire every timer due at `now` (default: the current time) with
        `run.fire_due(now)` (each step at its timer's due time), save it: one transaction,
        holding the run's row, or (`optimistic_fire`: SQLite) computed before the write lock
        and written only if the run is unchanged, as `fire` does. A run with no timer due
        fires nothing (`applied` False): two workers firing the same due run fire its timers
        once. A timer whose guards said no is saved as declined, so `next_due` moves on to
        the run's next timer."""
        self._writable()
        started = time.time() if self.listeners else 0.0  # for the listeners
        when = now if now is not None else self.now()  # the one time of this call
        done = None
        try:
            if self._computes_before_locking(run_class):
                done = await self._fire_due_unlocked(run_class, run_id, when, started)
            if done is None:
                done = await self._with_retries(
                    functools.partial(self._fire_due, run_class, run_id, when, started),
                    repeatable=False)
        except Exception as exc:
            # The run's own failure (a guard or an action raised), not the store's.
            if self.listeners and not isinstance(exc, RunNotFound) \
                    and not self.store_failed(exc):
                self.listeners.notify(observe.timers_failed(
                    run_class, run_id, exc, exc, started, await self._context(run_id)))
            raise
        if self.listeners and done.applied:
            observe.steps(self.listeners, done.run, "fire_due", started,
                          await self._context(run_id))
        return done

    def _computes_before_locking(self, run_class: type[Run[Any, Any, Any]]) -> bool:
        """Whether a step of `run_class` is computed before the write lock is taken and
        written only if the run's revision is unchanged (`optimistic_fire`), rather than
        computed holding the run: a run whose class has actions is held (they would run
        again when the step is computed again)."""
        return (self.optimistic_fire and bool(self.sql.head_checked)
                and steps_without_machine(run_class))

    async def _due_step(self, db: Any, run_class: type[RunT], run_id: str,
                        row: tuple[Any, ...], when: dt.datetime, started: float
                        ) -> tuple[RunT, Mark, tuple[str, ...], dict[str, str] | None] | Fired:
        """The run from its head `row` with its timers due at `when` fired, its mark, the
        events fired and the trace contexts of the states entered (`_start_steps`); a Fired
        (`applied` False) when nothing is to be written: no timer was due, and none was
        declined."""
        run = await self._head_run(db, run_class, run_id, row)
        if self.listeners:
            heard.watch(run)
        mark = mark_of(run)
        armed = list(run.timers)
        events = tuple(run.fire_due(when))
        if not events and list(run.timers) == armed:  # nothing due (or no timers at all)
            return Fired(run, False, row[2])
        # A declined timer (its guards said no) is saved even when nothing fired: it no
        # longer counts for `next_due`, so it cannot keep other runs' timers waiting.
        return run, mark, events, self._start_steps(run, "fire_due", started, row, mark)

    async def _fire_due(self, run_class: type[RunT], run_id: str, when: dt.datetime,
                        started: float, db: Any) -> Fired:
        """fire_due holding the run, inside the caller's write transaction."""
        head = await self._checked_head(db, run_id, self.sql.head_locked,
                                        traced=bool(self._linked(run_class)))
        due = await self._due_step(db, run_class, run_id, head, when, started)
        if isinstance(due, Fired):
            return due
        return await self._write_due(
            due, writes.writes(self.sql, *due[:2], utc_text(when), due[3]), db, locked=True)

    async def _write_due(self, due: tuple[RunT, Mark, tuple[str, ...], Any], stored: Writes,
                         db: Any, *, locked: bool) -> Fired:
        """Write a run's due timers fired (`_due_step`, encoded as `stored`), inside the
        caller's write transaction."""
        run, mark, events, _ = due
        revision = await self._write(db, stored, mark, locked=locked)
        saved(run, mark, revision)
        return Fired(run, bool(events), revision, list(events))

    async def _fire_due_unlocked(self, run_class: type[RunT], run_id: str,
                                 when: dt.datetime, started: float, *, claimed: bool = False
                                 ) -> Fired | None:
        """fire_due computed from the head before the write lock, written only if the run's
        revision is unchanged, computed again if not, up to `max_attempts` times; None when
        overtaken every time. A run `claimed` (by fire_next_due's read) is tried once, and
        None also when it has nothing due any more (another writer fired it since the
        claim): the caller claims again."""
        for _ in range(1 if claimed else self.max_attempts):
            row = await self._one_row(self._head_checked(run_class), (run_id, run_id), run_id)
            if restore.stored_version(run_id, row) < spec_of(run_class).version:
                # An older version's head is upgraded from its whole history, read with it
                # in one moment: holding the run.
                return await self._with_retries(
                    functools.partial(self._fire_due, run_class, run_id, when, started),
                    repeatable=False)
            due = await self._due_step(None, run_class, run_id, row, when, started)
            if isinstance(due, Fired):
                return None if claimed else due
            # Encoded before the lock.
            stored = writes.writes(self.sql, *due[:2], utc_text(when), due[3])
            try:
                return await self._with_retries(
                    functools.partial(self._write_due, due, stored, locked=False),
                    repeatable=False)
            except ConcurrentUpdate:  # another worker fired the run meanwhile: again
                continue
        return None

    async def fire_next_due(self, run_class: type[Run[Any, Any, Any]],
                            now: dt.datetime | None = None, *, skip: Sequence[str] = ()
                            ) -> Fired | None:
        """Claim the run of `run_class`'s spec whose timer is due first (at `now`), fire its
        due timers and save it, in one transaction; None when no run is due. On PostgreSQL
        the claim skips runs other workers hold (FOR UPDATE SKIP LOCKED), so any number of
        workers can call this in a loop and never fire one timer twice. On SQLite the claim
        is a read, and the run is fired as `fire_due` fires it (computed before the write
        lock, written only if unchanged; a run another worker fired meanwhile is claimed
        again). Runs in `skip` are passed over; a claimed run that cannot be fired raises
        TimerFailed (naming it: skip it to go on), with nothing saved; failures of the store
        itself (busy, away, full, damaged) are raised as they are."""
        self._writable()
        at = now if now is not None else self.now()  # claimed and fired at one time
        if not is_aware(at):  # the caller's mistake, not a TimerFailed of the run claimed
            raise TypeError(f"fire_next_due: `now` must be a datetime with a time zone, got "
                            f"{at!r}")
        spec = spec_of(run_class)  # runs of a newer version are passed over: not ours
        args = (spec.name, spec.version, utc_text(at), *self.sql.skip_arg(skip))
        claim = self.sql.claim_due(skip=bool(skip), limit=1)
        # A claim that is only a read: workers that read at once compute the same run, and
        # all but one are overtaken. Those claim again one of the first few due at random
        # (all are due), not all of them the next one.
        first_due = self.sql.claim_due(skip=bool(skip), limit=_CLAIM_AMONG)
        claimed: list[str] = []  # the run this attempt claimed
        started = time.time() if self.listeners else 0.0  # for the listeners

        async def work(db: Any) -> Fired | None:  # claimed and fired holding the run
            claimed.clear()
            row = await (await db.execute(claim, args)).fetchone()
            if row is None:
                return None
            claimed.append(row[0])
            return await self._fire_due(run_class, row[0], at, started, db)

        async def unlocked() -> Fired | None:  # claimed by a read, fired as fire_due does
            for attempt in range(self.max_attempts):
                claimed.clear()
                found = await self._rows(first_due if attempt else claim, args)
                if not found:
                    return None
                claimed.append(random.choice(found)[0])
                # Overtaken, or found with nothing due (another writer fired the run since
                # the claim): claimed again.
                done = await self._fire_due_unlocked(run_class, claimed[0], at, started,
                                                     claimed=True)
                if done is not None:
                    return done
            return await self._with_retries(work, repeatable=False)  # overtaken every time

        try:
            if self._computes_before_locking(run_class):
                done = await unlocked()
            else:
                done = await self._with_retries(work, repeatable=False)
            if self.listeners and done is not None and done.applied:
                observe.steps(self.listeners, done.run, "fire_due", started,
                              await self._context(done.run.record.runId))
            return done
        except Exception as exc:
            # The claimed run's own failure (a guard raised, a value or a row the database
            # refuses), unless it is the store's: then no other run would fare better.
            if not claimed or isinstance(exc, TimerFailed) or self.store_failed(exc):
                raise
            failed = TimerFailed(claimed[0], f"{type(exc).__name__}: {exc}")
            failed.__cause__ = exc  # as the listeners see it, too
            if self.listeners:
                self.listeners.notify(observe.timers_failed(
                    run_class, claimed[0], failed, exc, started,
                    await self._context(claimed[0])))
            raise failed from exc

    async def next_due(self, run_class: type[Run[Any, Any, Any]], *,
                       skip: Sequence[str] = ()) -> dt.datetime | None:
        """When the earliest armed timer of the runs `run_class` may fire is due (runs in
        `skip` and runs of a newer spec version left out), or None: how long a worker may
        sleep."""
        spec = spec_of(run_class)
        sql = self.sql.next_due(skip=bool(skip))
        args = [spec.name, spec.version, *self.sql.skip_arg(skip)]

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(sql, args)).fetchall())

        found = await self._read(work)
        return rows.column_time(found[0][0], "runs.next_due", found[0][1]) if found \
            else None

    # -- work items (store/core/work.py) -------------------------------------------------

    async def claim_work(self, run_class: type[Run[Any, Any, Any]], *, owner: str,
                         handlers: Sequence[str] | None = None,
                         now: dt.datetime | None = None) -> work_core.WorkClaim | None:
        """Claim the work item of `run_class`'s spec ready first (pending since longest, or
        its lease expired), of the `handlers` given (default: all of the spec's), for
        `owner` (a name that says which worker holds it): its lease lasts the state's work
        `heartbeat`, or its `timeout` without one, from `now`. None when no item is ready.
        The claim raises the item's fencing token: calls of an earlier claim are refused
        from now on (LeaseLost). An expired lease counts as a failed attempt; when that
        used the item's attempts up, the claim is `exhausted`: end it with `fail_work`
        (which fires the work's error event). PostgreSQL skips the items other workers
        hold (FOR UPDATE SKIP LOCKED); SQLite's write lock makes the claim a turn. Items of
        runs stored by a newer version of the spec are left to its workers (a rolling
        deploy); those of older versions are claimed, their runs upgraded by the outcome."""
        self._writable()
        at = now if now is not None else self.now()
        if not is_aware(at):
            raise TypeError(f"claim_work: `now` must be a datetime with a time zone, got "
                            f"{at!r}")
        table = work_of(run_class)
        states = [w.state for w in table if handlers is None or w.handler in handlers]
        if not states:
            return None
        spec = spec_of(run_class)
        args = (spec.name, utc_text(at), *self.sql.skip_arg(states), spec.version)
        claim = self.sql.claim_work()
        expired: list[str | None] = [None]  # whose lease the claim found expired

        async def take(db: Any) -> work_core.WorkClaim | None:
            row = await (await db.execute(claim, args)).fetchone()
            if row is None:
                return None
            key, run_id, state, handler, attempts, failures, token, held_by, lease, \
                enqueued, run_context = row[:11]
            expired[0] = held_by
            state_work = table.get(state)
            assert state_work is not None  # the claim reads the class's work states only
            exhausted = False
            if held_by is not None:  # its lease expired: that attempt failed
                await db.execute(self.sql.end_attempt, (lease, work_core.LEASE_LOST, None, key,
                                                        attempts))
                failures += 1
                exhausted = state_work.retry_delay(failures) is None
            until = at + state_work.lease
            await db.execute(self.sql.claim_item, (attempts + 1, failures, token + 1, owner,
                                                   utc_text(until), utc_text(until), key))
            await db.execute(self.sql.insert_attempt, (key, attempts + 1, owner,
                                                       utc_text(at)))
            record = None  # the handler's record, read with the item: unless the run is of
            head = tuple(row[11:])  # another version (upgraded when read) or unreadable, when
            if not restore.needs_history(run_class, head):  # the worker's head() says why
                with suppress(RunError, StoreError):
                    record = restore.head_record(run_class, run_id, head)
            if self.listeners.wants_context:
                self._remember_context(run_id, run_context)  # read with it: no read after
            return work_core.WorkClaim(key, run_id, state, handler, attempts + 1, token + 1,
                                       owner, until, exhausted, record, enqueued)

        taken = await self._with_retries(take, repeatable=False)
        if self.listeners and taken is not None:
            self.listeners.notify(observe.claimed(run_class, taken, at, expired[0],
                                                  await self._context(taken.run_id)))
        return taken

    async def _lease_lost(self, run_class: type[Run[Any, Any, Any]],
                          claim: work_core.WorkClaim, call: str, exc: LeaseLost) -> None:
        if self.listeners:
            self.listeners.notify(observe.lease_lost(run_class, claim, call, exc,
                                                     await self._context(claim.run_id)))

    async def heartbeat_work(self, run_class: type[Run[Any, Any, Any]],
                             claim: work_core.WorkClaim, now: dt.datetime | None = None
                             ) -> dt.datetime:
        """Extend `claim`'s lease by the work's heartbeat (its timeout without one) from
        `now`; the new expiry. LeaseLost (WorkEnded) if the claim no longer holds the item:
        stop working on it."""
        self._writable()
        at = now if now is not None else self.now()
        lease = work_core.work_of_state(work_of(run_class), claim.state, claim.key).lease

        async def extend(db: Any) -> dt.datetime:
            row = await (await db.execute(self.sql.item_locked, (claim.key,))).fetchone()
            work_core.check_held(claim, None if row is None else row[:5], at)
            until = at + lease
            await db.execute(self.sql.extend_lease, (utc_text(until), utc_text(until),
                                                     claim.key))
            return until

        try:
            return await self._with_retries(extend, repeatable=True)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "heartbeat_work", exc)
            raise

    async def release_work(self, run_class: type[Run[Any, Any, Any]],
                           claim: work_core.WorkClaim, now: dt.datetime | None = None) -> None:
        """Give the item back unfinished (a worker shutting down): claimable again at once,
        the attempt not counted as failed. LeaseLost (WorkEnded) if the claim no longer
        holds the item."""
        self._writable()
        at = now if now is not None else self.now()

        async def release(db: Any) -> None:
            row = await (await db.execute(self.sql.item_locked, (claim.key,))).fetchone()
            work_core.check_held(claim, None if row is None else row[:5], at)
            await db.execute(self.sql.end_attempt, (utc_text(at), work_core.RELEASED, None,
                                                    claim.key, claim.attempt))
            await db.execute(self.sql.release_item, (utc_text(at), claim.key))

        try:
            await self._with_retries(release, repeatable=False)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "release_work", exc)
            raise

    async def _held_item(self, db: Any, run_class: type[RunT], claim: work_core.WorkClaim,
                         at: dt.datetime) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The claimed item's run head and the item's row, in the caller's write
        transaction, both held: the run first (as every step of the run takes them, which
        ends its items), then the item (read with the head: one round trip on PostgreSQL).
        Refused unless the claim still holds the item."""
        head, row = await self._checked_head_and(db, claim.run_id, self.sql.head_locked,
                                                 self.sql.item_locked, (claim.key,),
                                                 traced=bool(self._linked(run_class)))
        work_core.check_held(claim, None if row is None else row[:5], at)
        return head, tuple(row)

    async def _step_held(self, db: Any, run_class: type[RunT], claim: work_core.WorkClaim,
                         head: tuple[Any, ...], at: dt.datetime, event: str,
                         values: dict[str, Any], started: float
                         ) -> tuple[RunT, Mark, Writes]:
        """The claimed item's run from its held `head` with `event` taken at `at`, and what
        writes it; the run's refusal raises (nothing written)."""
        run = await self._head_run(db, run_class, claim.run_id, head)
        if self.listeners:
            heard.watch(run)
        mark = mark_of(run)
        run.send_at(at, event, **values)
        contexts = self._start_steps(run, "work", started, head, mark, claim)
        return run, mark, writes.writes(self.sql, run, mark, utc_text(at), contexts)

    async def complete_work(self, run_class: type[RunT], claim: work_core.WorkClaim,
                            event: Any, *, now: dt.datetime | None = None,
                            **values: Any) -> Fired:
        """Apply the handler's outcome: fire `event` (one of the work's `outcomes`) with
        `values` on the item's run and end the item, in one transaction, only if `claim`
        still holds it: LeaseLost (WorkEnded) otherwise, with nothing applied, so an
        outcome is applied once. OutcomeNotAllowed for an event that is not an outcome of
        the work; the run's refusal (EventNotAccepted, MissingField, ...) as `fire` raises
        it: nothing written, the claim still holds the item. A call repeated after its
        commit was cut off (a lost connection) finds its outcome applied: `applied` False."""
        self._writable()
        name = event.value if isinstance(event, spec_of(run_class).event_enum) else event
        state_work = work_core.work_of_state(work_of(run_class), claim.state, claim.key)
        work_core.check_outcome(state_work, claim.key, name)
        at = now if now is not None else self.now()

        async def apply(db: Any) -> Fired:
            try:
                head, row = await self._held_item(db, run_class, claim, at)
            except WorkEnded:
                found = await (await db.execute(self.sql.item_locked, (claim.key,))
                               ).fetchone()
                if found is None or found[4] != name or found[0] != claim.token:
                    raise
                # This claim's own outcome, applied by a call whose commit was cut off.
                head = await self._checked_head(db, claim.run_id, self.sql.head)
                return Fired(await self._head_run(db, run_class, claim.run_id, head), False,
                             head[2])
            stamp = utc_text(at)
            # The item ends by its outcome before the step's own writes (which end the
            # items of the states it leaves: this one is no longer open).
            await db.execute(self.sql.end_attempt, (stamp, work_core.APPLIED, None, claim.key,
                                                    claim.attempt))
            await db.execute(self.sql.end_item, (stamp, name, row[6], None, claim.key))
            run, mark, stored = await self._step_held(db, run_class, claim, head, at, name,
                                                      values, started)
            revision = await self._write(db, stored, mark, locked=True)
            saved(run, mark, revision)
            return Fired(run, True, revision, [name])

        started = time.time() if self.listeners else 0.0  # for the listeners
        try:
            done = await self._with_retries(apply, repeatable=True)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "complete_work", exc)
            raise
        except RunError as refusal:
            if self.listeners:
                self.listeners.notify(observe.refused(
                    run_class, claim.run_id, name, refusal, "work", started,
                    await self._context(claim.run_id), claim))
            raise
        if self.listeners:
            context = await self._context(claim.run_id)
            observe.steps(self.listeners, done.run, "work", started, context, claim)
            self.listeners.notify(observe.completed(run_class, claim, name, done.applied,
                                                    started, context))
        return done

    async def fail_work(self, run_class: type[RunT], claim: work_core.WorkClaim, error: str, *,
                        now: dt.datetime | None = None, **values: Any) -> work_core.Failure:
        """Record the claim's attempt as failed with `error` (why, for people): the item is
        claimable again after the work's retry backoff while attempts remain; once they are
        used up it ends, and the work's `error` event is fired on the run with `values` in
        the same transaction (the run's refusal of it is kept in the item's last error, and
        the run stays). LeaseLost (WorkEnded) if the claim no longer holds the item."""
        self._writable()
        state_work = work_core.work_of_state(work_of(run_class), claim.state, claim.key)
        at = now if now is not None else self.now()

        async def record(db: Any) -> work_core.Failure:
            head, row = await self._held_item(db, run_class, claim, at)
            # An exhausted claim's lost lease was counted when it was claimed.
            failures = row[6] if claim.exhausted else row[6] + 1
            stamp = utc_text(at)
            await db.execute(self.sql.end_attempt, (stamp, work_core.FAILED, error, claim.key,
                                                    claim.attempt))
            delay = None if claim.exhausted else state_work.retry_delay(failures)
            if delay is not None:
                await db.execute(self.sql.retry_item, (failures, utc_text(at + delay), error,
                                                       claim.key))
                return work_core.Failure(at + delay, None, None)
            if state_work.error is None:
                await db.execute(self.sql.end_item, (stamp, work_core.ENDED_FAILED, failures, error,
                                                     claim.key))
                return work_core.Failure(None, None, None)
            try:
                step = await self._step_held(db, run_class, claim, head, at,
                                             state_work.error, values, started)
            except RunError as refusal:
                why = f"{error}; its error event `{state_work.error}` was refused: {refusal}"
                await db.execute(self.sql.end_item, (stamp, work_core.ENDED_FAILED, failures, why,
                                                     claim.key))
                return work_core.Failure(None, None, refusal)
            await db.execute(self.sql.end_item, (stamp, state_work.error, failures, error,
                                                 claim.key))
            run, mark, stored = step
            revision = await self._write(db, stored, mark, locked=True)
            saved(run, mark, revision)
            return work_core.Failure(None, Fired(run, True, revision, [state_work.error]), None)

        started = time.time() if self.listeners else 0.0  # for the listeners
        try:
            failure = await self._with_retries(record, repeatable=False)
        except LeaseLost as exc:
            await self._lease_lost(run_class, claim, "fail_work", exc)
            raise
        if self.listeners:
            context = await self._context(claim.run_id)
            if failure.fired is not None:
                observe.steps(self.listeners, failure.fired.run, "work", started, context,
                              claim)
            if failure.refused is not None and state_work.error is not None:
                self.listeners.notify(observe.refused(
                    run_class, claim.run_id, state_work.error, failure.refused, "work",
                    started, context, claim))
            self.listeners.notify(observe.failed(run_class, claim, error, failure, started,
                                                 context))
        return failure

    async def work_items(self, run_id: str) -> list[work_core.WorkItem]:
        """The run's work items, oldest first, each with its attempts: what is pending,
        who holds what until when, what failed and why, how each ended."""
        async def read(db: Any) -> tuple[list[Any], list[Any]]:
            items = list(await (await db.execute(self.sql.items_of_run, (run_id,))).fetchall())
            attempts = list(await (await db.execute(self.sql.attempts_of_run, (run_id,))
                                   ).fetchall())
            return items, attempts

        items, attempts = await self._read(read)
        return work_core.items_of(items, attempts)

    async def work_counts(self, spec: str) -> dict[tuple[str, str], int]:
        """How many open work items of the spec named `spec` each handler has, by status:
        {(handler, `pending` or `claimed`): count} (one read of the open items' index:
        statechart_runtime.metrics' queue depth)."""
        found = await self._rows(self.sql.work_counts, (spec,))
        return {(row[0], row[1]): int(row[2]) for row in found}

    # -- queries -------------------------------------------------------------------------

    async def history(self, run_id: str, *, event: str | None = None,
                      since: dt.datetime | None = None, until: dt.datetime | None = None,
                      first: int = 0, limit: int | None = None) -> list[HistoryRow]:
        """The stored transitions of `run_id` in order, optionally only those of `event`
        and those at or after `since` and before `until`; from the step of index `first`,
        at most `limit` of them (a page of a long history)."""
        sql = self.sql.history(event=event is not None, since=since is not None,
                               until=until is not None, first=bool(first), limit=limit)
        args: list[Any] = [run_id]
        if event is not None:
            args.append(getattr(event, "value", event))
        if since is not None:
            args.append(utc_text(since))
        if until is not None:
            args.append(utc_text(until))
        if first:
            args.append(int(first))

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(sql, args)).fetchall())

        return rows.history_rows(await self._read(work))

    # -- watching the steps as they commit (store/core/watch.py) ---------------------------

    async def watch_position(self) -> str:
        """The position of the end of the steps committed now: `changes` and `watch` after
        it give the steps that commit later (on PostgreSQL also those that transactions
        younger than one still running committed just before)."""
        async def work(db: Any) -> Any:
            return await (await db.execute(self.sql.watch_end)).fetchone()

        found = await self._read(work)
        return watch_core.position_text((int(found[0]), found[1], int(found[2])))

    async def changes(self, run_class: type[Run[Any, Any, Any]], *,
                      after: str = watch_core.BEGINNING, limit: int = 100
                      ) -> list[watch_core.Change]:
        """The steps of the spec's runs after position `after` (a `Change.position`, or
        BEGINNING), in the order they committed, at most `limit`: one read, at once.
        PostgreSQL gives a step once every transaction older than its own has ended (no
        step can then still commit before it). BadPosition for a position no Change gave."""
        position = watch_core.parse_position(after)
        args = (spec_of(run_class).name, *position, max(1, int(limit)))

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(self.sql.watch_steps, args)).fetchall())

        return watch_core.changes(await self._read(work))

    async def watch(self, run_class: type[Run[Any, Any, Any]], *, after: str | None = None,
                    poll: float = 1.0, batch: int = 100) -> AsyncIterator[watch_core.Change]:
        """The steps of the spec's runs as they commit, in commit order, without end: after
        position `after` (a `Change.position` kept from an earlier watch, BEGINNING for
        every step; None: from now). Between reads it sleeps up to `poll` seconds, woken on
        PostgreSQL by the notice every step sends at its commit. A step comes again, with
        its run and index, only if its run's history is rewritten (an upgrade to a newer
        spec version): key what you do by (run_id, index). A failure of the store ends it
        with the store's error: watch again from the last position. Close it when done
        (`contextlib.aclosing`, or `break` out of its loop, which closes it)."""
        position = watch_core.parse_position(after) if after is not None else \
            watch_core.parse_position(await self.watch_position())
        listener: Any = None
        try:
            while True:
                if listener is None and self.due_channel is not None:
                    # Listening before reading: a step committed after the read wakes us.
                    with suppress(*self.driver_errors, OSError):
                        listener = await self.listening_connection(steps=True)
                found = await self.changes(run_class, after=watch_core.position_text(position),
                                           limit=batch)
                for change in found:
                    position = watch_core.parse_position(change.position)
                    yield change
                if len(found) == batch:
                    continue  # more are there already
                listener = await self._wait_for_steps(listener, poll)
        finally:
            if listener is not None:
                with suppress(Exception):
                    await listener.close()

    async def listening_connection(self, *, steps: bool = False) -> Any:
        """A connection of its own that LISTENs for the store's notices (backends that
        announce: see `due_channel`)."""
        raise StoreError(f"{self.where} cannot listen for notices: its workers and watches poll")

    async def _wait_for_steps(self, listener: Any, seconds: float) -> Any:
        """Sleep up to `seconds`, or until the listener gets a notice; the listener to go on
        with (None once its connection failed: plain sleeps until `watch` listens again)."""
        if listener is None:
            await asyncio.sleep(seconds)
            return None
        try:
            async for _notice in listener.notifies(timeout=seconds, stop_after=1):
                pass
            return listener
        except Exception:  # the connection went away: poll, and listen again next time
            with suppress(Exception):
                await listener.close()
            await asyncio.sleep(seconds)
            return None

    # -- pages, for consoles (store/core/pages.py's RunFilter) -------------------------

    async def runs_page(self, conditions: RunFilter = pages.ANY_RUN, *, by_due: bool = False,
                        after: tuple[Any, ...] | None = None, limit: int = 50
                        ) -> list[StoredRun]:
        """At most `limit` (up to 500) stored runs matching `conditions` (a `RunFilter`, in
        the names the runs are stored in), sorted by id, or with `by_due` by when their
        earliest timer is due (runs with none armed left out); after the cursor `after`:
        `(run_id,)`, or `(next_due, run_id)` with `by_due`, of the last run of the previous
        page. One snapshot; no record is loaded."""
        shape, args = pages.filter_args(conditions)
        sql = self.sql.runs_page(self.sql.run_filter(**shape), by_due=by_due,
                                 after=after is not None, limit=pages.checked_limit(limit))
        args += pages.after_args(by_due, after)

        async def work(db: Any) -> tuple[list[Any], list[Any]]:  # one snapshot
            found = list(await (await db.execute(sql, args)).fetchall())
            if not found:
                return found, []
            ids = [row[0] for row in found]
            states = await (await db.execute(self.sql.states_of(len(ids)), ids)).fetchall()
            return found, list(states)

        found, state_rows = await self._read(work)
        return rows.page(found, state_rows)

    async def status_counts(self, conditions: RunFilter = pages.ANY_RUN, *,
                            statuses: Sequence[str] | None = None, cap: int | None = None
                            ) -> dict[str, int]:
        """How many stored runs matching `conditions` (its `status` aside) report each
        status (the `status` column), by status (statuses no run reports left out). With
        `statuses`, only those, each counted up to `cap`: a read bounded by `cap` per
        status, whatever the number of runs (a count equal to `cap` means at least)."""
        shape, args = pages.filter_args(conditions, with_status=False)
        where = self.sql.run_filter(**shape)
        if statuses is None:
            found = await self._rows(self.sql.status_counts(where), args)
            return {status: int(count) for status, count in found}
        if not statuses:
            return {}
        every: list[Any] = []
        for status in statuses:
            every += [status, *args, status]
        found = await self._rows(self.sql.status_counts_capped(where, len(statuses), cap),
                                 every)
        return {status: int(count) for status, count in found if count}

    async def moves(self, run_id: str, *, first: int = 0) -> list[pages.Move]:
        """The run's steps from index `first` as `(index, event, source, target, kind)`,
        read without parsing their times or values: what a walk over the chart needs (the
        console's configuration after each step). Empty for an unknown run."""
        found = await self._rows(self.sql.moves(), [run_id, int(first)])
        return [(int(i), e, s, t, k or None) for i, e, s, t, k in found]

    async def head(self, run_class: type[RunT], run_id: str) -> Fired:
        """The stored run restored from its head alone, as `fire` restores it (its record's
        history is empty, its checks are `fire`'s; a run of an older spec version is
        upgraded from its whole history), as a `Fired` with `applied` False and the stored
        `revision`: the run as a console shows it, in a time that does not grow with its
        history. RunNotFound if there is none."""
        async def work(db: Any) -> Fired:
            row = await self._checked_head(db, run_id, self.sql.head)
            return Fired(await self._head_run(db, run_class, run_id, row), False, row[2])
        return await self._read(work)

    async def find(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
                   state: Any = None, tag: str | None = None) -> list[str]:
        """The ids (sorted) of the stored runs of `run_class`'s spec whose record reports
        `status` (its top-level state, or a name of its status vocabulary), of which `state`
        is active (at any depth), and of which a state carrying
        `tag` is active: every condition given must hold. Names are those of the class's spec
        version (UnknownName otherwise); runs stored at an older version are answered as
        their migration renames them, runs of a newer version are not answered."""
        query = self.find_sql(run_class, status=status, state=state, tag=tag)
        if query is None:
            return []
        spec = spec_of(run_class)

        async def work(db: Any) -> tuple[list[Any], list[Any]]:  # one snapshot, round trip
            ids = await db.execute(*query)
            # The runs of other versions (index runs_by_version): older ones with their
            # states, newer ones by id alone. None, in the usual case.
            others = await db.execute(self.sql.other_versions,
                                      (spec.name, spec.version, spec.name, spec.version))
            return list(await ids.fetchall()), list(await others.fetchall())

        found, others = await self._read(work)
        return versions.found(spec, found, others, status=status, state=state, tag=tag)

    def find_sql(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
                 state: Any = None, tag: str | None = None
                 ) -> tuple[str, list[Any]] | None:
        """The query `find` runs, and its arguments (None: nothing can match): for EXPLAIN.
        One set of ids per condition, intersected; each is read from an index that gives the
        ids in order (runs_by_status, run_states_by_state)."""
        spec = spec_of(run_class)
        args: list[Any] = []
        if status is not None:
            args += [spec.name, versions.status_name(spec, status)]
        if state is not None:
            args += [spec.name, versions.state_name(spec, state)]
        tagged: list[str] = []
        if tag is not None:
            tagged = sorted(spec.tags.get(tag, ()))
            if not tagged:
                return None
            args += [spec.name, *tagged]
        if status is None and state is None and tag is None:
            args.append(spec.name)
        return self.sql.find(status=status is not None, state=state is not None,
                             tagged=len(tagged)), args

    async def due(self, run_class: type[Run[Any, Any, Any]], now: dt.datetime | None = None,
                  *, limit: int = 100) -> list[str]:
        """The ids of the runs of `run_class`'s spec with a timer due at `now` (default: the
        current time), earliest first, at most `limit`. Only a list: `fire_next_due` claims
        and fires them."""
        when = utc_text(now if now is not None else self.now())
        spec = spec_of(run_class)

        async def work(db: Any) -> list[Any]:
            return list(await (await db.execute(
                self.sql.due, (spec.name, spec.version, when, limit))).fetchall())

        return [row[0] for row in await self._read(work)]

    # -- read-only views for tools (`statechart runs`): no Run class needed ------------

    async def stored_runs(self, spec: str | None = None) -> list[StoredRun]:
        """Every stored run (of the spec named `spec`), sorted by id, from the store's
        columns: no record is loaded or checked."""
        queries = self.sql.stored_runs(spec=spec is not None)
        args = [] if spec is None else [spec]

        async def work(db: Any) -> list[list[Any]]:
            return [list(await (await db.execute(sql, args)).fetchall()) for sql in queries]

        found = await self._read(work)
        return rows.stored_runs(*found)

    async def stored_record(self, run_id: str) -> Stored:
        """The run `run_id` as stored, whatever its spec: its columns and its whole record as
        parsed JSON, its history from the `history` table, NOT checked (a tool checks it
        against a spec it chooses). RunNotFound if there is none; StoreError if the record is
        not a JSON object, holds a history other than the table's, or a step is damaged."""
        queries = self.sql.snapshot(by="run", limit=None)

        async def work(db: Any) -> rows.Snapshot:
            found = [list(await (await db.execute(sql, (run_id,))).fetchall())
                     for sql in queries]
            return rows.snapshot(*found)

        found = await self._read(work)
        if not found:
            raise RunNotFound(run_id)
        result = rows.assembled(*found[0])
        if isinstance(result, StoreError):
            raise result
        return result

    async def stored_records(self, spec: str, *, batch: int = 500
                             ) -> AsyncIterator[tuple[str, Stored | StoreError]]:
        """Every stored run of the spec named `spec`, sorted by id: `(run_id, (StoredRun,
        record))` as `stored_record` gives them, or `(run_id, error)` for a run whose row or
        record is damaged (the StoreError that says what). Read `batch` runs at a time, each
        batch in one read transaction: a run's columns, record and steps are of one moment,
        whatever commits meanwhile (`statechart runs verify` reads through here)."""
        after: str | None = None
        while True:
            found = await self._read(functools.partial(self._batch, spec, after, batch))
            for head, states, steps in found:
                yield head[0], rows.assembled(head, states, steps)
            if len(found) < batch:
                return
            after = found[-1][0][0]

    async def _batch(self, spec: str, after: str | None, batch: int, db: Any
                     ) -> rows.Snapshot:
        """Inside a read transaction: the next `batch` runs of `spec` after the id `after`,
        each its head, its states and its steps (the states and steps read over the ids of
        the batch alone: a condition on `runs` only lets PostgreSQL scan the whole history
        table for every batch)."""
        heads_sql, states_sql, steps_sql = self.sql.snapshot(
            by="spec" if after is None else "after", limit=batch)
        args = [spec] if after is None else [spec, after]
        heads = list(await (await db.execute(heads_sql, args)).fetchall())
        if not heads:
            return []
        ranged = [*args, heads[-1][0], heads[0][0], heads[-1][0]]
        states = await db.execute(states_sql, ranged)
        steps = await db.execute(steps_sql, ranged)
        return rows.snapshot(heads, list(await states.fetchall()),
                             list(await steps.fetchall()))

