"""The PostgreSQL run store (`open_store("postgresql://...")`): its SQL, whole (`SQL`: the
statements, also those composed from a call's conditions; `MIGRATIONS`: the store's schema),
what psycopg's errors mean (`failure`), and its drivers: `PostgresStore` (psycopg 3, one
connection: the `postgres` extra) and `AsyncPostgresStore` (psycopg's AsyncConnection in a
psycopg_pool pool), one source (store/postgres/_async.py; the synchronous driver is
generated from it).

What differs from SQLite: `fire` locks the run's row (`SELECT ... FOR UPDATE`) where SQLite
locks the whole database, so workers firing at different runs do not wait for each other;
`fire_next_due` claims a due run with `FOR UPDATE SKIP LOCKED`, so workers never wait for,
nor fire twice, a run another one holds; reads see one snapshot (REPEATABLE READ); a lost
connection (a server restarted, a network cut) is reopened and the transaction retried. The
tables live in the connection's current schema (the first of its `search_path`): several
stores can share one database in schemas of their own
(`postgresql://host/db?options=-csearch_path%3Dmy_schema`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import psycopg
import psycopg.errors

from statechart_runtime.store.core.statements import Statements

if TYPE_CHECKING:
    from statechart_runtime.store.postgres._async import AsyncPostgresStore
    from statechart_runtime.store.postgres._sync import PostgresStore

# The server is shutting down, starting up or crashed: the connection is lost or unusable.
_SERVER_GONE = (psycopg.errors.AdminShutdown, psycopg.errors.CrashShutdown,
                psycopg.errors.CannotConnectNow)
# The channel a write of an earlier deadline notifies, with the spec's name; workers LISTEN
# on it (statechart_runtime.worker).
DUE_CHANNEL = "statechart_due"
LISTEN = f"LISTEN {DUE_CHANNEL}"
# The channel every step notifies at its commit, with its spec's name: `watch` LISTENs on it.
STEP_CHANNEL = "statechart_steps"
LISTEN_STEPS = f"LISTEN {STEP_CHANNEL}"
# The key of the advisory lock that makes two stores creating the tables take turns.
_SCHEMA_LOCK = 0x5C_5708E
# The asynchronous store's connections (psycopg_pool), unless `pool_size` says.
DEFAULT_POOL = 8
_SNAPSHOT_HEAD = ("SELECT r.run_id, r.spec, r.spec_version, r.revision, r.status, r.steps, "
                  "r.created_at, r.updated_at, r.next_due, r.record FROM runs r")


class _PostgresStatements(Statements):
    """PostgreSQL's statements composed from a call's conditions."""

    def version_repair(self, version: int, *, missing: bool) -> str:
        if missing:
            return f"INSERT INTO store_meta VALUES ('schema_version', '{int(version)}')"
        return (f"UPDATE store_meta SET value = '{int(version)}' "
                "WHERE key = 'schema_version'")

    def skip_arg(self, values: Sequence[str]) -> list[Any]:
        # A Python list is one text[] parameter: any number of ids (a statement takes at
        # most 65,535 parameters).
        return [list(values)] if values else []

    def _skip(self, skip: bool) -> str:
        return " AND run_id <> ALL(%s)" if skip else ""

    def claim_due(self, *, skip: bool, limit: int) -> str:
        # Runs other workers hold are skipped, not waited for: workers share the due runs.
        return ("SELECT run_id FROM runs WHERE spec = %s AND spec_version <= %s "
                f"AND next_due IS NOT NULL AND next_due <= %s{self._skip(skip)} "
                f"ORDER BY next_due LIMIT {int(limit)} FOR UPDATE OF runs SKIP LOCKED")

    def claim_work(self) -> str:
        # Items other workers hold are skipped, not waited for; the run's head comes with
        # the item (the handler's record), its row not locked.
        return ("SELECT w.item_key, w.run_id, w.state, w.handler, w.attempts, w.failures, "
                "w.token, w.owner, w.lease_until, w.trace_context, r.trace_context, r.spec, "
                "r.spec_version, r.revision, "
                "r.steps, r.record, r.status FROM work_items w JOIN runs r ON r.run_id = "
                "w.run_id WHERE w.spec = %s AND w.ended_at IS NULL AND w.ready_at <= %s AND "
                "w.state = ANY(%s) AND r.spec_version <= %s ORDER BY w.ready_at LIMIT 1 "
                "FOR UPDATE OF w SKIP LOCKED")

    def next_due(self, *, skip: bool) -> str:
        return ("SELECT run_id, next_due FROM runs WHERE spec = %s AND spec_version <= %s "
                f"AND next_due IS NOT NULL{self._skip(skip)} ORDER BY next_due LIMIT 1")

    def history(self, *, event: bool, since: bool, until: bool, first: bool = False,
                limit: int | None = None) -> str:
        return ('SELECT run_id, idx, event, source, target, at, "values", kind FROM history '
                "WHERE run_id = %s" + " AND event = %s" * event + " AND at >= %s" * since
                + " AND at < %s" * until + " AND idx >= %s" * first + " ORDER BY idx"
                + ("" if limit is None else f" LIMIT {int(limit)}"))

    def run_filter(self, *, spec: bool, run_id: bool, status: bool, groups: Sequence[int],
                   due_by: bool) -> str:
        parts = ["1 = 1"] + ["r.spec = %s"] * spec + ["r.run_id = %s"] * run_id \
            + ["r.status = %s"] * status
        for size in groups:
            if not size:
                return "1 = 0"
            parts.append("EXISTS (SELECT 1 FROM run_states s WHERE s.run_id = r.run_id AND "
                         f"s.state IN ({', '.join(['%s'] * size)}))")
        if due_by:
            parts.append("r.next_due IS NOT NULL AND r.next_due <= %s")
        return " AND ".join(parts)

    def runs_page(self, where: str, *, by_due: bool, after: bool, limit: int) -> str:
        if by_due:
            where += " AND r.next_due IS NOT NULL"
            if after:
                where += " AND (r.next_due > %s OR (r.next_due = %s AND r.run_id > %s))"
        elif after:
            where += " AND r.run_id > %s"
        order = "r.next_due, r.run_id" if by_due else "r.run_id"
        return ("SELECT r.run_id, r.spec, r.spec_version, r.revision, r.status, r.steps, "
                "r.created_at, r.updated_at, r.next_due, (SELECT h.at FROM history h WHERE "
                "h.run_id = r.run_id AND h.idx = r.steps - 1) "
                f"FROM runs r WHERE {where} ORDER BY {order} LIMIT {int(limit)}")

    def states_of(self, count: int) -> str:
        return ("SELECT run_id, state FROM run_states WHERE run_id IN ("
                + ", ".join(["%s"] * count) + ") ORDER BY run_id, state")

    def status_counts_capped(self, where: str, statuses: int, cap: int | None) -> str:
        limit = "" if cap is None else f" LIMIT {int(cap)}"
        return " UNION ALL ".join(
            f"SELECT %s, COUNT(*) FROM (SELECT 1 FROM runs r WHERE {where} AND "
            f"r.status = %s{limit}) AS counted" for _ in range(statuses))

    def moves(self) -> str:
        return ("SELECT idx, event, source, target, kind FROM history WHERE run_id = %s "
                "AND idx >= %s ORDER BY idx")

    def status_counts(self, where: str) -> str:
        return (f"SELECT r.status, COUNT(*) FROM runs r WHERE {where} "
                "GROUP BY r.status ORDER BY r.status")

    def find(self, *, status: bool, state: bool, tagged: int) -> str:
        parts = []
        if status:
            parts.append("SELECT run_id FROM runs WHERE spec = %s AND status = %s")
        if state:
            parts.append("SELECT run_id FROM run_states WHERE spec = %s AND state = %s")
        if tagged:  # DISTINCT: two active states may carry the tag
            parts.append("SELECT DISTINCT run_id FROM run_states WHERE spec = %s AND "
                         f"state IN ({', '.join(['%s'] * tagged)})")
        if not parts:
            parts.append("SELECT run_id FROM runs WHERE spec = %s")
        return " INTERSECT ".join(parts) + " ORDER BY run_id"

    def stored_runs(self, *, spec: bool) -> tuple[str, str, str]:
        where = "spec = %s" if spec else "1 = 1"
        return ("SELECT run_id, spec, spec_version, revision, status, steps, created_at, "
                f"updated_at, next_due FROM runs WHERE {where} ORDER BY run_id",
                f"SELECT run_id, state FROM run_states WHERE {where} ORDER BY run_id, state",
                "SELECT run_id, MAX(at) FROM history WHERE run_id IN (SELECT run_id FROM "
                f"runs WHERE {where}) GROUP BY run_id")

    def snapshot(self, *, by: str, limit: int | None) -> tuple[str, str, str]:
        where = {"run": "r.run_id = %s", "spec": "r.spec = %s",
                 "after": "r.spec = %s AND r.run_id > %s"}[by]
        ranged = {"s": "", "h": ""}
        heads = f"{_SNAPSHOT_HEAD} WHERE {where} ORDER BY r.run_id"
        if limit is not None:
            heads += f" LIMIT {int(limit)}"
            where += " AND r.run_id <= %s"
            ranged = {a: f" AND {a}.run_id >= %s AND {a}.run_id <= %s" for a in ranged}
        return (heads,
                "SELECT s.run_id, s.state FROM run_states s JOIN runs r ON r.run_id = "
                f"s.run_id WHERE {where}{ranged['s']} ORDER BY s.run_id, s.state",
                'SELECT h.run_id, h.event, h.source, h.target, h.at, h."values", h.kind '
                f"FROM history h JOIN runs r ON r.run_id = h.run_id WHERE {where}"
                f"{ranged['h']} ORDER BY h.run_id, h.idx")


_HEAD = ("SELECT spec, spec_version, revision, steps, record, status FROM runs "
         "WHERE run_id = %s")
SQL = _PostgresStatements(
    begin_write="BEGIN",
    begin_read="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    lock_schema=f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})",
    table_count="SELECT count(*) FROM pg_catalog.pg_tables "
                "WHERE schemaname = current_schema() AND tablename = %s",
    read_version="SELECT value FROM store_meta WHERE key = 'schema_version'",
    write_version="INSERT INTO store_meta VALUES ('schema_version', %s) "
                  "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    run_exists="SELECT 1 FROM runs WHERE run_id = %s",
    insert_run="INSERT INTO runs (run_id, spec, spec_version, revision, status, steps, "
               "record, next_due, created_at, updated_at, trace_context) "
               "VALUES (%s, %s, %s, 0, %s, 0, '', NULL, %s, %s, %s)",
    read_context="SELECT trace_context FROM runs WHERE run_id = %s",
    head=_HEAD,
    head_locked=_HEAD + " FOR UPDATE",  # the run's row, until the transaction ends
    head_checks="SELECT s.states, h.idx, h.target, h.at FROM (SELECT string_agg(state, ' ') "
                "AS states FROM run_states WHERE run_id = %s) s LEFT JOIN (SELECT idx, "
                "target, at FROM history WHERE run_id = %s ORDER BY idx DESC LIMIT 1) h ON 1 = 1",
    head_checked="",  # fire holds the run's row from its read to its write
    # The same, traced: what a tracing listener links to (docs/observability.md).
    head_checks_traced="SELECT s.states, h.idx, h.target, h.at, s.origins, (SELECT "
                       "trace_context FROM runs WHERE run_id = %s) FROM (SELECT "
                       "string_agg(state, ' ') AS states, (json_object_agg(state, "
                       "trace_context) FILTER (WHERE trace_context IS NOT NULL))::text AS "
                       "origins FROM run_states WHERE run_id = %s) s LEFT JOIN (SELECT idx, "
                       "target, at FROM history WHERE run_id = %s ORDER BY idx DESC LIMIT 1) h "
                       "ON 1 = 1",
    head_checked_traced="",
    revision_locked="SELECT revision FROM runs WHERE run_id = %s FOR UPDATE",
    update_head_if="",  # revision_locked, then update_head
    update_head="UPDATE runs SET revision = %s, spec_version = %s, status = %s, steps = %s, "
                "record = %s, next_due = %s, updated_at = %s WHERE run_id = %s",
    steps='SELECT event, source, target, at, "values", kind FROM history WHERE run_id = %s '
          "ORDER BY idx",
    delete_steps="DELETE FROM history WHERE run_id = %s",
    keep_step_number="",  # a rewrite's steps have its transaction's id, above every watch
    insert_step='INSERT INTO history (run_id, idx, event, source, target, at, "values", '
                "kind) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
    delete_states="DELETE FROM run_states WHERE run_id = %s",
    delete_state="DELETE FROM run_states WHERE run_id = %s AND state = %s",
    insert_state="INSERT INTO run_states (run_id, spec, state, trace_context) VALUES "
                 "(%s, %s, %s, %s)",
    state_context="UPDATE run_states SET trace_context = %s WHERE run_id = %s AND state = %s",
    key_seen='SELECT event, "values", call FROM idempotency WHERE run_id = %s AND key = %s',
    insert_key="INSERT INTO idempotency (run_id, key, event, \"values\", revision, call, at) "
               "VALUES (%s, %s, %s, %s, %s, %s, %s)",
    due="SELECT run_id FROM runs WHERE spec = %s AND spec_version <= %s "
        "AND next_due IS NOT NULL AND next_due <= %s ORDER BY next_due LIMIT %s",
    other_versions="SELECT r.run_id, r.spec_version, s.state FROM runs r LEFT JOIN "
                   "run_states s ON s.run_id = r.run_id WHERE r.spec = %s AND "
                   "r.spec_version < %s UNION ALL SELECT run_id, spec_version, NULL FROM runs "
                   "WHERE spec = %s AND spec_version > %s",
    # Delivered at commit, once per transaction and payload: a worker asleep until a
    # later deadline wakes for an earlier one (statechart_runtime.worker).
    announce_due="SELECT pg_notify(%s, %s)",
    announce_step=f"SELECT pg_notify('{STEP_CHANNEL}', %s)",
    # Read in a snapshot of its own: below the oldest transaction still running, every step
    # is committed or never will be; a step of a younger transaction waits until it is.
    watch_end="SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, '', -1",
    watch_steps='SELECT h.tx, h.run_id, h.idx, h.event, h.source, h.target, h.at, h."values", '
                "h.kind FROM history h JOIN runs r ON r.run_id = h.run_id WHERE r.spec = %s "
                "AND (h.tx, h.run_id, h.idx) > (%s, %s, %s) "
                "AND h.tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint "
                "ORDER BY h.tx, h.run_id, h.idx LIMIT %s",
    # Work items (store/core/work.py).
    insert_item="INSERT INTO work_items (item_key, run_id, spec, state, handler, attempts, "
                "failures, token, ready_at, created_at, trace_context) VALUES (%s, %s, %s, %s, "
                "%s, 0, 0, 0, %s, %s, %s) ON CONFLICT (item_key) DO NOTHING",
    end_items="UPDATE work_items SET ended_at = %s, ended_by = %s, ready_at = NULL, "
              "owner = NULL, lease_until = NULL WHERE run_id = %s AND state = %s "
              "AND ended_at IS NULL",
    end_attempts_of_state="UPDATE work_attempts SET ended_at = %s, result = %s WHERE item_key IN "
                          "(SELECT item_key FROM work_items WHERE run_id = %s AND state = %s) "
                          "AND ended_at IS NULL",
    item_locked="SELECT token, owner, lease_until, ended_at, ended_by, state, failures, "
                "attempts FROM work_items WHERE item_key = %s FOR UPDATE",
    claim_item="UPDATE work_items SET attempts = %s, failures = %s, token = %s, owner = %s, "
               "ready_at = %s, lease_until = %s WHERE item_key = %s",
    insert_attempt="INSERT INTO work_attempts (item_key, attempt, owner, claimed_at) "
                   "VALUES (%s, %s, %s, %s)",
    end_attempt="UPDATE work_attempts SET ended_at = %s, result = %s, error = %s "
                "WHERE item_key = %s AND attempt = %s AND ended_at IS NULL",
    extend_lease="UPDATE work_items SET ready_at = %s, lease_until = %s WHERE item_key = %s",
    retry_item="UPDATE work_items SET failures = %s, owner = NULL, lease_until = NULL, "
               "ready_at = %s, last_error = %s WHERE item_key = %s",
    end_item="UPDATE work_items SET ended_at = %s, ended_by = %s, ready_at = NULL, "
             "owner = NULL, lease_until = NULL, failures = %s, last_error = %s WHERE item_key = %s "
             "AND ended_at IS NULL",
    release_item="UPDATE work_items SET owner = NULL, lease_until = NULL, ready_at = %s "
                 "WHERE item_key = %s",
    items_of_run="SELECT item_key, run_id, state, handler, attempts, failures, owner, "
                 "ready_at, lease_until, last_error, created_at, ended_at, ended_by "
                 "FROM work_items WHERE run_id = %s ORDER BY created_at, item_key",
    attempts_of_run="SELECT a.item_key, a.attempt, a.owner, a.claimed_at, a.ended_at, "
                    "a.result, a.error FROM work_attempts a JOIN work_items w ON "
                    "w.item_key = a.item_key WHERE w.run_id = %s ORDER BY a.item_key, "
                    "a.attempt",
    work_counts="SELECT handler, CASE WHEN owner IS NULL THEN 'pending' ELSE 'claimed' "
                "END, COUNT(*) FROM work_items WHERE spec = %s AND ended_at IS NULL "
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
    )""",
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
    )""",
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
    )"""),
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
    # 5: the position of each step in commit order, for `watch`: the id of the transaction
    # that wrote it (a transaction id below every running one's is of a finished one, so
    # what is below the oldest running transaction is all there is below it). Steps
    # stored before are numbered by their time below 0: before every later one.
    ("ALTER TABLE history ADD COLUMN tx BIGINT NOT NULL DEFAULT 0",
     "UPDATE history h SET tx = n.pos FROM (SELECT run_id, idx, ROW_NUMBER() OVER (ORDER BY "
     "at, run_id, idx) - COUNT(*) OVER () - 1 AS pos FROM history) n "
     "WHERE n.run_id = h.run_id AND n.idx = h.idx",
     "ALTER TABLE history ALTER COLUMN tx SET DEFAULT pg_current_xact_id()::text::bigint",
     "CREATE INDEX history_by_tx ON history (tx, run_id, idx)"),
    # 6: what a listener keeps with a run when it is created (a tracing listener's W3C trace
    # context: statechart_runtime.otel), read back for its later steps.
    ("ALTER TABLE runs ADD COLUMN trace_context TEXT",),
    # 7: the trace context of the step that entered a state (its timer's arming) and of the
    # one that enqueued a work item: what a timer fired or an item claimed later, in any
    # process, links to.
    ("ALTER TABLE run_states ADD COLUMN trace_context TEXT",
     "ALTER TABLE work_items ADD COLUMN trace_context TEXT"),
]


