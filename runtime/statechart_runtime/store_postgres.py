"""The PostgreSQL run store (`open_store("postgresql://...")`): the API and logic of
`statechart_runtime.store.RunStore`, on psycopg 3 (the runtime's `postgres` extra).

What differs from SQLite, and only that, is here: `fire` locks the run's row
(`SELECT ... FOR UPDATE`) where SQLite locks the whole database, so workers firing at
different runs do not wait for each other; `fire_next_due` claims a due run with
`FOR UPDATE SKIP LOCKED`, so workers never wait for, nor fire twice, a run another one holds;
reads see one snapshot (REPEATABLE READ); a lost connection (a server restarted, a network
cut) is reopened and the transaction retried. The tables live in the connection's current
schema (the first of its `search_path`): several stores can share one database in schemas of
their own (`postgresql://host/db?options=-csearch_path%3Dmy_schema`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import psycopg.errors

from statechart_runtime.store import RunStore
from statechart_runtime.values import Clock

# The server is shutting down, starting up or crashed: the connection is lost or unusable.
_SERVER_GONE = (psycopg.errors.AdminShutdown, psycopg.errors.CrashShutdown,
                psycopg.errors.CannotConnectNow)
# The channel `_announce_due` notifies, with the spec's name (statechart_runtime.worker).
DUE_CHANNEL = "statechart_due"
# The key of the advisory lock that makes two stores creating the tables take turns.
_SCHEMA_LOCK = 0x5C_5708E


class PostgresStore(RunStore):
    lock_run = " FOR UPDATE"
    claim = " FOR UPDATE OF runs SKIP LOCKED"
    begin_read = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    integrity_error = psycopg.errors.UniqueViolation

    def __init__(self, url: str, *, timeout: float = 30.0, max_attempts: int = 5,
                 clock: Clock | None = None) -> None:
        self.url = url
        super().__init__(_redacted(url), timeout=timeout, max_attempts=max_attempts,
                         clock=clock)

    def _connect(self) -> None:
        # Autocommit: every transaction is begun and ended by the store, explicitly.
        self._db = psycopg.connect(self.url, autocommit=True,
                                   connect_timeout=max(2, int(self.timeout)))

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        # Pipeline mode: statements are sent without waiting for their results until one is
        # read, so BEGIN travels with the first SELECT, and the writes with the COMMIT: a
        # `fire` takes three round trips, not ten, and holds the run's row that much less.
        with self._db.pipeline(), super()._transaction(begin):
            yield

    def _sql(self, sql: str) -> str:
        return _placeholders(sql)

    def _failure(self, exc: BaseException) -> str | None:
        if isinstance(exc, psycopg.errors.TransactionRollback):  # deadlock, serialization
            return "busy"
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return "busy"
        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError) and (
                self._db is None or self._db.closed or self._db.broken
                or isinstance(exc, _SERVER_GONE)):
            return "disconnected"  # the server went away or is restarting
        return None

    def _lock_schema(self) -> None:
        self._x("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    def _announce_due(self, spec: str) -> None:
        # Delivered at commit, once per transaction and payload; `statechart_runtime.worker`
        # listens, so a worker asleep until a later deadline wakes for an earlier one.
        self._x("SELECT pg_notify(?, ?)", (DUE_CHANNEL, spec))

    def _schema_statements(self) -> list[str]:
        return [s.replace(") WITHOUT ROWID", ")") for s in super()._schema_statements()]


@functools.lru_cache(maxsize=256)
def _placeholders(sql: str) -> str:
    return sql.replace("?", "%s")  # the store's SQL has no other question mark


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
