"""The run store's connection to its database: the statements a backend gives (`Statements`),
transactions, retries of a busy database and reconnection after a lost one, and what a
driver's errors mean to a caller (StoreError and its kinds). `RunStore` (store.py) subclasses
`StoreConnection` and adds the runs; nothing here knows what a run is.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Self, TypeVar

from statechart_runtime import store_schema
from statechart_runtime.errors import (
    OutcomeUnknown,
    ReadOnlyStore,
    SchemaProblem,
    StoreError,
    StoreFull,
    StoreUnavailable,
    UnstorableValue,
)
from statechart_runtime.values import Clock, now, utcnow

# ... and about a database server it could not reach.
UNREACHABLE_HINT = "is the server running? Repeat the call when it is back"
T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class Statements:
    """The SQL a backend runs, in its own dialect (placeholders, locking clauses): every
    statement the backend-neutral logic needs, by what it does. `param` is the placeholder,
    for the queries composed from conditions at run time (`find`, `history`'s filters)."""

    param: str
    begin_write: str  # a transaction that will write
    begin_read: str  # a transaction that only reads (one snapshot where the backend can)
    lock_schema: str  # inside the schema's transaction: new stores take turns ("": none)
    table_count: str  # (name) -> one row: how many tables of that name the store sees
    read_version: str  # -> the schema_version row of store_meta, if any
    write_version: str  # (version text): insert or replace it
    run_exists: str  # (run_id)
    insert_run: str  # (run_id, spec, spec_version, status, created_at, updated_at)
    head: str  # (run_id) -> spec, spec_version, revision, steps, record, status
    head_locked: str  # the same, holding the run's row until the transaction ends
    # (run_id, run_id) -> one row: what `fire` checks the head against (store_checks):
    # the run_states rows (names joined by spaces, or NULL), the last history row's idx,
    # target and at (NULLs: no step). Run after head_locked (PostgreSQL: in the same
    # round trip), so that it reads what the last holder of the row committed.
    head_checks: str
    # (run_id, run_id) -> head and head_checks in one row, read by one statement (one
    # snapshot without a transaction): `fire`'s read before it takes the write lock, on a
    # backend with `optimistic_fire` ("" on the others).
    head_checked: str
    revision_locked: str  # (run_id) -> revision, holding the row
    update_head: str  # (revision, spec_version, status, steps, record, next_due, at, run_id)
    # The same with `revision` (the one the step was computed from) appended: the row is
    # written only if its revision is still that (the cursor's rowcount says whether).
    # "": the backend checks the revision with revision_locked first (PostgreSQL, whose
    # pipelined UPDATE gives its rowcount only a round trip later).
    update_head_if: str
    steps: str  # (run_id) -> event, source, target, at, values, kind, in order
    delete_steps: str  # (run_id)
    insert_step: str  # (run_id, idx, event, source, target, at, values, kind)
    delete_states: str  # (run_id)
    delete_state: str  # (run_id, state)
    insert_state: str  # (run_id, spec, state)
    key_seen: str  # (run_id, key) -> event, values, call
    insert_key: str  # (run_id, key, event, values, revision, call, at)
    # `{column}` is none of the values of one parameter (`StoreConnection._not_in_args`).
    not_in: str
    # Due runs of a spec stored at `version` or older (a newer one is not the caller's to fire):
    # (spec, version, now, the skipped ids' parameter if any) -> the run due first, claimed
    # for the transaction;
    # `{skip}` is where the condition leaving out `fire_next_due`'s `skip=` runs goes;
    # `{limit}` (optional) how many of the runs due first a claim that is only a read
    # (`optimistic_fire`) gives, to pick one of at random.
    claim_due: str
    due: str  # (spec, version, now, limit) -> run ids, earliest due first

class StoreConnection:
    """A store's connection and transactions, in no SQL dialect; a backend subclass (a module
    of its own) gives its `sql`, its `migrations`, and says how it connects and what its
    errors mean."""

    sql: Statements
    # MIGRATIONS[v]: the statements that turn store schema version v-1 into v (0: the
    # version table). Applied in one transaction when a writable store is opened.
    migrations: Sequence[Sequence[str]]

    def __init__(self, where: str, *, timeout: float, max_attempts: int = 5,
                 read_only: bool = False) -> None:
        self.where = where
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.read_only = read_only
        # The one time source of every call not given a time; restored runs get it too.
        self.clock: Clock = utcnow
        self._committing = False
        self._db: Any = None
        try:
            self._connect()
        except StoreError:
            raise
        except Exception as exc:  # a file that cannot be opened, a server that is not there
            if self._failure(exc) == "disconnected":  # may be back later: not the caller's
                raise StoreUnavailable(f"{where}: cannot reach the database "
                                       f"({_first_line(exc)}): {UNREACHABLE_HINT}") from None
            raise StoreError(f"{where}: cannot open the run store: {exc}") from None
        # The schema version found (set by the upgrade: a failed one says from which).
        self._found_version = store_schema.SCHEMA_VERSION
        try:
            if read_only:
                self._read(lambda: store_schema.check_schema(self))
            else:
                self._with_retries(lambda: store_schema.upgrade_schema(self), repeatable=True)
        except BaseException as exc:
            with suppress(Exception):
                self.close()
            # A driver error while steps of a migration were run (on PostgreSQL it may
            # surface at the COMMIT): say which upgrade failed.
            target = store_schema.SCHEMA_VERSION
            if type(exc) is StoreError and self._found_version < target:
                what = ("creating the store's tables" if self._found_version < 0 else
                        f"upgrading the store's schema from version {self._found_version} "
                        f"to {target}")
                raise SchemaProblem(f"{where}: {what} failed, and was rolled back (the store "
                                    f"is unchanged): {exc}") from exc
            raise

    # -- what a backend provides ---------------------------------------------------------

    def _connect(self) -> None:
        raise NotImplementedError

    # The driver's exception classes: any of them that a call meets becomes a StoreError.
    driver_errors: tuple[type[BaseException], ...] = ()

    def _failure(self, exc: BaseException) -> str | None:
        """What a driver error means: "busy" (retry the transaction), "disconnected"
        (reconnect, then retry), "duplicate" (a unique key taken), "full" (no room left),
        "unstorable" (a value the database cannot hold), "damaged" (not a database, or a
        corrupt one), or None (anything else)."""
        return None

    # -- plumbing ------------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def now(self) -> dt.datetime:
        """The store's clock's time (aware; TypeError for a clock that is not)."""
        return now(self.clock)

    def _announce_due(self, spec: str) -> None:
        """Inside a write of a run with an armed timer: tell sleeping workers (PostgreSQL:
        NOTIFY, sent at commit; SQLite has no way to, its workers sleep at most max_sleep)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _x(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._db.execute(sql, args)

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if len(rows) == 1:  # the common case (one step), in one round trip
            self._x(sql, rows[0])
        elif rows:
            self._db.cursor().executemany(sql, rows)

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        """BEGIN ... COMMIT, or ROLLBACK on any exception (on a connection that died, the
        server rolls back by itself). No `begin`: no transaction (one statement that reads:
        autocommit makes it one of its own)."""
        if not begin:
            yield
            return
        self._begin(begin)
        try:
            yield
            self._committing = True  # a failure from here on may come after the commit
            self._db.execute("COMMIT")
            self._committing = False
        except BaseException:
            with suppress(Exception):
                self._db.execute("ROLLBACK")
            raise

    def _begin(self, begin: str) -> None:
        self._db.execute(begin)

    def _with_retries(self, work: Callable[[], T], *, repeatable: bool,
                      begin: str | None = None,
                      duplicate: Callable[[], StoreError] | None = None) -> T:
        """`work()` in a transaction, retried when the database was busy (`max_attempts`
        times in all) or the connection was lost (reconnecting for up to `timeout` seconds).
        A connection lost while committing leaves the outcome unknown: the work is retried
        only when it is `repeatable` (a read, or a fire with an idempotency key). Any other
        driver error becomes a StoreError (`duplicate` makes the one of a unique key taken),
        after the transaction was rolled back: the store stays usable."""
        attempt = 0
        deadline: float | None = None
        while True:
            attempt += 1
            self._committing = False
            try:
                with self._transaction(self.sql.begin_write if begin is None else begin):
                    return work()
            except Exception as exc:
                kind = self._failure(exc)
                if kind == "busy" and attempt < self.max_attempts:
                    continue
                if kind != "disconnected":
                    error = self._store_error(exc, kind, duplicate)
                    if error is exc:
                        raise
                    raise error from exc
                if self._committing and not repeatable:
                    raise OutcomeUnknown(
                        f"{self.where}: the connection was lost while committing, so whether "
                        "the change was stored is unknown: load the run to see, and fire with "
                        f"an idempotency_key to make retries safe ({_first_line(exc)})"
                    ) from exc
                if deadline is None:
                    deadline = time.monotonic() + self.timeout
                elif time.monotonic() > deadline:  # reconnected, and lost again, and again
                    raise StoreUnavailable(
                        f"{self.where}: the connection kept failing for {self.timeout:g} s "
                        f"({_first_line(exc)}); repeat the call when the database is back"
                    ) from exc
                self._reconnect(deadline, exc)

    def _store_error(self, exc: Exception, kind: str | None,
                     duplicate: Callable[[], StoreError] | None) -> Exception:
        """The error a caller sees for `exc`: ours (a StoreError, a spec's RunError) as it
        is, a driver's as the StoreError that says what to do."""
        unknown = " (the connection was lost while committing: load the run to see " \
                  "whether it was stored)" if self._committing else ""
        if isinstance(exc, UnicodeEncodeError):  # the driver encodes strings as UTF-8
            kind = "unstorable"
        elif not isinstance(exc, self.driver_errors):
            return exc
        reason = _first_line(exc)
        if kind == "duplicate" and duplicate is not None:
            return duplicate()
        if kind == "busy":
            return StoreError(f"{self.where}: the database stayed busy through "
                              f"{self.max_attempts} attempts ({reason}): nothing was "
                              "stored; repeat the call later, or raise `timeout`")
        if kind == "damaged":
            return StoreError(f"{self.where} is not a run store, or is damaged ({reason}): "
                              "restore it from a backup")
        if kind == "full":
            return StoreFull(f"{self.where}: the database is full ({reason}): nothing of "
                             "this call was stored; free space (or raise the database's size "
                             "limit), then repeat the call")
        if kind == "unstorable":
            return UnstorableValue(
                f"{self.where}: a value of this call cannot be stored ({reason}): nothing was "
                "stored; change the value (strings must be valid Unicode, without lone "
                "surrogates; PostgreSQL also refuses NUL characters, and keys such as a run "
                "id over about 2,700 bytes)")
        return StoreError(f"{self.where}: the database refused the call ({reason}); the "
                          f"transaction was rolled back{unknown}")

    def _reconnect(self, deadline: float, cause: Exception) -> None:
        delay = 0.05
        with suppress(Exception):
            self._db.close()
        while True:
            try:
                self._connect()
                return
            except Exception as exc:
                if self._failure(exc) != "disconnected" or time.monotonic() > deadline:
                    raise StoreUnavailable(
                        f"{self.where}: lost the connection and could not reconnect within "
                        f"{self.timeout:g} s ({_first_line(exc)}); repeat the call when the "
                        "database is back: the store reconnects by itself") from cause
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"{self.where} was opened read-only: open it with "
                                "read_only=False to change runs")

    def _store_failed(self, exc: BaseException) -> bool:
        """Whether `exc` is a failure of the store itself (busy, unreachable, full, damaged,
        an unknown outcome, its schema), not of the one run a call was about."""
        if isinstance(exc, (OutcomeUnknown, StoreUnavailable, StoreFull, SchemaProblem,
                            ReadOnlyStore)):
            return True
        driver = exc if isinstance(exc, self.driver_errors) else exc.__cause__
        return isinstance(driver, self.driver_errors) and \
            self._failure(driver) in ("busy", "disconnected", "full", "damaged")

    def _not_in(self, column: str, values: Sequence[Any]) -> str:
        """` AND column` is none of `values`, given as one parameter (`_not_in_args`): any
        number of them fits in a statement (PostgreSQL's take at most 65,535 parameters; a
        worker's skip list may grow past that); "" for none."""
        return f" AND {self.sql.not_in.format(column=column)}" if values else ""

    def _not_in_args(self, values: Sequence[Any]) -> list[Any]:
        """The parameter of `_not_in`'s condition (none for no values): the values as JSON
        text (SQLite's `json_each` reads it); a backend may pass them otherwise."""
        return [json.dumps(list(values))] if values else []

    def _read(self, work: Callable[[], T]) -> T:
        return self._with_retries(work, repeatable=True, begin=self.sql.begin_read)

    def _query(self, sql: str, args: list[Any]) -> list[Any]:
        """The rows of one read-only query, in a read transaction of its own (`next_due`)."""
        return self._read(lambda: self._x(sql, args).fetchall())


def _first_line(exc: BaseException) -> str:
    """A driver's message without its DETAIL and HINT lines (they may quote a whole value)."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__

