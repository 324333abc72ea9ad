"""A run store: runs kept in SQLite or PostgreSQL, saved with optimistic concurrency, events
fired in one transaction, every transition appended to a queryable history (docs/runs.md).

```python
from statechart_runtime.store import open_store

store = open_store("sqlite:///runs.db")           # or "postgresql://user@host/db"
store.create(AgentRun())
store.fire(AgentRun, run_id, "approve", idempotency_key="approval-17")
```

The logic is here, once, and speaks no SQL dialect: each backend is a module of its own
(`BACKENDS`: `store_sqlite`, standard library `sqlite3`, so the runtime gains no dependency;
`store_postgres`, psycopg 3, the `postgres` extra) holding its statements (`Statements`), its
schema as a list of migrations, how it connects and which of its errors mean what. Adding a
backend is one new module and one entry in `BACKENDS`. One store holds one connection: use
one per process (or per thread); any number of processes may share the database.

A run's row holds its record without the history (the "head"); the steps are rows of their
own. `fire` restores the run from the head alone and appends the new steps, so its cost does
not grow with the run's history; `load` reads the steps too and checks the whole record.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from statechart_runtime import store_checks, store_read
from statechart_runtime import store_versions as versions
from statechart_runtime.errors import (
    ConcurrentUpdate,
    DamagedRow,
    OutcomeUnknown,
    ReadOnlyStore,
    RunError,
    RunIdTaken,
    RunNotFound,
    SchemaProblem,
    StoreError,
    StoreFull,
    StoreUnavailable,
    TimerFailed,
    UnknownName,
    UnstorableValue,
)
from statechart_runtime.run import Run
from statechart_runtime.store_read import HistoryRow, StoredRun
from statechart_runtime.values import Clock, now, parse_time, utcnow

__all__ = ["BACKENDS", "SCHEMA_VERSION", "ConcurrentUpdate", "DamagedRow", "Fired", "HistoryRow",
           "OutcomeUnknown", "ReadOnlyStore", "RunIdTaken", "RunNotFound", "RunStore",
           "SchemaProblem", "Statements", "StoreError", "StoreFull", "StoreUnavailable",
           "StoredRun", "TimerFailed", "UnknownName", "UnstorableValue", "open_store"]

# The version of the store's own tables this runtime writes: every backend's MIGRATIONS has
# one step per version (MIGRATIONS[v] turns version v-1 into v), so it is their length - 1.
SCHEMA_VERSION = 3
# Versions below this one were development schemas no release wrote: no step leads from them.
OLDEST_VERSION = 2
# What a read-only store says to do about a schema it would have to upgrade (the CLI words
# it as a command instead).
UPGRADE_HINT = "open it once writable (read_only=False) to upgrade it"
# ... and about a database server it could not reach.
UNREACHABLE_HINT = "is the server running? Repeat the call when it is back"
# The attribute a store sets on a run it created or loaded (a `_Mark`).
MARK_ATTR = "_sc_store"
RunT = TypeVar("RunT", bound=Run[Any, Any, Any])
T = TypeVar("T")

# The backends, by URL scheme: the module that holds each (imported when a URL needs it, so
# that psycopg is needed only for PostgreSQL) and what to install when it cannot be imported.
# The module provides `open_url(url, *, timeout, read_only) -> RunStore`. A path with no
# scheme is a SQLite file.
# What to install for a backend's driver: a name every index has (the extras say the same).
_PSYCOPG = ("'psycopg[binary]>=3.1' (the `postgres` extra of statechart-runtime and "
            "statechart-compiler)")
BACKENDS: dict[str, tuple[str, str]] = {
    "sqlite": ("statechart_runtime.store_sqlite", ""),
    "postgresql": ("statechart_runtime.store_postgres", _PSYCOPG),
    "postgres": ("statechart_runtime.store_postgres", _PSYCOPG),
}


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
    revision_locked: str  # (run_id) -> revision, holding the row
    update_head: str  # (revision, spec_version, status, steps, record, next_due, at, run_id)
    steps: str  # (run_id) -> event, source, target, at, values, kind, in order
    delete_steps: str  # (run_id)
    insert_step: str  # (run_id, idx, event, source, target, at, values, kind)
    delete_states: str  # (run_id)
    insert_state: str  # (run_id, spec, state)
    key_seen: str  # (run_id, key) -> event, values, call
    insert_key: str  # (run_id, key, event, values, revision, call, at)
    # Due runs of a spec stored at `version` or older (a newer one is not the caller's to fire):
    # (spec, version, now, *skipped ids) -> the run due first, claimed for the transaction;
    # `{skip}` is where the condition leaving out `fire_next_due`'s `skip=` runs goes.
    claim_due: str
    due: str  # (spec, version, now, limit) -> run ids, earliest due first


@dataclasses.dataclass(frozen=True, slots=True)
class Fired:
    """What `store.fire` (or `fire_due`) did: `run` is the stored run after it, saved at
    `revision`; `applied` is False when nothing was fired (an idempotency key already seen,
    no timer due); `events` are the events fired. The run is restored from the stored head:
    its record's history holds only the steps this call added (`store.load` reads them all)."""

    run: Any
    applied: bool
    revision: int
    events: tuple[str, ...] = ()


