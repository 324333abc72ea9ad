"""The SQLite run store (`open_store("sqlite:///runs.db")`, or a plain path): the API and logic
of `statechart_runtime.store.RunStore`, on the standard library's `sqlite3`.

Its SQL is here, whole: the statements (`SQL`), and the store's schema as migrations
(`MIGRATIONS`). Every write transaction takes the database's write lock at once
(BEGIN IMMEDIATE): writers take turns, readers never wait (WAL). A read-only store opens
the file with `mode=ro` (`immutable=1` only in a read-only folder with no -wal file to read,
where SQLite cannot make its -shm file): it never writes nor waits for a writer's lock.
"""

from __future__ import annotations

import random
import sqlite3
import time
from contextlib import suppress
from pathlib import Path
from urllib.parse import quote

from statechart_runtime.errors import ReadOnlyStore, StoreError
from statechart_runtime.store import RunStore, Statements

# SQLite result codes (https://sqlite.org/rescode.html): sqlite3 gives them on its errors.
_BUSY, _LOCKED, _READONLY, _CORRUPT, _CANTOPEN, _FULL, _TOOBIG, _NOTADB = (
    5, 6, 8, 11, 14, 13, 18, 26)
_CONSTRAINT_PRIMARYKEY, _CONSTRAINT_UNIQUE = 1555, 2067
# How long a writer sleeps between two tries of the write lock, in seconds (a random time
# between the two: about the time another writer's commit holds it).
_WAIT_MIN, _WAIT_MAX = 0.0005, 0.002

SQL = Statements(
    param="?",
    begin_write="BEGIN IMMEDIATE",  # the write lock at once: no deadlock upgrading a read
    begin_read="BEGIN",
    lock_schema="",  # BEGIN IMMEDIATE already keeps other writers out
    table_count="SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
    read_version="SELECT value FROM store_meta WHERE key = 'schema_version'",
    write_version="INSERT INTO store_meta VALUES ('schema_version', ?) "
                  "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    run_exists="SELECT 1 FROM runs WHERE run_id = ?",
    insert_run="INSERT INTO runs VALUES (?, ?, ?, 0, ?, 0, '', NULL, ?, ?)",
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
    revision_locked="SELECT revision FROM runs WHERE run_id = ?",
    update_head="UPDATE runs SET revision = ?, spec_version = ?, status = ?, steps = ?, "
                "record = ?, next_due = ?, updated_at = ? WHERE run_id = ?",
    update_head_if="UPDATE runs SET revision = ?, spec_version = ?, status = ?, steps = ?, "
                   "record = ?, next_due = ?, updated_at = ? WHERE run_id = ? "
                   "AND revision = ?",
    steps='SELECT event, source, target, at, "values", kind FROM history WHERE run_id = ? '
          "ORDER BY idx",
    delete_steps="DELETE FROM history WHERE run_id = ?",
    insert_step='INSERT INTO history (run_id, idx, event, source, target, at, "values", '
                "kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    delete_states="DELETE FROM run_states WHERE run_id = ?",
    delete_state="DELETE FROM run_states WHERE run_id = ? AND state = ?",
    insert_state="INSERT INTO run_states VALUES (?, ?, ?)",
    key_seen='SELECT event, "values", call FROM idempotency WHERE run_id = ? AND key = ?',
    insert_key="INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?, ?)",
    not_in="{column} NOT IN (SELECT value FROM json_each(?))",
    claim_due="SELECT run_id FROM runs WHERE spec = ? AND spec_version <= ? "
              "AND next_due IS NOT NULL AND next_due <= ?{skip} ORDER BY next_due LIMIT {limit}",
    due="SELECT run_id FROM runs WHERE spec = ? AND spec_version <= ? "
        "AND next_due IS NOT NULL AND next_due <= ? ORDER BY next_due LIMIT ?",
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
]


def open_url(url: str, *, timeout: float, read_only: bool) -> SqliteStore:
    """The store of `sqlite:///relative.db`, `sqlite:////absolute.db` or a plain path."""
    path = url
    if "://" in url:
        rest = url.partition("://")[2]
        if not rest.startswith("/") or rest == "/":
            raise StoreError(f"bad store URL {url!r}: expected sqlite:///PATH")
        path = rest[1:]
    if not path or path == ":memory:":
        raise StoreError("a store needs a database file (an in-memory database is private "
                         "to one connection)")
    return SqliteStore(path, timeout=timeout, read_only=read_only)