def open_url(url: str, *, timeout: float, read_only: bool) -> PostgresStore:
    """The synchronous store of `url` (opened: tables created or upgraded)."""
    from statechart_runtime.store.postgres._sync import PostgresStore

    return PostgresStore(url, timeout=timeout, read_only=read_only)


async def open_async_url(url: str, *, timeout: float, read_only: bool,
                         pool_size: int | None, pool_timeout: float | None
                         ) -> AsyncPostgresStore:
    """The asynchronous store of `url`, its pool opened (tables created or upgraded)."""
    from statechart_runtime.store.postgres._async import AsyncPostgresStore

    store = AsyncPostgresStore(url, timeout=timeout, read_only=read_only,
                               pool_size=pool_size or DEFAULT_POOL, pool_timeout=pool_timeout)
    await store.open()
    return store


def failure(exc: BaseException, db: Any = None) -> str | None:
    """What a psycopg error (met on connection `db`) means (`AsyncRunStore._failure`)."""
    if isinstance(exc, psycopg.errors.TransactionRollback):  # deadlock, serialization
        return "busy"
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return "busy"
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError) and (
            db is None or db.closed or db.broken or isinstance(exc, _SERVER_GONE)):
        return "disconnected"  # the server went away or is restarting
    if isinstance(exc, psycopg.errors.UniqueViolation):
        return "duplicate"
    if isinstance(exc, psycopg.errors.DiskFull | psycopg.errors.OutOfMemory):
        return "full"
    # A NUL character (refused by psycopg itself), a character the server's encoding
    # has not, an index row over its size limit (a very long run id).
    if isinstance(exc, psycopg.DataError | psycopg.errors.ProgramLimitExceeded):
        return "unstorable"
    return None


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(a URL that does not parse)"
    host = info.get("host", "")
    port = info.get("port", "")
    return f"postgresql://{info.get('user', '')}@{host}{':' if port else ''}{port}/" \
           f"{info.get('dbname', '')}"


def __getattr__(name: str) -> Any:
    # The drivers, imported when first named (the asynchronous one needs psycopg_pool).
    if name == "PostgresStore":
        from statechart_runtime.store.postgres._sync import PostgresStore
        return PostgresStore
    if name == "AsyncPostgresStore":
        from statechart_runtime.store.postgres._async import AsyncPostgresStore
        return AsyncPostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