@dataclasses.dataclass(slots=True)
class _Mark:
    """What a store knows of a run it created or loaded: the revision it was loaded at, the
    steps the store holds, how many of those the run's record holds (the last ones; a run
    restored from its head holds none), its active states then, whether the stored steps
    must be rewritten (the record was upgraded from an older spec version: names changed),
    and its earliest timer's due time as stored (None: none armed, or not known)."""

    revision: int
    steps: int
    known: int
    active: tuple[str, ...]
    rewrite: bool = False
    due: dt.datetime | None = None


def open_store(url: str | Path, *, timeout: float = 30.0, read_only: bool = False,
               clock: Clock | None = None) -> RunStore:
    """The store at `url`: a file path, `sqlite:///relative/runs.db`, `sqlite:////abs/runs.db`,
    or `postgresql://user:password@host:port/database` (any libpq URL; psycopg 3 must be
    installed: the `postgres` extra). A writable store creates its tables if the database
    has none and upgrades an older store schema (one transaction); a newer one is refused
    (SchemaProblem). `read_only`: never writes, creates nor locks anything (docs/runs.md).
    `timeout` is how long a writer waits for another one, and the budget for reconnecting to
    a server that went away, in seconds. `clock` (a `Clock`, as runs take; default: the
    system's UTC time) is the store's one time source: steps, row times and due queries of
    every call that is not given a time (docs/runs.md, Clocks)."""
    text = str(url)
    scheme = text.partition("://")[0] if "://" in text else "sqlite"
    if scheme not in BACKENDS:
        raise StoreError(f"unsupported store URL {text!r}: expected one of "
                         + ", ".join(f"{name}://..." for name in BACKENDS)
                         + " or a file path")
    module_name, extra = BACKENDS[scheme]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise StoreError(f"a {scheme}:// store needs {exc.name or 'a missing module'} ({exc})"
                         + (f": pip install {extra}" if extra else "")) from None
    store: RunStore = module.open_url(text, timeout=timeout, read_only=read_only)
    if clock is not None:
        store.clock = clock
    return store