class SqliteStore(RunStore):
    """Runs in a SQLite file (WAL, `synchronous=FULL`). Every write transaction takes the
    database's write lock at once (BEGIN IMMEDIATE): writers take turns, readers never wait."""

    sql = SQL
    migrations = MIGRATIONS
    driver_errors = (sqlite3.Error,)
    optimistic_fire = True

    def __init__(self, path: str | Path, *, timeout: float = 30.0, max_attempts: int = 5,
                 read_only: bool = False) -> None:
        self.path = str(path)
        self._uri = self.path  # a read-only store opens a URI: file:PATH?mode=ro...
        super().__init__(self.path, timeout=timeout, max_attempts=max_attempts,
                         read_only=read_only)

    def _connect(self) -> None:
        if self.read_only:
            self._connect_read_only()
            return
        # Autocommit mode: every transaction is begun and ended here, explicitly. Any thread
        # may use the store (one at a time, as PostgreSQL's), not only the one that opened it.
        self._db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                   check_same_thread=False)
        self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise StoreError(f"{self.path}: could not switch the database to WAL mode "
                             f"(it is in {mode} mode)")
        # FULL: a commit that returned survives a power cut, not only a crash of the process.
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA foreign_keys = ON")
        # From here on a writer waits for the write lock in `_begin`, not in SQLite's busy
        # handler: that one sleeps 1, 2, 5, 10, ... up to 100 ms between tries, so under a
        # few writers one of them waited for hundreds of milliseconds while the lock was
        # free most of the time (a commit holds it for about a millisecond).
        self._db.execute("PRAGMA busy_timeout = 0")

    def _begin(self, begin: str) -> None:
        """BEGIN IMMEDIATE, tried again after a short, random sleep (so that waiting
        writers do not wake together) while another writer holds the lock, for up to
        `timeout` seconds; then the busy error (`_with_retries` counts an attempt). (Not
        shorter sleeps for writers that waited longer: on a busy machine, writers that
        spin keep the one holding the lock from running.)"""
        if begin != SQL.begin_write or self.read_only:
            self._db.execute(begin)
            return
        started = 0.0
        while True:
            try:
                self._db.execute(begin)
                return
            except sqlite3.OperationalError as exc:
                if self._failure(exc) != "busy":
                    raise
                now = time.monotonic()
                if not started:
                    started = now
                elif now - started >= self.timeout:
                    raise
            time.sleep(random.uniform(_WAIT_MIN, _WAIT_MAX))

    def _connect_read_only(self) -> None:
        path = Path(self.path)
        if not path.is_file():
            raise StoreError(f"{self.path}: no such store file")
        # Plain `mode=ro` sees a live store whole: its -wal file too. It needs the -shm file
        # beside the database, so it fails in a folder we cannot write that has none. Only
        # then is the file opened `immutable` (no lock, no -shm), and only when nothing is in
        # a -wal file: immutable reads ignore it, and would miss the changes it holds.
        self._uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        try:
            self._open_uri()
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in (_READONLY, _CANTOPEN):
                return  # not a database, damaged: the first read says so, as for any store
            wal = Path(f"{path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise ReadOnlyStore(
                    f"{self.path}: cannot be read as it is: its -wal file holds changes "
                    "not yet in the database file, and SQLite cannot make the -shm file it "
                    "needs to read them (the folder is read-only to us): give this user "
                    "write access to the folder, or read a copy of the store (`sqlite3 "
                    f"{self.path} .backup COPY` by its owner)") from None
            self._uri += "&immutable=1"
            self._open_uri()

    def _open_uri(self) -> None:
        with suppress(Exception):
            self._db.close()
        self._db = sqlite3.connect(self._uri, uri=True, timeout=self.timeout,
                                   isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file

    def _failure(self, exc: BaseException) -> str | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        code = getattr(exc, "sqlite_errorcode", None)
        primary = None if code is None else code & 0xFF  # extended codes keep it low
        if primary in (_BUSY, _LOCKED) or (
                code is None and ("locked" in str(exc) or "busy" in str(exc))):
            return "busy"
        if primary == _FULL:
            return "full"
        if primary == _TOOBIG:
            return "unstorable"
        if primary in (_CORRUPT, _NOTADB):
            return "damaged"
        if code in (_CONSTRAINT_PRIMARYKEY, _CONSTRAINT_UNIQUE):
            return "duplicate"
        return None
