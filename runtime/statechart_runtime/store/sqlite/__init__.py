"""The SQLite run store (`open_store("sqlite:///runs.db")`, or a plain path): its SQL, whole
(`SQL`: the statements, also those composed from a call's conditions; `MIGRATIONS`: the
store's schema), what its driver's errors mean (`failure`), and its drivers: `SqliteStore`
(the standard library's `sqlite3`, so the runtime gains no dependency) and
`AsyncSqliteStore` (sqlite3 too, a thread per connection: store/sqlite/threaded.py), one
source (store/sqlite/_async.py; the synchronous driver is generated from it).

Every write transaction takes the database's write lock at once (BEGIN IMMEDIATE): writers
take turns, readers never wait (WAL). A read-only store opens the file with `mode=ro`
(`immutable=1` only in a read-only folder with no -wal file to read, where SQLite cannot make
its -shm file): it never writes nor waits for a writer's lock.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from statechart_runtime.errors import StoreError
from statechart_runtime.store.core.statements import Statements

if TYPE_CHECKING:
    from statechart_runtime.store.sqlite._async import AsyncSqliteStore
    from statechart_runtime.store.sqlite._sync import SqliteStore

# SQLite result codes (https://sqlite.org/rescode.html): sqlite3 gives them on its errors.
BUSY, LOCKED, READONLY, CORRUPT, CANTOPEN, FULL, TOOBIG, NOTADB = (
    5, 6, 8, 11, 14, 13, 18, 26)
_CONSTRAINT_PRIMARYKEY, _CONSTRAINT_UNIQUE = 1555, 2067
# How long a writer sleeps between two tries of the write lock, in seconds (a random time
# between the two: about the time another writer's commit holds it).
WAIT_MIN, WAIT_MAX = 0.0005, 0.002
# `find`'s look-up of the runs of the spec's other versions.
_OTHER_VERSIONS = (
    "SELECT r.run_id, r.spec_version, s.state FROM runs r LEFT JOIN run_states s "
    "ON s.run_id = r.run_id WHERE r.spec = %s AND r.spec_version < %s "
    "UNION ALL SELECT run_id, spec_version, NULL FROM runs WHERE spec = %s AND "
    "spec_version > %s")
# The stored trace contexts of a run's states, as one JSON object (NULL: none).
_ORIGINS = ("CASE WHEN count(trace_context) > 0 THEN json_group_object(state, trace_context) "
            "END")
_SNAPSHOT_HEAD = ("SELECT r.run_id, r.spec, r.spec_version, r.revision, r.status, r.steps, "
                  "r.created_at, r.updated_at, r.next_due, r.record FROM runs r")


class _SqliteStatements(Statements):
    """SQLite's statements composed from a call's conditions."""

    def version_repair(self, version: int, *, missing: bool) -> str:
        if missing:
            return f"INSERT INTO store_meta VALUES ('schema_version', '{int(version)}')"
        return (f"UPDATE store_meta SET value = '{int(version)}' "
                "WHERE key = 'schema_version'")

    def skip_arg(self, values: Sequence[str]) -> list[Any]:
        # The ids as one JSON array: json_each reads any number of them.
        return [json.dumps(list(values))] if values else []

    def _skip(self, skip: bool) -> str:
        return " AND run_id NOT IN (SELECT value FROM json_each(?))" if skip else ""

    def claim_due(self, *, skip: bool, limit: int) -> str:
        return ("SELECT run_id FROM runs WHERE spec = ? AND spec_version <= ? "
                f"AND next_due IS NOT NULL AND next_due <= ?{self._skip(skip)} "
                f"ORDER BY next_due LIMIT {int(limit)}")

    def claim_work(self) -> str:
        # The write transaction holds the database's lock: the read is the claim.
        return ("SELECT w.item_key, w.run_id, w.state, w.handler, w.attempts, w.failures, "
                "w.token, w.owner, w.lease_until, w.trace_context, r.trace_context, r.spec, "
                "r.spec_version, r.revision, "
                "r.steps, r.record, r.status FROM work_items w JOIN runs r ON r.run_id = "
                "w.run_id WHERE w.spec = ? AND w.ended_at IS NULL AND w.ready_at <= ? AND "
                "w.state IN (SELECT value FROM json_each(?)) AND r.spec_version <= ? "
                "ORDER BY w.ready_at LIMIT 1")

    def next_due(self, *, skip: bool) -> str:
        return ("SELECT run_id, next_due FROM runs WHERE spec = ? AND spec_version <= ? "
                f"AND next_due IS NOT NULL{self._skip(skip)} ORDER BY next_due LIMIT 1")

    def history(self, *, event: bool, since: bool, until: bool, first: bool = False,
                limit: int | None = None) -> str:
        return ('SELECT run_id, idx, event, source, target, at, "values", kind FROM history '
                "WHERE run_id = ?" + " AND event = ?" * event + " AND at >= ?" * since
                + " AND at < ?" * until + " AND idx >= ?" * first + " ORDER BY idx"
                + ("" if limit is None else f" LIMIT {int(limit)}"))

    def run_filter(self, *, spec: bool, run_id: bool, status: bool, groups: Sequence[int],
                   due_by: bool) -> str:
        parts = ["1 = 1"] + ["r.spec = ?"] * spec + ["r.run_id = ?"] * run_id \
            + ["r.status = ?"] * status
        for size in groups:
            if not size:
                return "1 = 0"
            parts.append("EXISTS (SELECT 1 FROM run_states s WHERE s.run_id = r.run_id AND "
                         f"s.state IN ({', '.join(['?'] * size)}))")
        if due_by:
            parts.append("r.next_due IS NOT NULL AND r.next_due <= ?")
        return " AND ".join(parts)

    def runs_page(self, where: str, *, by_due: bool, after: bool, limit: int) -> str:
        if by_due:
            where += " AND r.next_due IS NOT NULL"
            if after:
                where += " AND (r.next_due > ? OR (r.next_due = ? AND r.run_id > ?))"
        elif after:
            where += " AND r.run_id > ?"
        order = "r.next_due, r.run_id" if by_due else "r.run_id"
        return ("SELECT r.run_id, r.spec, r.spec_version, r.revision, r.status, r.steps, "
                "r.created_at, r.updated_at, r.next_due, (SELECT h.at FROM history h WHERE "
                "h.run_id = r.run_id AND h.idx = r.steps - 1) "
                f"FROM runs r WHERE {where} ORDER BY {order} LIMIT {int(limit)}")

    def states_of(self, count: int) -> str:
        return ("SELECT run_id, state FROM run_states WHERE run_id IN ("
                + ", ".join(["?"] * count) + ") ORDER BY run_id, state")

    def status_counts_capped(self, where: str, statuses: int, cap: int | None) -> str:
        limit = "" if cap is None else f" LIMIT {int(cap)}"
        return " UNION ALL ".join(
            f"SELECT ?, COUNT(*) FROM (SELECT 1 FROM runs r WHERE {where} AND "
            f"r.status = ?{limit}) AS counted" for _ in range(statuses))

    def moves(self) -> str:
        return ("SELECT idx, event, source, target, kind FROM history WHERE run_id = ? "
                "AND idx >= ? ORDER BY idx")

    def status_counts(self, where: str) -> str:
        return (f"SELECT r.status, COUNT(*) FROM runs r WHERE {where} "
                "GROUP BY r.status ORDER BY r.status")

    def find(self, *, status: bool, state: bool, tagged: int) -> str:
        parts = []
        if status:
            parts.append("SELECT run_id FROM runs WHERE spec = ? AND status = ?")
        if state:
            parts.append("SELECT run_id FROM run_states WHERE spec = ? AND state = ?")
        if tagged:  # DISTINCT: two active states may carry the tag
            parts.append("SELECT DISTINCT run_id FROM run_states WHERE spec = ? AND "
                         f"state IN ({', '.join(['?'] * tagged)})")
        if not parts:
            parts.append("SELECT run_id FROM runs WHERE spec = ?")
        return " INTERSECT ".join(parts) + " ORDER BY run_id"

    def stored_runs(self, *, spec: bool) -> tuple[str, str, str]:
        where = "spec = ?" if spec else "1 = 1"
        return ("SELECT run_id, spec, spec_version, revision, status, steps, created_at, "
                f"updated_at, next_due FROM runs WHERE {where} ORDER BY run_id",
                f"SELECT run_id, state FROM run_states WHERE {where} ORDER BY run_id, state",
                "SELECT run_id, MAX(at) FROM history WHERE run_id IN (SELECT run_id FROM "
                f"runs WHERE {where}) GROUP BY run_id")

    def snapshot(self, *, by: str, limit: int | None) -> tuple[str, str, str]:
        where = {"run": "r.run_id = ?", "spec": "r.spec = ?",
                 "after": "r.spec = ? AND r.run_id > ?"}[by]
        ranged = {"s": "", "h": ""}
        heads = f"{_SNAPSHOT_HEAD} WHERE {where} ORDER BY r.run_id"
        if limit is not None:
            heads += f" LIMIT {int(limit)}"
            where += " AND r.run_id <= ?"
            ranged = {a: f" AND {a}.run_id >= ? AND {a}.run_id <= ?" for a in ranged}
        return (heads,
                "SELECT s.run_id, s.state FROM run_states s JOIN runs r ON r.run_id = "
                f"s.run_id WHERE {where}{ranged['s']} ORDER BY s.run_id, s.state",
                'SELECT h.run_id, h.event, h.source, h.target, h.at, h."values", h.kind '
                f"FROM history h JOIN runs r ON r.run_id = h.run_id WHERE {where}"
                f"{ranged['h']} ORDER BY h.run_id, h.idx")


SQL = _SqliteStatements(
    begin_write="BEGIN IMMEDIATE",  # the write lock at once: no deadlock upgrading a read
    begin_read="BEGIN",
    lock_schema="",  # BEGIN IMMEDIATE already keeps other writers out
    table_count="SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
    read_version="SELECT value FROM store_meta WHERE key = 'schema_version'",
    write_version="INSERT INTO store_meta VALUES ('schema_version', ?) "
                  "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    run_exists="SELECT 1 FROM runs WHERE run_id = ?",
    insert_run="INSERT INTO runs (run_id, spec, spec_version, revision, status, steps, "
               "record, next_due, created_at, updated_at, trace_context) "
               "VALUES (?, ?, ?, 0, ?, 0, '', NULL, ?, ?, ?)",
    read_context="SELECT trace_context FROM runs WHERE run_id = ?",
    head="SELECT spec, spec_version, revision, steps, record, status FROM runs "
         "WHERE run_id = ?",
    # The write lock is the database's, taken by BEGIN IMMEDIATE: no row lock to add.
    head_locked="SELECT spec, spec_version, revision, steps, record, status FROM runs "
                "WHERE run_id = ?",
    head_checks="SELECT s.states, h.idx, h.target, h.at FROM (SELECT group_concat(state, ' ') "
                "AS states FROM run_states WHERE run_id = ?) s LEFT JOIN (SELECT idx, "
                "target, at FROM history WHERE run_id = ? ORDER BY idx DESC LIMIT 1) h ON 1 = 1",
    head_checked="SELECT r.spec, r.spec_version, r.revision, r.steps, r.record, r.status, "
                 "(SELECT group_concat(state, ' ') FROM run_states WHERE run_id = r.run_id), "
                 "h.idx, h.target, h.at FROM runs r LEFT JOIN (SELECT idx, target, at FROM "
                 "history WHERE run_id = ? ORDER BY idx DESC LIMIT 1) h ON 1 = 1 "
                 "WHERE r.run_id = ?",
    # The same, traced: what a tracing listener links to (docs/observability.md).
    head_checks_traced="SELECT s.states, h.idx, h.target, h.at, s.origins, (SELECT "
                       "trace_context FROM runs WHERE run_id = ?) FROM (SELECT "
                       f"group_concat(state, ' ') AS states, {_ORIGINS} AS origins FROM "
                       "run_states WHERE run_id = ?) s LEFT JOIN (SELECT idx, target, at "
                       "FROM history WHERE run_id = ? ORDER BY idx DESC LIMIT 1) h ON 1 = 1",
    head_checked_traced="SELECT r.spec, r.spec_version, r.revision, r.steps, r.record, "
                        "r.status, (SELECT group_concat(state, ' ') FROM run_states WHERE "
                        "run_id = r.run_id), h.idx, h.target, h.at, (SELECT "
                        f"{_ORIGINS} FROM run_states WHERE run_id = r.run_id), "
                        "r.trace_context FROM runs r LEFT JOIN (SELECT idx, target, at FROM "
                        "history WHERE run_id = ? ORDER BY idx DESC LIMIT 1) h ON 1 = 1 "
                        "WHERE r.run_id = ?",
    revision_locked="SELECT revision FROM runs WHERE run_id = ?",
    update_head="UPDATE runs SET revision = ?, spec_version = ?, status = ?, steps = ?, "
                "record = ?, next_due = ?, updated_at = ? WHERE run_id = ?",
    update_head_if="UPDATE runs SET revision = ?, spec_version = ?, status = ?, steps = ?, "
                   "record = ?, next_due = ?, updated_at = ? WHERE run_id = ? "
                   "AND revision = ?",
    steps='SELECT event, source, target, at, "values", kind FROM history WHERE run_id = ? '
          "ORDER BY idx",
    delete_steps="DELETE FROM history WHERE run_id = ?",
    # A history rewritten (an upgrade) may delete the highest numbers: they are kept, or
    # its steps written again would take numbers a watch has passed, and be missed.
    keep_step_number="INSERT INTO store_meta (key, value) SELECT 'step_seq', MAX(seq) FROM "
                     "history WHERE run_id = ? HAVING MAX(seq) IS NOT NULL ON CONFLICT (key) "
                     "DO UPDATE SET value = MAX(CAST(value AS INTEGER), "
                     "CAST(excluded.value AS INTEGER))",
    # seq: the step's place in commit order (`watch`), the next one under the write lock,
    # above every number given before (deleted ones too: keep_step_number).
    insert_step='INSERT INTO history (run_id, idx, event, source, target, at, "values", '
                "kind, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, (SELECT MAX(IFNULL(MAX(seq), 0), "
                "IFNULL((SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = "
                "'step_seq'), 0)) + 1 FROM history))",
    delete_states="DELETE FROM run_states WHERE run_id = ?",
    delete_state="DELETE FROM run_states WHERE run_id = ? AND state = ?",
    insert_state="INSERT INTO run_states (run_id, spec, state, trace_context) VALUES "
                 "(?, ?, ?, ?)",
    state_context="UPDATE run_states SET trace_context = ? WHERE run_id = ? AND state = ?",
    key_seen='SELECT event, "values", call FROM idempotency WHERE run_id = ? AND key = ?',
    insert_key="INSERT INTO idempotency (run_id, key, event, \"values\", revision, call, at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)",
    due="SELECT run_id FROM runs WHERE spec = ? AND spec_version <= ? "
        "AND next_due IS NOT NULL AND next_due <= ? ORDER BY next_due LIMIT ?",
    other_versions=_OTHER_VERSIONS.replace("%s", "?"),
    announce_due="",  # SQLite cannot notify: its workers look every max_sleep seconds
    announce_step="",  # its watchers look every `poll` seconds
    watch_end="SELECT IFNULL(MAX(seq), 0), '', -1 FROM history",
    # (spec, seq, run_id, idx, limit): seq alone orders the steps (unique).
    watch_steps='SELECT h.seq, h.run_id, h.idx, h.event, h.source, h.target, h.at, h."values", '
                "h.kind FROM history h JOIN runs r ON r.run_id = h.run_id WHERE r.spec = ?1 "
                "AND h.seq > ?2 AND ?3 IS NOT NULL AND ?4 IS NOT NULL ORDER BY h.seq LIMIT ?5",
    # Work items (store/core/work.py).
    insert_item="INSERT INTO work_items (item_key, run_id, spec, state, handler, attempts, "
                "failures, token, ready_at, created_at, trace_context) VALUES (?, ?, ?, ?, "
                "?, 0, 0, 0, ?, ?, ?) ON CONFLICT (item_key) DO NOTHING",
    end_items="UPDATE work_items SET ended_at = ?, ended_by = ?, ready_at = NULL, "
              "owner = NULL, lease_until = NULL WHERE run_id = ? AND state = ? "
              "AND ended_at IS NULL",
    end_attempts_of_state="UPDATE work_attempts SET ended_at = ?, result = ? WHERE item_key IN "
                          "(SELECT item_key FROM work_items WHERE run_id = ? AND state = ?) "
                          "AND ended_at IS NULL",
    item_locked="SELECT token, owner, lease_until, ended_at, ended_by, state, failures, "
                "attempts FROM work_items WHERE item_key = ?",
    claim_item="UPDATE work_items SET attempts = ?, failures = ?, token = ?, owner = ?, "
               "ready_at = ?, lease_until = ? WHERE item_key = ?",
    insert_attempt="INSERT INTO work_attempts (item_key, attempt, owner, claimed_at) "
                   "VALUES (?, ?, ?, ?)",
    end_attempt="UPDATE work_attempts SET ended_at = ?, result = ?, error = ? "
                "WHERE item_key = ? AND attempt = ? AND ended_at IS NULL",
    extend_lease="UPDATE work_items SET ready_at = ?, lease_until = ? WHERE item_key = ?",
    retry_item="UPDATE work_items SET failures = ?, owner = NULL, lease_until = NULL, "
               "ready_at = ?, last_error = ? WHERE item_key = ?",
    end_item="UPDATE work_items SET ended_at = ?, ended_by = ?, ready_at = NULL, "
             "owner = NULL, lease_until = NULL, failures = ?, last_error = ? WHERE item_key = ? "
             "AND ended_at IS NULL",
    release_item="UPDATE work_items SET owner = NULL, lease_until = NULL, ready_at = ? "
                 "WHERE item_key = ?",
    items_of_run="SELECT item_key, run_id, state, handler, attempts, failures, owner, "
                 "ready_at, lease_until, last_error, created_at, ended_at, ended_by "
                 "FROM work_items WHERE run_id = ? ORDER BY created_at, item_key",
    attempts_of_run="SELECT a.item_key, a.attempt, a.owner, a.claimed_at, a.ended_at, "
                    "a.result, a.error FROM work_attempts a JOIN work_items w ON "
                    "w.item_key = a.item_key WHERE w.run_id = ? ORDER BY a.item_key, "
                    "a.attempt",
    work_counts="SELECT handler, CASE WHEN owner IS NULL THEN 'pending' ELSE 'claimed' "
                "END, COUNT(*) FROM work_items WHERE spec = ? AND ended_at IS NULL "
                "GROUP BY 1, 2",
)

# MIGRATIONS[v] turns store schema version v-1 into v, in the transaction that opens the
# store; position = version, so the last one is SCHEMA_VERSION. A new version appends a step.
MIGRATIONS: list[tuple[str, ...]] = [
    # 0: the version table.
    ("CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",),
    # 1: a development schema (whole records in one row); no release wrote it.
    (),
    # 2: heads, active states, steps and idempotency keys in tables of their own.
    ("""CREATE TABLE runs (
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
    )""",
     "CREATE INDEX runs_by_status ON runs (spec, status, run_id)",
     "CREATE INDEX runs_by_due ON runs (spec, next_due) WHERE next_due IS NOT NULL",
     """CREATE TABLE run_states (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        spec   TEXT NOT NULL,
        state  TEXT NOT NULL,
        PRIMARY KEY (run_id, state)
    ) WITHOUT ROWID""",
     "CREATE INDEX run_states_by_state ON run_states (spec, state, run_id)",
     """CREATE TABLE history (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        idx    INTEGER NOT NULL,
        event  TEXT NOT NULL,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        at     TEXT NOT NULL,
        "values" TEXT NOT NULL,
        kind   TEXT,
        PRIMARY KEY (run_id, idx)
    ) WITHOUT ROWID""",
     "CREATE INDEX history_by_event ON history (event, at)",
     "CREATE INDEX history_by_time ON history (at)",
     """CREATE TABLE idempotency (
        run_id   TEXT NOT NULL REFERENCES runs (run_id),
        key      TEXT NOT NULL,
        event    TEXT NOT NULL,
        "values" TEXT NOT NULL,
        revision INTEGER NOT NULL,
        call     TEXT NOT NULL,
        at       TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    ) WITHOUT ROWID"""),
    # 3: the runs of a spec by version: `find` and the due queries of a class meet the runs
    # of other versions of its spec (a rolling deploy) through it, not by reading every run.
    ("CREATE INDEX runs_by_version ON runs (spec, spec_version)",),
    # 4: work items (a state's `work:`), each claim of one an attempt.
    ("""CREATE TABLE work_items (
        item_key    TEXT PRIMARY KEY,
        run_id      TEXT NOT NULL REFERENCES runs (run_id),
        spec        TEXT NOT NULL,
        state       TEXT NOT NULL,
        handler     TEXT NOT NULL,
        attempts    INTEGER NOT NULL,
        failures    INTEGER NOT NULL,
        token       INTEGER NOT NULL,
        owner       TEXT,
        ready_at    TEXT,
        lease_until TEXT,
        last_error  TEXT,
        created_at  TEXT NOT NULL,
        ended_at    TEXT,
        ended_by    TEXT
    )""",
     "CREATE INDEX work_items_ready ON work_items (spec, ready_at) WHERE ended_at IS NULL",
     "CREATE INDEX work_items_of_run ON work_items (run_id, state)",
     """CREATE TABLE work_attempts (
        item_key   TEXT NOT NULL REFERENCES work_items (item_key),
        attempt    INTEGER NOT NULL,
        owner      TEXT NOT NULL,
        claimed_at TEXT NOT NULL,
        ended_at   TEXT,
        result     TEXT,
        error      TEXT,
        PRIMARY KEY (item_key, attempt)
    )"""),
    # 5: the position of each step in commit order, for `watch`: writers take turns, so
    # one more than the highest is the next to commit. Steps stored before are numbered by
    # their time (UPDATE ... FROM: SQLite 3.33).
    ("ALTER TABLE history ADD COLUMN seq INTEGER",
     "UPDATE history SET seq = n.seq FROM (SELECT run_id, idx, ROW_NUMBER() OVER "
     "(ORDER BY at, run_id, idx) AS seq FROM history) AS n "
     "WHERE n.run_id = history.run_id AND n.idx = history.idx",
     "CREATE UNIQUE INDEX history_by_seq ON history (seq)"),
    # 6: what a listener keeps with a run when it is created (a tracing listener's W3C trace
    # context: statechart_runtime.otel), read back for its later steps.
    ("ALTER TABLE runs ADD COLUMN trace_context TEXT",),
    # 7: the trace context of the step that entered a state (its timer's arming) and of the
    # one that enqueued a work item: what a timer fired or an item claimed later, in any
    # process, links to.
    ("ALTER TABLE run_states ADD COLUMN trace_context TEXT",
     "ALTER TABLE work_items ADD COLUMN trace_context TEXT"),
]


def path_of(url: str) -> str:
    """The file of `sqlite:///relative.db`, `sqlite:////absolute.db` or a plain path."""
    path = url
    if "://" in url:
        rest = url.partition("://")[2]
        if not rest.startswith("/") or rest == "/":
            raise StoreError(f"bad store URL {url!r}: expected sqlite:///PATH")
        path = rest[1:]
    if not path or path == ":memory:":
        raise StoreError("a store needs a database file (an in-memory database is private "
                         "to one connection)")
    return path


def open_url(url: str, *, timeout: float, read_only: bool) -> SqliteStore:
    """The synchronous store of `url` (opened: tables created or upgraded)."""
    from statechart_runtime.store.sqlite._sync import SqliteStore

    return SqliteStore(path_of(url), timeout=timeout, read_only=read_only)


async def open_async_url(url: str, *, timeout: float, read_only: bool,
                         pool_size: int | None, pool_timeout: float | None
                         ) -> AsyncSqliteStore:
    """The asynchronous store of `url`, opened (tables created or upgraded)."""
    from statechart_runtime.store.sqlite._async import AsyncSqliteStore

    store = AsyncSqliteStore(path_of(url), timeout=timeout, read_only=read_only,
                             pool_size=pool_size or DEFAULT_POOL, pool_timeout=pool_timeout)
    await store.open()
    return store


# The asynchronous store's connections (sqlite3: a thread each). One by default: writers
# take turns on the database's lock whatever their number, and more threads contend for the
# GIL (200 fires at once: a pool of 8 did 0.12x the events of a pool of 1,
# docs/performance.md); a larger pool lets long reads overlap.
DEFAULT_POOL = 1


def failure(exc: BaseException) -> str | None:
    """What a sqlite3 error means (`AsyncRunStore._failure`)."""
    if not isinstance(exc, sqlite3.Error):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF  # extended codes keep it low
    if primary in (BUSY, LOCKED) or (
            code is None and ("locked" in str(exc) or "busy" in str(exc))):
        return "busy"
    if primary == FULL:
        return "full"
    if primary == TOOBIG:
        return "unstorable"
    if primary in (CORRUPT, NOTADB):
        return "damaged"
    if code in (_CONSTRAINT_PRIMARYKEY, _CONSTRAINT_UNIQUE):
        return "duplicate"
    return None


def __getattr__(name: str) -> Any:
    # The drivers, imported when first named.
    if name == "SqliteStore":
        from statechart_runtime.store.sqlite._sync import SqliteStore
        return SqliteStore
    if name == "AsyncSqliteStore":
        from statechart_runtime.store.sqlite._async import AsyncSqliteStore
        return AsyncSqliteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