class RunStore:
    """The API and its logic, in no SQL dialect; a backend subclass (a module of its own)
    gives its `sql`, its `migrations`, and says how it connects and what its errors mean."""

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
        self._found_version = SCHEMA_VERSION
        try:
            if read_only:
                self._read(self._check_schema)
            else:
                self._with_retries(self._upgrade_schema, repeatable=True)
        except BaseException as exc:
            with suppress(Exception):
                self.close()
            # A driver error while steps of a migration were run (on PostgreSQL it may
            # surface at the COMMIT): say which upgrade failed.
            if type(exc) is StoreError and self._found_version < SCHEMA_VERSION:
                what = ("creating the store's tables" if self._found_version < 0 else
                        f"upgrading the store's schema from version {self._found_version} "
                        f"to {SCHEMA_VERSION}")
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

    def __enter__(self) -> RunStore:
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
        server rolls back by itself)."""
        self._db.execute(begin)
        try:
            yield
            self._committing = True  # a failure from here on may come after the commit
            self._db.execute("COMMIT")
            self._committing = False
        except BaseException:
            with suppress(Exception):
                self._db.execute("ROLLBACK")
            raise

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
                with self._transaction(begin or self.sql.begin_write):
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

    # -- schema --------------------------------------------------------------------------

    def _schema_version(self) -> int:
        """The store's schema version, -1 for a database with no store tables at all."""
        has_meta = self._x(self.sql.table_count, ("store_meta",)).fetchone()[0]
        row = self._x(self.sql.read_version).fetchone() if has_meta else None
        if row is None:
            if self._x(self.sql.table_count, ("runs",)).fetchone()[0]:
                create = "" if has_meta else f"{self.migrations[0][0]}; then "
                raise SchemaProblem(
                    f"{self.where}: the store's tables are there but its schema_version row "
                    f"is missing (deleted by hand?); put it back: {create}INSERT INTO "
                    f"store_meta VALUES ('schema_version', '{SCHEMA_VERSION}') if the tables "
                    "are this runtime's")
            return -1
        try:
            return int(row[0])
        except (TypeError, ValueError):
            raise SchemaProblem(
                f"{self.where}: the store's schema_version row holds {row[0]!r}, not a "
                f"version number (edited by hand?); set it back: UPDATE store_meta SET value "
                f"= '{SCHEMA_VERSION}' WHERE key = 'schema_version' if the tables are this "
                "runtime's") from None

    def _checked_version(self) -> int:
        version = self._schema_version()
        if version > SCHEMA_VERSION:
            raise SchemaProblem(
                f"{self.where}: the run store's schema is version {version}, written by a "
                f"newer statechart-runtime; this one reads version {SCHEMA_VERSION}: "
                "upgrade statechart-runtime")
        if 0 < version < OLDEST_VERSION:  # 1: a development version that kept whole records
            raise SchemaProblem(
                f"{self.where}: run store schema version {version} was written by a "
                "development version of statechart-runtime and is not read by this one: "
                "create a new store")
        return version

    def _upgrade_schema(self) -> None:
        """Bring the schema to SCHEMA_VERSION, every missing step in this one transaction
        (another store opening at the same time waits, then finds it done)."""
        if self.sql.lock_schema:
            self._x(self.sql.lock_schema).fetchone()
        version = self._found_version = self._checked_version()
        if version == SCHEMA_VERSION:
            return
        for step in self.migrations[version + 1:]:
            for statement in step:
                self._x(statement)
        self._x(self.sql.write_version, (str(SCHEMA_VERSION),))

    def _check_schema(self) -> None:
        """A read-only store: the schema must be this runtime's already (nothing is created
        nor upgraded)."""
        version = self._checked_version()
        if version < 0:
            raise StoreError(f"{self.where} is not a run store (it has no store tables): "
                             "opened writable, a store creates its tables")
        if version < SCHEMA_VERSION:
            raise ReadOnlyStore(
                f"{self.where}: the store's schema is version {version} and must be upgraded "
                f"to {SCHEMA_VERSION} before this runtime reads it; {UPGRADE_HINT}")

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"{self.where} was opened read-only: open it with "
                                "read_only=False to change runs")

    # -- runs ----------------------------------------------------------------------------

    def create(self, run: Run[Any, Any, Any]) -> None:
        """Store a run that is not stored yet (a new one, or one restored from a record):
        its record, state and history. StoreError if its run id is taken."""
        self._writable()
        record: Any = run.record
        spec = run._sc_spec

        def work() -> None:
            if self._x(self.sql.run_exists, (record.runId,)).fetchone():
                raise RunIdTaken(record.runId)
            at = _utc_text(self.now())
            self._x(self.sql.insert_run,
                    (record.runId, spec.name, spec.version, record.status.value, at, at))
            self._write(run, _Mark(0, 0, 0, (), rewrite=True), at, locked=True)

        # Two processes creating the same id at once: the loser's INSERT meets the winner's
        # key (on PostgreSQL, at a later statement of the pipeline): the same RunIdTaken.
        self._with_retries(work, repeatable=False,
                           duplicate=lambda: RunIdTaken(record.runId))
        setattr(run, MARK_ATTR, _Mark(1, len(record.history), len(record.history),
                                      run._active, due=_deadline(run)))

    def load(self, run_class: type[RunT], run_id: str, **kwargs: Any) -> RunT:
        """The stored run `run_id`, restored as a `run_class` (keyword arguments go to
        `run_class.restore`: `model=`, `clock=`), with its whole history. The record is
        checked as `from_json` checks it, replaying the history (the spec's InvalidRecord);
        a run of another spec is refused the same way."""
        def work() -> RunT:
            return self._full_run(run_class, run_id, self._head_row(run_id, self.sql.head), kwargs)
        return self._read(work)

    def _head_row(self, run_id: str, sql: str) -> tuple[Any, ...]:
        row = self._x(sql, (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        return tuple(row)

    def _locked_head(self, run_id: str) -> tuple[Any, ...]:
        """The run's head, its row held until the transaction ends, and what `_head_run`
        checks it against: sent together, the second read once the row is held (a statement
        of its own: on PostgreSQL a SELECT ... FOR UPDATE that waited for another writer sees
        that writer's row, but its other tables as they were when it started)."""
        head = self._x(self.sql.head_locked, (run_id,))
        checks = self._x(self.sql.head_checks, (run_id, run_id))
        row = head.fetchone()
        if row is None:
            raise RunNotFound(run_id)
        return (*row, *checks.fetchone())

    def _full_run(self, run_class: type[RunT], run_id: str, row: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> RunT:
        _, version, revision, steps = row[:4]
        data = self._head_data(run_class, run_id, row)
        spec = run_class._sc_spec
        data["history"] = store_read.step_dicts(self._x(self.sql.steps, (run_id,)).fetchall(),
                                                spec.invalid)
        if len(data["history"]) != steps:
            raise spec.invalid("history", f"the store holds {len(data['history'])} steps of "
                               f"run {run_id!r}, its row says {steps}")
        record = run_class._sc_record.from_dict(data)  # upgrades older versions; replays
        if record.runId != run_id:
            raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                               f"{record.runId!r}")
        run = run_class.restore(record, check=False, **{"clock": self.clock, **kwargs})
        # A record upgraded from an older version: its steps and its run_states rows (in
        # the old names) are rewritten by the next save, whatever it changes.
        rewrite = version != spec.version
        setattr(run, MARK_ATTR, _Mark(revision, steps, steps, () if rewrite else run._active,
                                      rewrite=rewrite, due=_deadline(run)))
        return run

    def _head_run(self, run_class: type[RunT], run_id: str, row: tuple[Any, ...]) -> RunT:
        """The run from its stored head, without its history (trusted: the store wrote it,
        and checked every step as it was taken). A head of an older spec version is read
        whole instead, to be upgraded and checked."""
        spec = run_class._sc_spec
        if row[1] != spec.version:
            return self._full_run(run_class, run_id, row, {})
        data = self._head_data(run_class, run_id, row)
        data["history"] = []
        record = run_class._sc_record.from_dict(data, check=False)
        if record.runId != run_id:
            raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                               f"{record.runId!r}")
        run = run_class.restore(record, check=False, clock=self.clock)
        # The head is trusted, not replayed: cheap checks that it is the one the store wrote,
        # against what came with it (head_locked): the columns `find` answers from and the
        # last stored step. A record, column or step edited by hand disagrees.
        wrong = store_checks.head_disagreement(run, row[5], store_checks.state_set(row[6]),
                                               row[3], row[7:10])
        if wrong is not None:
            raise spec.invalid(wrong[0], f"run {run_id!r}: {wrong[1]}: "
                               f"{store_checks.REPAIR_HINT}")
        setattr(run, MARK_ATTR, _Mark(row[2], row[3], 0, run._active, due=_deadline(run)))
        return run

    @staticmethod
    def _head_data(run_class: type[Any], run_id: str, row: tuple[Any, ...]) -> dict[str, Any]:
        spec = run_class._sc_spec
        if row[0] != spec.name:
            raise spec.invalid("(store)", f"run {run_id!r} is a run of {row[0]!r} "
                               f"(version {row[1]}), not of {spec.name!r}")
        if row[1] > spec.version:
            raise spec.invalid("specVersion", f"run {run_id!r} was stored by version {row[1]} "
                               f"of {spec.name!r}; this module reads version {spec.version}")
        try:
            data = json.loads(row[4])
        except ValueError as exc:
            raise spec.invalid("(record)", f"the stored record is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise spec.invalid("(record)", "the stored record is not a JSON object")
        return data

    def save(self, run: Run[Any, Any, Any]) -> int:
        """Save a run this store created or loaded; its new revision. ConcurrentUpdate if
        the stored run was saved since (by this process or another): nothing is written."""
        self._writable()
        mark = _mark_of(run)
        at = _utc_text(self.now())
        revision = self._with_retries(lambda: self._write(run, mark, at, locked=False),
                                       repeatable=False)
        _saved(run, mark, revision)
        return revision

    def _write(self, run: Run[Any, Any, Any], mark: _Mark, at: str, *, locked: bool) -> int:
        """The run's head, its new steps (or all of them), its active states if they
        changed: inside the caller's transaction. Unless the caller holds the run's row
        (`locked`: it read the row in this transaction), ConcurrentUpdate if the stored
        revision is not `mark.revision`. No statement here needs a result: PostgreSQL sends
        them all with the COMMIT, in one round trip."""
        record: Any = run.record
        run_id = record.runId
        spec = run._sc_spec
        history = record.history
        if len(history) < mark.known:
            raise StoreError(f"run {run_id!r}: its history went from {mark.known} steps to "
                             f"{len(history)}; a stored history only grows")
        if not locked:
            found = self._x(self.sql.revision_locked, (run_id,)).fetchone()
            if found is None:
                raise RunNotFound(run_id)
            if found[0] != mark.revision:
                raise ConcurrentUpdate(run_id, mark.revision, found[0])
        steps = len(history) if mark.rewrite else mark.steps + len(history) - mark.known
        deadline = _deadline(run)
        if deadline is not None and (mark.due is None or deadline < mark.due):
            self._announce_due(spec.name)  # an earlier deadline: wake the sleeping workers
        self._x(self.sql.update_head,
                (mark.revision + 1, spec.version, record.status.value, steps,
                 json.dumps(record.to_dict(history=False), ensure_ascii=False,
                            allow_nan=False),
                 None if deadline is None else _utc_text(deadline), at, run_id))
        if mark.rewrite:
            self._x(self.sql.delete_steps, (run_id,))
            start, new = 0, history
        else:
            start, new = mark.steps, history[mark.known:]
        self._many(self.sql.insert_step,
                   [(run_id, index, step.event.value, step.source.value, step.target.value,
                     _utc_text(step.at), json.dumps(step.values, ensure_ascii=False,
                                                    allow_nan=False, sort_keys=True),
                     step.kind)
                    for index, step in enumerate(new, start)])
        if run._active != mark.active:
            self._x(self.sql.delete_states, (run_id,))
            self._many(self.sql.insert_state,
                       [(run_id, spec.name, name) for name in run._active])
        return mark.revision + 1

    # -- events --------------------------------------------------------------------------

    def fire(self, run_class: type[RunT], run_id: str, event: Any, *,
             idempotency_key: str | None = None, at: dt.datetime | None = None,
             **values: Any) -> Fired:
        """Load the run, send it `event` with `values` at `at` (default: now), save it: one
        transaction, holding the run's row from load to save. Timers due by then fire first,
        each at its due time (`Run.send_at`). An event the run refuses raises
        (EventNotAccepted, MissingField, ...) and changes nothing, except that the timers
        that fired before it are saved (they happened: an approval sent after its deadline
        finds, and leaves, the run timed out). With `idempotency_key`, an event already
        applied with that key for this run is not fired again (`applied` is False); the key
        reused for another event is a StoreError. A busy database is retried up to
        `max_attempts` times, a lost connection for up to `timeout` seconds."""
        self._writable()
        spec = run_class._sc_spec
        name = event.value if isinstance(event, spec.event_enum) else event
        key_values = "" if idempotency_key is None else json.dumps(
            {f: _json_value(spec, f, v) for f, v in values.items()}, sort_keys=True)
        call = uuid.uuid4().hex  # tells this call's own commit from an earlier call's

        def work() -> Fired | RunError:
            row = self._locked_head(run_id)
            if idempotency_key is not None:
                seen = self._x(self.sql.key_seen, (run_id, idempotency_key)).fetchone()
                if seen is not None:
                    if (seen[0], seen[1]) != (name, key_values):
                        raise StoreError(
                            f"idempotency key {idempotency_key!r} of run {run_id!r} was "
                            f"used for `{seen[0]}` {seen[1]}, not `{name}` {key_values}")
                    # The call whose commit was cut off by a lost connection did apply it.
                    mine = seen[2] == call
                    return Fired(self._head_run(run_class, run_id, row), mine, row[2],
                                 (name,) if mine else ())
            run = self._head_run(run_class, run_id, row)
            mark = _mark_of(run)
            when = at if at is not None else self.now()  # the one time of this call
            stamp = _utc_text(when)
            try:
                run.send_at(when, event, **values)
            except RunError as refusal:
                if not run.record.history:  # nothing happened: nothing to save
                    raise
                # Timers fired before the event was refused: they are kept.
                revision = self._write(run, mark, stamp, locked=True)
                _saved(run, mark, revision)
                return refusal
            revision = self._write(run, mark, stamp, locked=True)
            if idempotency_key is not None:
                self._x(self.sql.insert_key,
                        (run_id, idempotency_key, name, key_values, revision, call,
                         stamp))
            _saved(run, mark, revision)
            return Fired(run, True, revision, (name,))

        done = self._with_retries(work, repeatable=idempotency_key is not None)
        if isinstance(done, RunError):
            raise done  # refused, after the timers that fired were committed
        return done

    def fire_due(self, run_class: type[RunT], run_id: str, now: dt.datetime | None = None
                 ) -> Fired:
        """Load the run, fire every timer due at `now` (default: the current time) with
        `run.fire_due(now)` (each step at its timer's due time), save it: one transaction,
        holding the run's row. A run with no timer due fires nothing (`applied` False): two
        workers firing the same due run fire its timers once. A timer whose guards said no
        is saved as declined, so `next_due` moves on to the run's next timer."""
        self._writable()
        return self._with_retries(lambda: self._fire_due(run_class, run_id, now),
                                  repeatable=False)

    def _fire_due(self, run_class: type[RunT], run_id: str, now: dt.datetime | None) -> Fired:
        row = self._locked_head(run_id)
        run = self._head_run(run_class, run_id, row)
        mark = _mark_of(run)
        armed = list(run.timers)
        when = now if now is not None else self.now()  # the one time of this call
        events = tuple(run.fire_due(when))
        if not events and list(run.timers) == armed:  # nothing due (or no timers at all)
            return Fired(run, False, row[2])
        # A declined timer (its guards said no) is saved even when nothing fired: it no
        # longer counts for `next_due`, so it cannot keep other runs' timers waiting.
        revision = self._write(run, mark, _utc_text(when), locked=True)
        _saved(run, mark, revision)
        return Fired(run, bool(events), revision, events)

    def fire_next_due(self, run_class: type[Run[Any, Any, Any]],
                      now: dt.datetime | None = None, *, skip: Sequence[str] = ()
                      ) -> Fired | None:
        """Claim the run of `run_class`'s spec whose timer is due first (at `now`), fire its
        due timers and save it, in one transaction; None when no run is due. On PostgreSQL
        the claim skips runs other workers hold (FOR UPDATE SKIP LOCKED), so any number of
        workers can call this in a loop and never fire one timer twice. Runs in `skip` are
        passed over; a claimed run that cannot be fired raises TimerFailed (naming it:
        skip it to go on), with nothing saved; failures of the store itself (busy, away,
        full, damaged) are raised as they are."""
        self._writable()
        at = now if now is not None else self.now()  # claimed and fired at one time
        spec = run_class._sc_spec  # runs of a newer version are passed over: not ours to fire
        args = (spec.name, spec.version, _utc_text(at), *skip)
        claim = self.sql.claim_due.format(skip=self._not_in("run_id", skip))

        claimed: list[str] = []  # the run this attempt claimed

        def work() -> Fired | None:
            claimed.clear()
            row = self._x(claim, args).fetchone()
            if row is None:
                return None
            claimed.append(row[0])
            return self._fire_due(run_class, row[0], at)

        try:
            return self._with_retries(work, repeatable=False)
        except Exception as exc:
            # The claimed run's own failure (a guard raised, a value or a row the database
            # refuses), unless it is the store's: then no other run would fare better.
            if not claimed or isinstance(exc, TimerFailed) or self._store_failed(exc):
                raise
            raise TimerFailed(claimed[0], f"{type(exc).__name__}: {exc}") from exc

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
        """` AND column NOT IN (?, ...)` with a parameter per value; "" for none."""
        return f" AND {column} NOT IN ({', '.join([self.sql.param] * len(values))})" \
            if values else ""

    def next_due(self, run_class: type[Run[Any, Any, Any]], *, skip: Sequence[str] = ()
                 ) -> dt.datetime | None:
        """When the earliest armed timer of the runs `run_class` may fire is due (runs in
        `skip` and runs of a newer spec version left out), or None: how long a worker may
        sleep."""
        p = self.sql.param
        spec = run_class._sc_spec
        found = self._query(f"SELECT run_id, next_due FROM runs WHERE spec = {p} AND "
                            f"spec_version <= {p} AND next_due IS NOT NULL"
                            f"{self._not_in('run_id', skip)} "
                            "ORDER BY next_due LIMIT 1", [spec.name, spec.version, *skip])
        return store_read.column_time(found[0][0], "runs.next_due", found[0][1]) if found \
            else None

    # -- queries -------------------------------------------------------------------------

    def _read(self, work: Callable[[], T]) -> T:
        return self._with_retries(work, repeatable=True, begin=self.sql.begin_read)

    def history(self, run_id: str, *, event: str | None = None,
                since: dt.datetime | None = None, until: dt.datetime | None = None
                ) -> list[HistoryRow]:
        """The stored transitions of `run_id` in order, optionally only those of `event`
        and those at or after `since` and before `until`."""
        p = self.sql.param
        sql = ('SELECT run_id, idx, event, source, target, at, "values" FROM history '
               f"WHERE run_id = {p}")
        args: list[Any] = [run_id]
        if event is not None:
            sql += f" AND event = {p}"
            args.append(getattr(event, "value", event))
        if since is not None:
            sql += f" AND at >= {p}"
            args.append(_utc_text(since))
        if until is not None:
            sql += f" AND at < {p}"
            args.append(_utc_text(until))
        rows = self._read(lambda: self._x(sql + " ORDER BY idx", args).fetchall())
        return store_read.history_rows(rows)

    def find(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
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
        spec = run_class._sc_spec
        p = self.sql.param

        def work() -> tuple[list[Any], list[Any]]:  # one snapshot, one round trip
            ids = self._x(*query)
            # The runs of other versions (index runs_by_version): older ones with their
            # states, newer ones by id alone. None, in the usual case.
            others = self._x(
                "SELECT r.run_id, r.spec_version, s.state FROM runs r LEFT JOIN run_states s "
                f"ON s.run_id = r.run_id WHERE r.spec = {p} AND r.spec_version < {p} "
                f"UNION ALL SELECT run_id, spec_version, NULL FROM runs WHERE spec = {p} AND "
                f"spec_version > {p}", (spec.name, spec.version, spec.name, spec.version))
            return ids.fetchall(), others.fetchall()

        found, others = self._read(work)
        if not others:  # every run of the spec is at the caller's version: the usual case
            return [row[0] for row in found]
        # Runs of other versions: not in this version's names. Older ones are answered as
        # their migration renames them; newer ones not at all (docs/runs.md, Mixed versions).
        stored: dict[str, tuple[int, list[str]]] = {}
        for run_id, version, name in others:
            stored.setdefault(run_id, (version, []))[1].extend([name] if name else [])
        tagged = None if tag is None else frozenset(spec.tags.get(tag, ()))
        wanted = (None if status is None else versions.status_name(spec, status),
                  None if state is None else versions.state_name(spec, state), tagged)
        ids = {row[0] for row in found if row[0] not in stored}
        ids.update(run_id for run_id, (version, names) in stored.items()
                   if version < spec.version and versions.matches(
                       spec, versions.current_states(spec, version, names), *wanted))
        return sorted(ids)

    def find_sql(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
                 state: Any = None, tag: str | None = None
                 ) -> tuple[str, list[Any]] | None:
        """The query `find` runs, and its arguments (None: nothing can match): for EXPLAIN.
        One set of ids per condition, intersected; each is read from an index that gives the
        ids in order (runs_by_status, run_states_by_state)."""
        spec = run_class._sc_spec
        p = self.sql.param
        parts: list[str] = []
        args: list[Any] = []
        if status is not None:
            parts.append(f"SELECT run_id FROM runs WHERE spec = {p} AND status = {p}")
            args += [spec.name, versions.status_name(spec, status)]
        if state is not None:
            parts.append(f"SELECT run_id FROM run_states WHERE spec = {p} AND state = {p}")
            args += [spec.name, versions.state_name(spec, state)]
        if tag is not None:
            tagged = sorted(spec.tags.get(tag, ()))
            if not tagged:
                return None
            marks = ", ".join([p] * len(tagged))
            # DISTINCT: two active states may carry the tag.
            parts.append(f"SELECT DISTINCT run_id FROM run_states WHERE spec = {p} AND "
                         f"state IN ({marks})")
            args += [spec.name, *tagged]
        if not parts:
            parts.append(f"SELECT run_id FROM runs WHERE spec = {p}")
            args.append(spec.name)
        return " INTERSECT ".join(parts) + " ORDER BY run_id", args

    def due(self, run_class: type[Run[Any, Any, Any]], now: dt.datetime | None = None, *,
            limit: int = 100) -> list[str]:
        """The ids of the runs of `run_class`'s spec with a timer due at `now` (default: the
        current time), earliest first, at most `limit`. Only a list: `fire_next_due` claims
        and fires them."""
        when = _utc_text(now if now is not None else self.now())
        spec = run_class._sc_spec
        return [row[0] for row in self._read(lambda: self._x(
            self.sql.due, (spec.name, spec.version, when, limit)).fetchall())]

    # -- read-only views for tools (`statechart runs`): no Run class needed ------------

    def stored_runs(self, spec: str | None = None) -> list[StoredRun]:
        """Every stored run (of the spec named `spec`), sorted by id, from the store's
        columns: no record is loaded or checked."""
        if spec is None:
            return self._stored_runs("1 = 1", [])
        return self._stored_runs(f"spec = {self.sql.param}", [spec])

    def stored_record(self, run_id: str) -> tuple[StoredRun, dict[str, Any]]:
        """The run `run_id` as stored, whatever its spec: its columns and its whole record as
        parsed JSON, its history from the `history` table, NOT checked (a tool checks it
        against a spec it chooses). RunNotFound if there is none; StoreError if the record is
        not a JSON object, holds a history other than the table's, or a step is damaged."""
        return store_read.stored_record(self, run_id, _same_steps)

    def stored_records(self, spec: str, *, batch: int = 500
                       ) -> Iterator[tuple[str, tuple[StoredRun, dict[str, Any]] | StoreError]]:
        """Every stored run of the spec named `spec`, sorted by id: `(run_id, (StoredRun,
        record))` as `stored_record` gives them, or `(run_id, error)` for a run whose row or
        record is damaged (the StoreError that says what). Read `batch` runs at a time, each
        batch in one read transaction: a run's columns, record and steps are of one moment,
        whatever commits meanwhile (`statechart runs verify` reads through here)."""
        return store_read.stored_records(self, spec, batch, _same_steps)

    def _stored_runs(self, where: str, args: list[Any]) -> list[StoredRun]:
        return store_read.stored_runs(self, where, args)

    def _query(self, sql: str, args: list[Any]) -> list[Any]:
        """The rows of one read-only query (the views above read through here only)."""
        return self._read(lambda: self._x(sql, args).fetchall())


def _first_line(exc: BaseException) -> str:
    """A driver's message without its DETAIL and HINT lines (they may quote a whole value)."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _mark_of(run: Run[Any, Any, Any]) -> _Mark:
    mark = getattr(run, MARK_ATTR, None)
    if not isinstance(mark, _Mark):
        raise StoreError(f"run {run.record.runId!r} was not created or loaded by a store: "
                         "store.create(run) stores a new run")
    return mark


def _saved(run: Run[Any, Any, Any], mark: _Mark, revision: int) -> None:
    history = run.record.history
    steps = len(history) if mark.rewrite else mark.steps + len(history) - mark.known
    setattr(run, MARK_ATTR, _Mark(revision, steps, len(history), run._active,
                                  due=_deadline(run)))


def _deadline(run: Run[Any, Any, Any]) -> dt.datetime | None:
    """The run's earliest armed timer's due time (the `next_due` column), or None."""
    return getattr(run, "next_deadline", None)  # a run of a spec with timers has one


def _json_value(spec: Any, field: str, value: Any) -> Any:
    """A value as the idempotency table keeps it (to tell a reused key from a repeat)."""
    if value is None or field not in spec.codec.types:
        return repr(value)
    try:
        return spec.codec.to_json(field, value)
    except TypeError:  # the event refuses it
        return repr(value)


def _same_steps(kept: list[Any], table: list[Any]) -> bool:
    """Whether a record's own history is the history table's (times as instants)."""
    return [_step_json(x) for x in kept] == [_step_json(x) for x in table]


def _step_json(step: Any) -> Any:
    """A history step as JSON compares: its time as an instant (the record keeps the text it
    was given, the table UTC), anything that is not a step as it is."""
    if not isinstance(step, dict) or not isinstance(step.get("at"), str):
        return step
    try:
        return {**step, "at": parse_time("at", step["at"])}
    except ValueError:  # not a time: compared as text
        return step


_utc_text = store_checks.utc_text  # times in the store's columns
