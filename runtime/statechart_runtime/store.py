"""A run store: runs kept in SQLite, saved with optimistic concurrency, events fired in one
transaction, every transition appended to a queryable history (docs/runs.md).

```python
from statechart_runtime.store import open_store

store = open_store("sqlite:///runs.db")
store.create(AgentRun())
store.fire(AgentRun, run_id, "approve", idempotency_key="approval-17")
```

Standard library only (`sqlite3`): the runtime gains no dependency. One `SqliteStore` holds
one connection: use one per process (or per thread); any number of processes may share the
database file.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from statechart_runtime.errors import ConcurrentUpdate, RunNotFound, StoreError
from statechart_runtime.run import Run
from statechart_runtime.values import parse_time, utcnow

__all__ = ["SCHEMA_VERSION", "ConcurrentUpdate", "Fired", "HistoryRow", "RunNotFound",
           "SqliteStore", "StoreError", "StoredRun", "open_store"]

# The version of the tables below. A database written by a newer store is refused.
SCHEMA_VERSION = 1
# Attributes the store sets on a run it created or loaded: the revision the run was loaded at,
# and how many history steps the store holds for it (the steps after those are new).
REVISION_ATTR = "_sc_store_revision"
STORED_STEPS_ATTR = "_sc_store_steps"

RunT = TypeVar("RunT", bound=Run[Any, Any, Any])

_SCHEMA = """
CREATE TABLE runs (
    run_id       TEXT PRIMARY KEY,
    spec         TEXT NOT NULL,
    spec_version INTEGER NOT NULL,
    revision     INTEGER NOT NULL,
    status       TEXT NOT NULL,
    steps        INTEGER NOT NULL,
    record       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX runs_by_status ON runs (spec, status);
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
    """What `store.fire` did: `run` is the stored run after it (saved at `revision`);
    `applied` is False when the idempotency key had been seen and nothing was fired."""

    run: Any
    applied: bool
    revision: int


def open_store(url: str | Path, *, timeout: float = 30.0) -> SqliteStore:
    """The store at `url`: a file path, or `sqlite:///relative/runs.db`,
    `sqlite:////absolute/runs.db`. The tables are created if the database has none; a database
    of a newer store schema is refused (StoreError). `timeout` is how long a writer waits for
    another one (SQLite's busy timeout), in seconds."""
    text = str(url)
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme != "sqlite":
            raise StoreError(f"unsupported store URL {text!r}: only sqlite:///PATH is "
                             "supported (PostgreSQL is not yet)")
        if not rest.startswith("/") or rest == "/":
            raise StoreError(f"bad store URL {text!r}: expected sqlite:///PATH")
        text = rest[1:]
    if not text or text == ":memory:":
        raise StoreError("a store needs a database file (an in-memory database is private "
                         "to one connection)")
    return SqliteStore(text, timeout=timeout)


class SqliteStore:
    def __init__(self, path: str | Path, *, timeout: float = 30.0, max_attempts: int = 5
                 ) -> None:
        self.path = str(path)
        self.max_attempts = max_attempts
        # Autocommit mode: every transaction is begun and ended here, explicitly.
        self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise StoreError(f"{self.path}: could not switch the database to WAL mode "
                             f"(it is in {mode} mode)")
        # FULL: a commit that returned survives a power cut, not only a crash of the process.
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA foreign_keys = ON")
        self._init_schema()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema --------------------------------------------------------------------------

    def _init_schema(self) -> None:
        with self._transaction():
            self._db.execute("CREATE TABLE IF NOT EXISTS store_meta "
                             "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = self._db.execute(
                "SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute("INSERT INTO store_meta VALUES ('schema_version', ?)",
                                 (str(SCHEMA_VERSION),))
                return
            version = int(row[0])
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: the run store's schema is version {version}, written by a "
                    f"newer statechart-runtime; this one reads version {SCHEMA_VERSION}: "
                    "upgrade statechart-runtime")
            if version < SCHEMA_VERSION:  # no older version exists yet
                raise StoreError(f"{self.path}: unknown run store schema version {version}")

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE (the write lock at once: no deadlock upgrading a read lock) ...
        COMMIT, or ROLLBACK on any exception."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- runs ----------------------------------------------------------------------------

    def create(self, run: Run[Any, Any, Any]) -> None:
        """Store a run that is not stored yet (a new one, or one restored from a record):
        its record, state and history. StoreError if its run id is taken."""
        with self._transaction():
            record: Any = run.record
            exists = self._db.execute("SELECT 1 FROM runs WHERE run_id = ?",
                                      (record.runId,)).fetchone()
            if exists:
                raise StoreError(f"run {record.runId!r} is already in the store")
            at = _utc_text(utcnow())
            self._db.execute(
                "INSERT INTO runs VALUES (?, ?, ?, 1, ?, 0, '', ?, ?)",
                (record.runId, run._sc_spec.name, run._sc_spec.version, record.status.value,
                 at, at))
            self._write(run, 0, at)
        setattr(run, REVISION_ATTR, 1)
        setattr(run, STORED_STEPS_ATTR, len(record.history))

    def load(self, run_class: type[RunT], run_id: str, **kwargs: Any) -> RunT:
        """The stored run `run_id`, restored as a `run_class` (keyword arguments go to
        `run_class.restore`: `model=`, `clock=`). Its record is checked as `from_json` checks
        it (the spec's InvalidRecord); a run of another spec is refused the same way."""
        return self._load(run_class, run_id, kwargs)

    def _load(self, run_class: type[RunT], run_id: str, kwargs: dict[str, Any]) -> RunT:
        row = self._db.execute(
            "SELECT spec, spec_version, revision, steps, record FROM runs WHERE run_id = ?",
            (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        spec_name, version, revision, steps, text = row
        spec = run_class._sc_spec
        if spec_name != spec.name:
            raise spec.invalid("(store)", f"run {run_id!r} is a run of {spec_name!r} "
                               f"(version {version}), not of {spec.name!r}")
        record = run_class._sc_record.from_json(text)  # upgrades older spec versions
        if record.runId != run_id:
            raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                               f"{record.runId!r}")
        if len(record.history) != steps:
            raise spec.invalid("history", f"the store holds {steps} steps of run {run_id!r}, "
                               f"its record {len(record.history)}")
        run = run_class.restore(record, **kwargs)
        setattr(run, REVISION_ATTR, revision)
        setattr(run, STORED_STEPS_ATTR, steps)
        return run

    def save(self, run: Run[Any, Any, Any]) -> int:
        """Save a run this store created or loaded; its new revision. ConcurrentUpdate if
        the stored run was saved since (by this process or another): nothing is written."""
        with self._transaction():
            revision = self._save(run)
        setattr(run, REVISION_ATTR, revision)
        setattr(run, STORED_STEPS_ATTR, len(run.record.history))
        return revision

    def _save(self, run: Run[Any, Any, Any]) -> int:
        record: Any = run.record
        run_id = record.runId
        expected = getattr(run, REVISION_ATTR, None)
        steps = getattr(run, STORED_STEPS_ATTR, None)
        if expected is None or steps is None:
            raise StoreError(f"run {run_id!r} was not created or loaded by a store: "
                             "store.create(run) stores a new run")
        row = self._db.execute("SELECT revision, steps FROM runs WHERE run_id = ?",
                               (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        if row[0] != expected:
            raise ConcurrentUpdate(run_id, expected, row[0])
        if row[1] != steps or len(record.history) < steps:  # the history only grows
            raise StoreError(f"run {run_id!r}: the store holds {row[1]} steps, the run was "
                             f"loaded with {steps} and has {len(record.history)}")
        at = _utc_text(utcnow())
        self._db.execute("UPDATE runs SET revision = ?, spec_version = ?, status = ?, "
                         "updated_at = ? WHERE run_id = ? AND revision = ?",
                         (expected + 1, run._sc_spec.version, record.status.value, at, run_id,
                          expected))
        self._write(run, steps, at)
        return expected + 1  # type: ignore[no-any-return]

    def _write(self, run: Run[Any, Any, Any], stored_steps: int, at: str) -> None:
        """The record, its steps after `stored_steps`, its active states: inside the caller's
        transaction."""
        record: Any = run.record
        run_id = record.runId
        spec = run._sc_spec
        self._write_history(run_id, record.history, stored_steps)
        self._db.execute("UPDATE runs SET record = ?, steps = ? WHERE run_id = ?",
                         (record.to_json(), len(record.history), run_id))
        self._write_states(run_id, spec.name, run._active)

    def _write_history(self, run_id: str, history: list[Any], start: int) -> None:
        self._db.executemany(
            'INSERT INTO history (run_id, idx, event, source, target, at, "values") '
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(run_id, index, step.event.value, step.source.value, step.target.value,
              _utc_text(step.at), json.dumps(step.values, ensure_ascii=False,
                                             allow_nan=False, sort_keys=True))
             for index, step in enumerate(history[start:], start)])

    def _write_states(self, run_id: str, spec: str, active: tuple[str, ...]) -> None:
        self._db.execute("DELETE FROM run_states WHERE run_id = ?", (run_id,))
        self._db.executemany("INSERT INTO run_states VALUES (?, ?, ?)",
                             [(run_id, spec, name) for name in active])

    # -- events --------------------------------------------------------------------------

    def fire(self, run_class: type[RunT], run_id: str, event: Any, *,
             idempotency_key: str | None = None, **values: Any) -> Fired:
        """Load the run, send it `event` with `values`, save it: one transaction. An event
        the run refuses raises (EventNotAccepted, MissingField, ...) and changes nothing.
        With `idempotency_key`, an event already applied with that key for this run is not
        fired again (`applied` is False); the key reused for another event is a StoreError.
        A concurrent update is retried, up to `max_attempts` times."""
        spec = run_class._sc_spec
        name = event.value if isinstance(event, spec.event_enum) else event
        key_values = "" if idempotency_key is None else json.dumps(
            {f: _json_value(spec, f, v) for f, v in values.items()}, sort_keys=True)
        for attempt in range(1, self.max_attempts + 1):
            try:
                with self._transaction():
                    if idempotency_key is not None:
                        seen = self._db.execute(
                            'SELECT event, "values" FROM idempotency WHERE run_id = ? AND '
                            "key = ?", (run_id, idempotency_key)).fetchone()
                        if seen is not None:
                            if seen != (name, key_values):
                                raise StoreError(
                                    f"idempotency key {idempotency_key!r} of run {run_id!r} "
                                    f"was used for `{seen[0]}` {seen[1]}, not `{name}` "
                                    f"{key_values}")
                            run = self._load(run_class, run_id, {})
                            return Fired(run, False, getattr(run, REVISION_ATTR))
                    run = self._load(run_class, run_id, {})
                    run.send(event, **values)
                    revision = self._save(run)
                    if idempotency_key is not None:
                        self._db.execute("INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?)",
                                         (run_id, idempotency_key, name, key_values, revision,
                                          _utc_text(utcnow())))
            except ConcurrentUpdate:
                # Cannot happen while the write lock is held from load to save; kept so a
                # store whose load is outside the lock (or a future backend) stays correct.
                if attempt == self.max_attempts:
                    raise
                continue
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == self.max_attempts:
                    raise
                continue
            setattr(run, REVISION_ATTR, revision)
            setattr(run, STORED_STEPS_ATTR, len(run.record.history))
            return Fired(run, True, revision)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- queries -------------------------------------------------------------------------

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
        rows = self._db.execute(sql + " ORDER BY idx", args).fetchall()
        return [HistoryRow(r[0], r[1], r[2], r[3], r[4], parse_time("at", r[5]),
                           json.loads(r[6])) for r in rows]

    def find(self, run_class: type[Run[Any, Any, Any]], *, status: Any = None,
             state: Any = None, tag: str | None = None) -> list[str]:
        """The ids (sorted) of the stored runs of `run_class`'s spec whose top-level state is
        `status`, of which `state` is active (at any depth), and of which a state carrying
        `tag` is active: every condition given must hold."""
        spec = run_class._sc_spec
        sql = "SELECT run_id FROM runs WHERE spec = ?"
        args: list[Any] = [spec.name]
        if status is not None:
            sql += " AND status = ?"
            args.append(_state_name(spec, status))
        if state is not None:
            sql += (" AND run_id IN (SELECT run_id FROM run_states WHERE spec = ? "
                    "AND state = ?)")
            args += [spec.name, _state_name(spec, state)]
        if tag is not None:
            tagged = sorted(spec.tags.get(tag, ()))
            if not tagged:
                return []
            marks = ", ".join("?" * len(tagged))
            sql += (" AND run_id IN (SELECT run_id FROM run_states WHERE spec = ? "
                    f"AND state IN ({marks}))")
            args += [spec.name, *tagged]
        return [row[0] for row in self._db.execute(sql + " ORDER BY run_id", args)]

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
        history = [{"event": e, "source": s, "target": t, "at": at, "values": json.loads(v)}
                   for e, s, t, at, v in self._query(
                       'SELECT event, source, target, at, "values" FROM history '
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
        return self._db.execute(sql, args).fetchall()


def _state_name(spec: Any, state: Any) -> str:
    name = state.value if isinstance(state, spec.state_enum) else state
    if name not in spec.states_by_name:
        raise ValueError(f"{spec.name!r} has no state {name!r}")
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
