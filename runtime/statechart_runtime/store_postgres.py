"""The PostgreSQL run store (`open_store("postgresql://...")`): the API and logic of
`statechart_runtime.store.RunStore`, on psycopg 3 (the runtime's `postgres` extra).

Its SQL is here, whole: the statements (`SQL`) and the store's schema as migrations
(`MIGRATIONS`). What differs from SQLite: `fire` locks the run's row
(`SELECT ... FOR UPDATE`) where SQLite locks the whole database, so workers firing at
different runs do not wait for each other; `fire_next_due` claims a due run with
`FOR UPDATE SKIP LOCKED`, so workers never wait for, nor fire twice, a run another one holds;
reads see one snapshot (REPEATABLE READ); a lost connection (a server restarted, a network
cut) is reopened and the transaction retried. The tables live in the connection's current
schema (the first of its `search_path`): several stores can share one database in schemas of
their own (`postgresql://host/db?options=-csearch_path%3Dmy_schema`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import psycopg
import psycopg.errors

from statechart_runtime.store import RunStore, Statements

# The server is shutting down, starting up or crashed: the connection is lost or unusable.
_SERVER_GONE = (psycopg.errors.AdminShutdown, psycopg.errors.CrashShutdown,
                psycopg.errors.CannotConnectNow)
# The channel `_announce_due` notifies, with the spec's name (statechart_runtime.worker).
DUE_CHANNEL = "statechart_due"
# The key of the advisory lock that makes two stores creating the tables take turns.
_SCHEMA_LOCK = 0x5C_5708E

_HEAD = ("SELECT spec, spec_version, revision, steps, record, status FROM runs "
         "WHERE run_id = %s")
SQL = Statements(
    param="%s",
    begin_write="BEGIN",
    begin_read="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    lock_schema=f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})",
    table_count="SELECT count(*) FROM pg_catalog.pg_tables "
                "WHERE schemaname = current_schema() AND tablename = %s",
    read_version="SELECT value FROM store_meta WHERE key = 'schema_version'",
    write_version="INSERT INTO store_meta VALUES ('schema_version', %s) "
                  "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    run_exists="SELECT 1 FROM runs WHERE run_id = %s",
    insert_run="INSERT INTO runs VALUES (%s, %s, %s, 0, %s, 0, '', NULL, %s, %s)",
    head=_HEAD,
    head_locked=_HEAD + " FOR UPDATE",  # the run's row, until the transaction ends
    head_checks="SELECT s.states, h.idx, h.target, h.at FROM (SELECT string_agg(state, ' ') "
                "AS states FROM run_states WHERE run_id = %s) s LEFT JOIN (SELECT idx, "
                "target, at FROM history WHERE run_id = %s ORDER BY idx DESC LIMIT 1) h ON 1 = 1",
    head_checked="",  # fire holds the run's row from its read to its write
    revision_locked="SELECT revision FROM runs WHERE run_id = %s FOR UPDATE",
    update_head_if="",  # revision_locked, then update_head
    update_head="UPDATE runs SET revision = %s, spec_version = %s, status = %s, steps = %s, "
                "record = %s, next_due = %s, updated_at = %s WHERE run_id = %s",
    steps='SELECT event, source, target, at, "values", kind FROM history WHERE run_id = %s '
          "ORDER BY idx",
    delete_steps="DELETE FROM history WHERE run_id = %s",
    insert_step='INSERT INTO history (run_id, idx, event, source, target, at, "values", '
                "kind) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
    delete_states="DELETE FROM run_states WHERE run_id = %s",
    delete_state="DELETE FROM run_states WHERE run_id = %s AND state = %s",
    insert_state="INSERT INTO run_states VALUES (%s, %s, %s)",
    key_seen='SELECT event, "values", call FROM idempotency WHERE run_id = %s AND key = %s',
    insert_key="INSERT INTO idempotency VALUES (%s, %s, %s, %s, %s, %s, %s)",
    not_in="{column} <> ALL(%s)",  # a Python list: a text[] parameter
    # Runs other workers hold are skipped, not waited for: workers share the due runs.
    claim_due="SELECT run_id FROM runs WHERE spec = %s AND spec_version <= %s "
              "AND next_due IS NOT NULL AND next_due <= %s{skip} ORDER BY next_due LIMIT 1"
              " FOR UPDATE OF runs SKIP LOCKED",
    due="SELECT run_id FROM runs WHERE spec = %s AND spec_version <= %s "
        "AND next_due IS NOT NULL AND next_due <= %s ORDER BY next_due LIMIT %s",
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
]


def open_url(url: str, *, timeout: float, read_only: bool) -> PostgresStore:
    return PostgresStore(url, timeout=timeout, read_only=read_only)


class PostgresStore(RunStore):
    sql = SQL
    migrations = MIGRATIONS
    driver_errors = (psycopg.Error,)

    def __init__(self, url: str, *, timeout: float = 30.0, max_attempts: int = 5,
                 read_only: bool = False) -> None:
        self.url = url
        super().__init__(_redacted(url), timeout=timeout, max_attempts=max_attempts,
                         read_only=read_only)

    def _connect(self) -> None:
        self._db = self.new_connection()

    def new_connection(self) -> psycopg.Connection[Any]:
        """A new connection to the store's database, opened as the store opens its own:
        autocommit (every transaction is begun and ended explicitly), `timeout` for
        connecting, read-only when the store is (the worker LISTENs on one of these)."""
        conn = psycopg.connect(self.url, autocommit=True,
                               connect_timeout=max(2, int(self.timeout)))
        if self.read_only:  # the server refuses any write of this session
            conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        return conn

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        # Pipeline mode: statements are sent without waiting for their results until one is
        # read, so BEGIN travels with the first SELECT, and the writes with the COMMIT: a
        # `fire` takes three round trips, not ten, and holds the run's row that much less.
        # An error of a pipelined statement surfaces at a later one (a create's duplicate
        # key at the UPDATE after its INSERT), in an aborted pipeline: `_abandon` gets the
        # connection out of it whatever was sent.
        if not begin:  # one statement, in a transaction of its own (autocommit)
            yield
            return
        committed = False
        try:
            with self._db.pipeline() as pipeline:
                try:
                    self._db.execute(begin)
                    yield
                    self._committing = True  # a failure from here may come after the commit
                    self._db.execute("COMMIT")
                    pipeline.sync()  # the COMMIT's outcome, here rather than at the block's end
                    committed = True
                    self._committing = False
                except BaseException:
                    self._abandon()
                    raise
        except psycopg.Error:
            if not committed:
                raise
            # The server confirmed the COMMIT, then the connection was lost before the
            # pipeline was left ("cannot exit pipeline mode while busy": a restart right
            # after the commit). The call succeeded; the next one reconnects.
            with suppress(Exception):
                self._db.close()

    def _abandon(self) -> None:
        """End a failed transaction so that the next call starts clean: psycopg's rollback
        leaves an aborted pipeline, rolls back, and forgets the statements it meant to
        prepare (an aborted pipeline never prepared them). A connection that cannot even do
        that is closed: the next call reconnects."""
        if self._db.closed or self._db.broken:
            return
        try:
            self._db.rollback()
        except Exception:
            with suppress(Exception):
                self._db.close()

    def _not_in_args(self, values: Sequence[Any]) -> list[Any]:
        return [list(values)] if values else []

    def _announce_due(self, spec: str) -> None:
        # Delivered at commit, once per transaction and payload; `statechart_runtime.worker`
        # listens, so a worker asleep until a later deadline wakes for an earlier one.
        self._x("SELECT pg_notify(%s, %s)", (DUE_CHANNEL, spec))

    def _failure(self, exc: BaseException) -> str | None:
        if isinstance(exc, psycopg.errors.TransactionRollback):  # deadlock, serialization
            return "busy"
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return "busy"
        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError) and (
                self._db is None or self._db.closed or self._db.broken
                or isinstance(exc, _SERVER_GONE)):
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


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(a URL that does not parse)"
    host = info.get("host", "")
    port = info.get("port", "")
    return f"postgresql://{info.get('user', '')}@{host}{':' if port else ''}{port}/" \
           f"{info.get('dbname', '')}"
