"""A run store: runs kept in SQLite or PostgreSQL, saved with optimistic concurrency, events
fired in one transaction, every transition appended to a queryable history (docs/runs.md).

```python
from statechart_runtime.store import open_store

store = open_store("sqlite:///runs.db")           # or "postgresql://user@host/db"
store.create(AgentRun())
store.fire(AgentRun, run_id, "approve", idempotency_key="approval-17")
```

The logic is here, once; `SqliteStore` (standard library `sqlite3`: the runtime gains no
dependency) and `PostgresStore` (psycopg 3, `statechart_runtime.store_postgres`, the
`postgres` extra) differ only in connecting, placeholders, locking and which errors are worth
a retry. One store holds one connection: use one per process (or per thread); any number of
processes may share the database.

A run's row holds its record without the history (the "head"); the steps are rows of their
own. `fire` restores the run from the head alone and appends the new steps, so its cost does
not grow with the run's history; `load` reads the steps too and checks the whole record.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from statechart_runtime import replay as _replay
from statechart_runtime.errors import ConcurrentUpdate, RunError, RunNotFound, StoreError
from statechart_runtime.run import Run
from statechart_runtime.values import parse_time, utcnow

__all__ = ["SCHEMA_VERSION", "ConcurrentUpdate", "Fired", "HistoryRow", "RunNotFound",
           "RunStore", "SqliteStore", "StoreError", "StoredRun", "open_store"]

# The version of the tables below. A database written by another version is refused.
SCHEMA_VERSION = 2
# The attribute a store sets on a run it created or loaded (a `_Mark`).
MARK_ATTR = "_sc_store"

# The runs of a spec whose earliest timer is due, earliest first (the index runs_by_due).
DUE_SQL = ("SELECT run_id FROM runs WHERE spec = ? AND next_due IS NOT NULL AND next_due <= ? "
           "ORDER BY next_due LIMIT ?")
RunT = TypeVar("RunT", bound=Run[Any, Any, Any])
T = TypeVar("T")

SCHEMA = """
CREATE TABLE runs (
    run_id       TEXT PRIMARY KEY,
    spec         TEXT NOT NULL,
    spec_version INTEGER NOT NULL,
    revision     INTEGER NOT NULL,
    status       TEXT NOT NULL,
    steps        INTEGER NOT NULL,
    record       TEXT NOT NULL,
    next_due     TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX runs_by_status ON runs (spec, status, run_id);
CREATE INDEX runs_by_due ON runs (spec, next_due) WHERE next_due IS NOT NULL;
CREATE TABLE run_states (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    spec   TEXT NOT NULL,
    state  TEXT NOT NULL,
    PRIMARY KEY (run_id, state)
) WITHOUT ROWID;
CREATE INDEX run_states_by_state ON run_states (spec, state, run_id);
CREATE TABLE history (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    idx    INTEGER NOT NULL,
    event  TEXT NOT NULL,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    at     TEXT NOT NULL,
    "values" TEXT NOT NULL,
    kind   TEXT,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE INDEX history_by_event ON history (event, at);
CREATE INDEX history_by_time ON history (at);
CREATE TABLE idempotency (
    run_id   TEXT NOT NULL REFERENCES runs (run_id),
    key      TEXT NOT NULL,
    event    TEXT NOT NULL,
    "values" TEXT NOT NULL,
    revision INTEGER NOT NULL,
    call     TEXT NOT NULL,
    at       TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
"""


@dataclasses.dataclass(frozen=True, slots=True)
class HistoryRow:
    """One transition of a stored run, as the `history` table holds it."""

    run_id: str
    index: int
    event: str
    source: str
    target: str
    at: dt.datetime
    values: dict[str, Any]


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
    restored from its head holds none), its active states then, and whether the stored steps
    must be rewritten (the record was upgraded from an older spec version: names changed)."""

    revision: int
    steps: int
    known: int
    active: tuple[str, ...]
    rewrite: bool = False


def open_store(url: str | Path, *, timeout: float = 30.0) -> RunStore:
    """The store at `url`: a file path, `sqlite:///relative/runs.db`, `sqlite:////abs/runs.db`,
    or `postgresql://user:password@host:port/database` (any libpq URL; psycopg 3 must be
    installed: the `postgres` extra). The tables are created if the database has none; a
    database of a newer store schema is refused (StoreError). `timeout` is how long a writer
    waits for another one, and the budget for reconnecting to a server that went away, in
    seconds."""
    text = str(url)
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme in ("postgresql", "postgres"):
            try:
                from statechart_runtime.store_postgres import PostgresStore
            except ImportError as exc:
                raise StoreError(f"a PostgreSQL store needs psycopg 3 ({exc}): pip install "
                                 "'statechart-runtime[postgres]'") from None
            return PostgresStore(text, timeout=timeout)
        if scheme != "sqlite":
            raise StoreError(f"unsupported store URL {text!r}: expected sqlite:///PATH or "
                             "postgresql://...")
        if not rest.startswith("/") or rest == "/":
            raise StoreError(f"bad store URL {text!r}: expected sqlite:///PATH")
        text = rest[1:]
    if not text or text == ":memory:":
        raise StoreError("a store needs a database file (an in-memory database is private "
                         "to one connection)")
    return SqliteStore(text, timeout=timeout)


class RunStore:
    """The API and its logic; a backend subclass connects and says how its SQL differs."""

    # Appended to the SELECT of a run's row inside `fire` (PostgreSQL: " FOR UPDATE").
    lock_run = ""
    # Appended to the SELECT that claims the next due run (PostgreSQL: FOR UPDATE SKIP LOCKED).
    claim = ""
    begin_write = "BEGIN"
    begin_read = "BEGIN"
    # Errors of the database module: a unique key violated.
    integrity_error: type[Exception] = Exception

    def __init__(self, where: str, *, timeout: float, max_attempts: int = 5) -> None:
        self.where = where
        self.timeout = timeout
        self.max_attempts = max_attempts
        self._committing = False
        self._db: Any = None
        try:
            self._connect()
        except StoreError:
            raise
        except Exception as exc:  # a file that cannot be opened, a server that is not there
            raise StoreError(f"{where}: cannot open the run store: {exc}") from None
        self._with_retries(self._init_schema, repeatable=True)

    # -- what a backend provides ---------------------------------------------------------

    def _connect(self) -> None:
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        return sql

    def _failure(self, exc: BaseException) -> str | None:
        """"busy" (retry the transaction), "disconnected" (reconnect, then retry) or None."""
        return None

    def _lock_schema(self) -> None:
        """Inside the schema's transaction: keep other new stores out until it commits."""

    def _schema_statements(self) -> list[str]:
        return [s for s in SCHEMA.split(";") if s.strip()]

    # -- plumbing ------------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _x(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._db.execute(self._sql(sql), args)

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if len(rows) == 1:  # the common case (one step), in one round trip
            self._x(sql, rows[0])
        elif rows:
            self._db.cursor().executemany(self._sql(sql), rows)

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
                      begin: str | None = None) -> T:
        """`work()` in a transaction, retried when the database was busy (`max_attempts`
        times in all) or the connection was lost (reconnecting for up to `timeout` seconds).
        A connection lost while committing leaves the outcome unknown: the work is retried
        only when it is `repeatable` (a read, or a fire with an idempotency key)."""
        attempt = 0
        deadline: float | None = None
        while True:
            attempt += 1
            self._committing = False
            try:
                with self._transaction(begin or self.begin_write):
                    return work()
            except Exception as exc:
                kind = self._failure(exc)
                if kind is None:
                    raise
                if kind == "busy":
                    if attempt >= self.max_attempts:
                        raise
                    continue
                if self._committing and not repeatable:
                    raise StoreError(
                        f"{self.where}: the connection was lost while committing, so whether "
                        "the change was stored is unknown; fire with an idempotency_key to "
                        f"make retries safe ({exc})") from exc
                if deadline is None:
                    deadline = time.monotonic() + self.timeout
                elif time.monotonic() > deadline:  # reconnected, and lost again, and again
                    raise StoreError(f"{self.where}: the connection kept failing for "
                                     f"{self.timeout:g} s: {exc}") from exc
                self._reconnect(deadline, exc)

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
                    raise StoreError(f"{self.where}: lost the connection and could not "
                                     f"reconnect within {self.timeout:g} s: {exc}") from cause
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    # -- schema --------------------------------------------------------------------------

    def _init_schema(self) -> None:
        self._lock_schema()
        self._x("CREATE TABLE IF NOT EXISTS store_meta "
                "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self._x("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            for statement in self._schema_statements():
                self._x(statement)
            self._x("INSERT INTO store_meta VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),))
            return
        version = int(row[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.where}: the run store's schema is version {version}, written by a "
                f"newer statechart-runtime; this one reads version {SCHEMA_VERSION}: "
                "upgrade statechart-runtime")
        if version != SCHEMA_VERSION:  # 1: a development version that kept whole records
            raise StoreError(f"{self.where}: run store schema version {version} was written by "
                             "a development version of statechart-runtime and is not read "
                             "by this one: create a new store")

    # -- runs ----------------------------------------------------------------------------

    def create(self, run: Run[Any, Any, Any]) -> None:
        """Store a run that is not stored yet (a new one, or one restored from a record):
        its record, state and history. StoreError if its run id is taken."""
        record: Any = run.record
        spec = run._sc_spec

        def work() -> None:
            if self._x("SELECT 1 FROM runs WHERE run_id = ?", (record.runId,)).fetchone():
                raise StoreError(f"run {record.runId!r} is already in the store")
            at = _utc_text(utcnow())
            try:
                self._x("INSERT INTO runs VALUES (?, ?, ?, 0, ?, 0, '', NULL, ?, ?)",
                        (record.runId, spec.name, spec.version, record.status.value, at, at))
            except self.integrity_error:  # created by another process since the SELECT
                raise StoreError(f"run {record.runId!r} is already in the store") from None
            self._write(run, _Mark(0, 0, 0, (), rewrite=True), at, locked=True)

        self._with_retries(work, repeatable=False)
        setattr(run, MARK_ATTR, _Mark(1, len(record.history), len(record.history),
                                      run._active))

    def load(self, run_class: type[RunT], run_id: str, **kwargs: Any) -> RunT:
        """The stored run `run_id`, restored as a `run_class` (keyword arguments go to
        `run_class.restore`: `model=`, `clock=`), with its whole history. The record is
        checked as `from_json` checks it, replaying the history (the spec's InvalidRecord);
        a run of another spec is refused the same way."""
        def work() -> RunT:
            return self._full_run(run_class, run_id, self._head_row(run_id, ""), kwargs)
        return self._with_retries(work, repeatable=True, begin=self.begin_read)

    def _head_row(self, run_id: str, lock: str) -> tuple[Any, ...]:
        row = self._x("SELECT spec, spec_version, revision, steps, record FROM runs "
                      "WHERE run_id = ?" + lock, (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        return tuple(row)

    def _full_run(self, run_class: type[RunT], run_id: str, row: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> RunT:
        _, version, revision, steps, _ = row
        data = self._head_data(run_class, run_id, row)
        data["history"] = [
            {"event": e, "source": s, "target": t, "at": at, "values": json.loads(v),
             **(_replay.kind_entry(kind) if kind else {})}
            for e, s, t, at, v, kind in self._x(
                'SELECT event, source, target, at, "values", kind FROM history '
                "WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()]
        spec = run_class._sc_spec
        if len(data["history"]) != steps:
            raise spec.invalid("history", f"the store holds {len(data['history'])} steps of "
                               f"run {run_id!r}, its row says {steps}")
        record = run_class._sc_record.from_dict(data)  # upgrades older versions; replays
        if record.runId != run_id:
            raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                               f"{record.runId!r}")
        run = run_class.restore(record, check=False, **kwargs)
        setattr(run, MARK_ATTR, _Mark(revision, steps, steps, run._active,
                                      rewrite=version != spec.version))
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
        run = run_class.restore(record, check=False)
        setattr(run, MARK_ATTR, _Mark(row[2], row[3], 0, run._active))
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
        mark = _mark_of(run)
        at = _utc_text(utcnow())
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
            found = self._x("SELECT revision FROM runs WHERE run_id = ?" + self.lock_run,
                            (run_id,)).fetchone()
            if found is None:
                raise RunNotFound(run_id)
            if found[0] != mark.revision:
                raise ConcurrentUpdate(run_id, mark.revision, found[0])
        steps = len(history) if mark.rewrite else mark.steps + len(history) - mark.known
        deadline = getattr(run, "next_deadline", None)  # a spec with timers has one
        self._x("UPDATE runs SET revision = ?, spec_version = ?, status = ?, steps = ?, "
                "record = ?, next_due = ?, updated_at = ? WHERE run_id = ?",
                (mark.revision + 1, spec.version, record.status.value, steps,
                 json.dumps(record.to_dict(history=False), ensure_ascii=False,
                            allow_nan=False),
                 None if deadline is None else _utc_text(deadline), at, run_id))
        if mark.rewrite:
            self._x("DELETE FROM history WHERE run_id = ?", (run_id,))
            start, new = 0, history
        else:
            start, new = mark.steps, history[mark.known:]
        self._many('INSERT INTO history (run_id, idx, event, source, target, at, "values", '
                   "kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(run_id, index, step.event.value, step.source.value, step.target.value,
                     _utc_text(step.at), json.dumps(step.values, ensure_ascii=False,
                                                    allow_nan=False, sort_keys=True),
                     step.kind)
                    for index, step in enumerate(new, start)])
        if run._active != mark.active:
            self._x("DELETE FROM run_states WHERE run_id = ?", (run_id,))
            self._many("INSERT INTO run_states VALUES (?, ?, ?)",
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
        spec = run_class._sc_spec
        name = event.value if isinstance(event, spec.event_enum) else event
        key_values = "" if idempotency_key is None else json.dumps(
            {f: _json_value(spec, f, v) for f, v in values.items()}, sort_keys=True)
        call = uuid.uuid4().hex  # tells this call's own commit from an earlier call's

        def work() -> Fired | RunError:
            row = self._head_row(run_id, self.lock_run)
            if idempotency_key is not None:
                seen = self._x('SELECT event, "values", call FROM idempotency WHERE '
                               "run_id = ? AND key = ?", (run_id, idempotency_key)).fetchone()
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
            try:
                run.send_at(at if at is not None else utcnow(), event, **values)
            except RunError as refusal:
                if not run.record.history:  # nothing happened: nothing to save
                    raise
                # Timers fired before the event was refused: they are kept.
                revision = self._write(run, mark, _utc_text(utcnow()), locked=True)
                _saved(run, mark, revision)
                return refusal
            revision = self._write(run, mark, _utc_text(utcnow()), locked=True)
            if idempotency_key is not None:
                self._x("INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (run_id, idempotency_key, name, key_values, revision, call,
                         _utc_text(utcnow())))
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
        return self._with_retries(lambda: self._fire_due(run_class, run_id, now),
                                  repeatable=False)

    def _fire_due(self, run_class: type[RunT], run_id: str, now: dt.datetime | None) -> Fired:
        row = self._head_row(run_id, self.lock_run)
        run = self._head_run(run_class, run_id, row)
        mark = _mark_of(run)
        armed = list(run.timers)
        events = tuple(run.fire_due(now if now is not None else utcnow()))
        if not events and list(run.timers) == armed:  # nothing due (or no timers at all)
            return Fired(run, False, row[2])
        # A declined timer (its guards said no) is saved even when nothing fired: it no
        # longer counts for `next_due`, so it cannot keep other runs' timers waiting.
        revision = self._write(run, mark, _utc_text(utcnow()), locked=True)
        _saved(run, mark, revision)
        return Fired(run, bool(events), revision, events)

    def fire_next_due(self, run_class: type[Run[Any, Any, Any]],
                      now: dt.datetime | None = None) -> Fired | None:
        """Claim the run of `run_class`'s spec whose timer is due first (at `now`), fire its
        due timers and save it, in one transaction; None when no run is due. On PostgreSQL
        the claim skips runs other workers hold (FOR UPDATE SKIP LOCKED), so any number of
        workers can call this in a loop and never fire one timer twice."""
        when = _utc_text(now if now is not None else utcnow())
        spec = run_class._sc_spec

        def work() -> Fired | None:
            row = self._x("SELECT run_id FROM runs WHERE spec = ? AND next_due IS NOT NULL "
                          "AND next_due <= ? ORDER BY next_due LIMIT 1" + self.claim,
                          (spec.name, when)).fetchone()
            return None if row is None else self._fire_due(run_class, row[0], now)

        return self._with_retries(work, repeatable=False)

    # -- queries -------------------------------------------------------------------------

    def _read(self, work: Callable[[], T]) -> T:
        return self._with_retries(work, repeatable=True, begin=self.begin_read)

    def history(self, run_id: str, *, event: str | None = None,
                since: dt.datetime | None = None, until: dt.datetime | None = None
                ) -> list[HistoryRow]:
        """The stored transitions of `run_id` in order, optionally only those of `event`
        and those at or after `since` and before `until`."""
        sql = ('SELECT run_id, idx, event, source, target, at, "values" FROM history '
               "WHERE run_id = ?")
        args: list[Any] = [run_id]
        if event is not None:
            sql += " AND event = ?"
            args.append(getattr(event, "value", event))
        if since is not None:
            sql += " AND at >= ?"
            args.append(_utc_text(since))
        if until is not None:
            sql += " AND at < ?"
            args.append(_utc_text(until))
        rows = self._read(lambda: self._x(sql + " ORDER BY idx", args).fetchall())
        return [HistoryRow(r[0], r[1], r[2], r[3], r[4], parse_time("at", r[5]),
                           json.loads(r[6])) for r in rows]

    def find(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
             state: Any = None, tag: str | None = None) -> list[str]:
        """The ids (sorted) of the stored runs of `run_class`'s spec whose record reports
        `status` (its top-level state, or a name of its status vocabulary), of which `state`
        is active (at any depth), and of which a state carrying
        `tag` is active: every condition given must hold."""
        query = self.find_sql(run_class, status=status, state=state, tag=tag)
        if query is None:
            return []
        return [row[0] for row in self._read(lambda: self._x(*query).fetchall())]

    def find_sql(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
                 state: Any = None, tag: str | None = None
                 ) -> tuple[str, list[Any]] | None:
        """The query `find` runs, and its arguments (None: nothing can match): for EXPLAIN.
        One set of ids per condition, intersected; each is read from an index that gives the
        ids in order (runs_by_status, run_states_by_state)."""
        spec = run_class._sc_spec
        parts: list[str] = []
        args: list[Any] = []
        if status is not None:
            parts.append("SELECT run_id FROM runs WHERE spec = ? AND status = ?")
            args += [spec.name, _status_name(spec, status)]
        if state is not None:
            parts.append("SELECT run_id FROM run_states WHERE spec = ? AND state = ?")
            args += [spec.name, _state_name(spec, state)]
        if tag is not None:
            tagged = sorted(spec.tags.get(tag, ()))
            if not tagged:
                return None
            marks = ", ".join("?" * len(tagged))
            # DISTINCT: two active states may carry the tag.
            parts.append("SELECT DISTINCT run_id FROM run_states WHERE spec = ? AND "
                         f"state IN ({marks})")
            args += [spec.name, *tagged]
        if not parts:
            parts.append("SELECT run_id FROM runs WHERE spec = ?")
            args.append(spec.name)
        return " INTERSECT ".join(parts) + " ORDER BY run_id", args

    def due(self, run_class: type[Run[Any, Any, Any]], now: dt.datetime | None = None, *,
            limit: int = 100) -> list[str]:
        """The ids of the runs of `run_class`'s spec with a timer due at `now` (default: the
        current time), earliest first, at most `limit`. Only a list: `fire_next_due` claims
        and fires them."""
        when = _utc_text(now if now is not None else utcnow())
        return [row[0] for row in self._read(lambda: self._x(
            DUE_SQL, (run_class._sc_spec.name, when, limit)).fetchall())]


    # -- read-only views for tools (`statechart runs`): no Run class needed ------------

    def stored_runs(self, spec: str | None = None) -> list[StoredRun]:
        """Every stored run (of the spec named `spec`), sorted by id, from the store's
        columns: no record is loaded or checked."""
        return self._stored_runs(*(("spec = ?", [spec]) if spec is not None else ("1 = 1", [])))

    def stored_record(self, run_id: str) -> tuple[StoredRun, dict[str, Any]]:
        """The run `run_id` as stored, whatever its spec: its columns and its whole record as
        parsed JSON, its history from the `history` table, NOT checked (a tool checks it
        against a spec it chooses). RunNotFound if there is none; StoreError if the record is
        not a JSON object, or holds a history other than the table's."""
        found = self._stored_runs("run_id = ?", [run_id])
        if not found:
            raise RunNotFound(run_id)
        text = self._query("SELECT record FROM runs WHERE run_id = ?", [run_id])[0][0]
        try:
            record = json.loads(text)
        except ValueError as exc:
            raise StoreError(f"run {run_id!r}: the stored record is not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise StoreError(f"run {run_id!r}: the stored record is not a JSON object")
        history = [{"event": e, "source": s, "target": t, "at": at, "values": json.loads(v),
                    **(_replay.kind_entry(kind) if kind else {})}
                   for e, s, t, at, v, kind in self._query(
                       'SELECT event, source, target, at, "values", kind FROM history '
                       "WHERE run_id = ? ORDER BY idx", [run_id])]
        kept = record.get("history")
        if kept and [_step_json(step) for step in kept] != [_step_json(h) for h in history]:
            raise StoreError(f"run {run_id!r}: the record's history ({len(kept)} steps) is "
                             f"not the history table's ({len(history)} steps)")
        record["history"] = history
        return found[0], record

    def _stored_runs(self, where: str, args: list[Any]) -> list[StoredRun]:
        # `where` is a condition on `spec` or `run_id`, columns of `runs` and `run_states`.
        runs = self._query(
            "SELECT run_id, spec, spec_version, revision, status, steps, created_at, "
            f"updated_at FROM runs WHERE {where} ORDER BY run_id", args)
        states: dict[str, list[str]] = {}
        for run_id, state in self._query(
                f"SELECT run_id, state FROM run_states WHERE {where} ORDER BY run_id, state",
                args):
            states.setdefault(run_id, []).append(state)
        last = dict(self._query(
            "SELECT run_id, MAX(at) FROM history WHERE run_id IN "
            f"(SELECT run_id FROM runs WHERE {where}) GROUP BY run_id", args))
        return [StoredRun(r[0], r[1], r[2], r[3], r[4], tuple(states.get(r[0], ())), r[5],
                          parse_time("created_at", r[6]), parse_time("updated_at", r[7]),
                          parse_time("at", last.get(r[0]) or r[6])) for r in runs]

    def _query(self, sql: str, args: list[Any]) -> list[Any]:
        """The rows of one read-only query (the views above read through here only)."""
        return self._read(lambda: self._x(sql, args).fetchall())


class SqliteStore(RunStore):
    """Runs in a SQLite file (WAL, `synchronous=FULL`). Every write transaction takes the
    database's write lock at once (BEGIN IMMEDIATE): writers take turns, readers never wait."""

    begin_write = "BEGIN IMMEDIATE"  # the write lock at once: no deadlock upgrading a read
    integrity_error = sqlite3.IntegrityError

    def __init__(self, path: str | Path, *, timeout: float = 30.0, max_attempts: int = 5
                 ) -> None:
        self.path = str(path)
        super().__init__(self.path, timeout=timeout, max_attempts=max_attempts)

    def _connect(self) -> None:
        # Autocommit mode: every transaction is begun and ended here, explicitly.
        self._db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise StoreError(f"{self.path}: could not switch the database to WAL mode "
                             f"(it is in {mode} mode)")
        # FULL: a commit that returned survives a power cut, not only a crash of the process.
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA foreign_keys = ON")

    def _failure(self, exc: BaseException) -> str | None:
        if isinstance(exc, sqlite3.OperationalError) and (
                "locked" in str(exc) or "busy" in str(exc)):
            return "busy"
        return None


def _mark_of(run: Run[Any, Any, Any]) -> _Mark:
    mark = getattr(run, MARK_ATTR, None)
    if not isinstance(mark, _Mark):
        raise StoreError(f"run {run.record.runId!r} was not created or loaded by a store: "
                         "store.create(run) stores a new run")
    return mark


def _saved(run: Run[Any, Any, Any], mark: _Mark, revision: int) -> None:
    history = run.record.history
    steps = len(history) if mark.rewrite else mark.steps + len(history) - mark.known
    setattr(run, MARK_ATTR, _Mark(revision, steps, len(history), run._active))


def _state_name(spec: Any, state: Any) -> str:
    name = state.value if isinstance(state, spec.state_enum) else state
    if name not in spec.states_by_name:
        raise ValueError(f"{spec.name!r} has no state {name!r}")
    return name  # type: ignore[no-any-return]


def _status_name(spec: Any, status: Any) -> str:
    """A status as the `status` column keeps it: the record's `status` value."""
    name = status.value if isinstance(status, spec.status_enum) else status
    if name not in spec.statuses_by_name:
        raise ValueError(f"{spec.name!r} has no status {name!r}")
    return name  # type: ignore[no-any-return]


def _json_value(spec: Any, field: str, value: Any) -> Any:
    """A value as the idempotency table keeps it (to tell a reused key from a repeat)."""
    if value is None or field not in spec.codec.types:
        return repr(value)
    try:
        return spec.codec.to_json(field, value)
    except TypeError:  # the event refuses it
        return repr(value)


def _step_json(step: Any) -> Any:
    """A history step as JSON compares: its time as an instant (the record keeps the text it
    was given, the table UTC), anything that is not a step as it is."""
    if not isinstance(step, dict) or not isinstance(step.get("at"), str):
        return step
    try:
        return {**step, "at": parse_time("at", step["at"])}
    except ValueError:  # not a time: compared as text
        return step


def _utc_text(value: dt.datetime) -> str:
    """Times in the store's columns: UTC, fixed width, so text order is time order."""
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclasses.dataclass(frozen=True, slots=True)
class StoredRun:
    """A stored run as the store's columns describe it (`stored_runs`): `states` are the
    active states (ancestors included, sorted by name), `last_transition_at` the last
    step's time (when the run was stored, for a run with no step)."""

    run_id: str
    spec: str
    spec_version: int
    revision: int
    status: str
    states: tuple[str, ...]
    steps: int
    created_at: dt.datetime
    updated_at: dt.datetime
    last_transition_at: dt.datetime
