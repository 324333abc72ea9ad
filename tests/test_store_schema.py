"""The run store's own schema, on every backend of the registry: built by the backend's
MIGRATIONS, upgraded by a new step in one transaction (or not at all), refused when newer,
a damaged version row named as such (by `open_store` and by `statechart runs list`, in one
line); and read-only stores (`open_store(..., read_only=True)`, the CLI's views), which
never write, never create a table and never wait for a writer's lock."""

from __future__ import annotations

import importlib
import os
import sqlite3
import time
from pathlib import Path
from types import ModuleType

import pytest
from store_support import GATE, TICKET, Backend, assert_usable

import statechart_runtime.store.core.schema as schema_module
from statechart.cli import main
from statechart_runtime.errors import ReadOnlyStore, SchemaProblem, StoreError
from statechart_runtime.store import BACKENDS, SCHEMA_VERSION, open_store


def _rows(backend: Backend, sql: str) -> list[tuple[object, ...]]:
    """The rows of a query on the store's database, through a connection of the test's."""
    if backend.name == "sqlite":
        with sqlite3.connect(backend.url.removeprefix("sqlite:///")) as db:
            return db.execute(sql).fetchall()
    import psycopg
    with psycopg.connect(backend.url, autocommit=True) as db:
        return db.execute(sql).fetchall()


def _version(backend: Backend) -> list[tuple[object, ...]]:
    return _rows(backend, "SELECT value FROM store_meta WHERE key = 'schema_version'")


def test_every_backend_builds_the_schema_from_its_own_migrations(backend: Backend) -> None:
    for module_name, _, _ in BACKENDS.values():
        module = importlib.import_module(module_name)
        assert len(module.MIGRATIONS) == SCHEMA_VERSION + 1, module_name  # position = version
        assert module.SQL.head.startswith("SELECT "), module_name
    open_store(backend.url).close()
    assert _version(backend) == [(str(SCHEMA_VERSION),)]
    open_store(backend.url).close()  # a store of this version opens unchanged
    assert _version(backend) == [(str(SCHEMA_VERSION),)]


@pytest.mark.sync_only("patches the synchronous driver class's migrations")
def test_a_new_schema_step_is_applied_once_in_one_transaction(
        ticket: ModuleType, backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(backend.url)
    store.create(run := ticket.Ticket())
    store.close()
    backend_class = type(store)
    steps = list(backend_class.migrations)
    # Version 3: a table of notes, filled from the stored runs.
    monkeypatch.setattr(schema_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setattr(backend_class, "migrations", [*steps, (
        "CREATE TABLE run_notes (run_id TEXT NOT NULL, note TEXT NOT NULL)",
        "INSERT INTO run_notes SELECT run_id, status FROM runs")])
    upgraded = open_store(backend.url)
    assert _version(backend) == [(str(SCHEMA_VERSION + 1),)]
    assert _rows(backend, "SELECT run_id, note FROM run_notes") == [(run.record.runId, "open")]
    assert upgraded.fire(ticket.Ticket, run.record.runId, "approve", note="ok").revision == 2
    assert_usable(upgraded, ticket)
    open_store(backend.url).close()  # applied once: the table is not filled again
    assert len(_rows(backend, "SELECT run_id FROM run_notes")) == 1
    # Version 4 fails at its second statement: nothing of it stays, the version is still 3.
    monkeypatch.setattr(schema_module, "SCHEMA_VERSION", SCHEMA_VERSION + 2)
    monkeypatch.setattr(backend_class, "migrations", [*backend_class.migrations, (
        "CREATE TABLE more_notes (x TEXT)", "INSERT INTO no_such_table VALUES (1)")])
    with pytest.raises(SchemaProblem, match=f"from version {SCHEMA_VERSION + 1} to "
                                            f"{SCHEMA_VERSION + 2} failed"):
        open_store(backend.url)
    assert _version(backend) == [(str(SCHEMA_VERSION + 1),)]
    tables = ("SELECT name FROM sqlite_master WHERE name = 'more_notes'"
              if backend.name == "sqlite" else "SELECT to_regclass('more_notes')::text")
    assert _rows(backend, tables) in ([], [(None,)])


def test_a_damaged_version_row_says_how_to_repair_it(ticket: ModuleType,
                                                    backend: Backend) -> None:
    open_store(backend.url).close()
    backend.execute("UPDATE store_meta SET value = 'two' WHERE key = 'schema_version'")
    with pytest.raises(SchemaProblem, match="holds 'two', not a version number") as caught:
        open_store(backend.url)
    backend.execute(str(caught.value).split("set it back: ")[1].split(" if the")[0])
    assert_usable(open_store(backend.url), ticket)
    backend.execute("DELETE FROM store_meta WHERE key = 'schema_version'")
    with pytest.raises(SchemaProblem, match="schema_version row is missing") as caught:
        open_store(backend.url)
    backend.execute(str(caught.value).split("put it back: ")[1].split(" if the")[0])
    assert_usable(open_store(backend.url), ticket)
    backend.execute("DROP TABLE store_meta")  # the version table itself
    with pytest.raises(SchemaProblem, match="schema_version row is missing") as caught:
        open_store(backend.url)
    for statement in str(caught.value).split("put it back: ")[1].split(" if the")[0].split(
            "; then "):
        backend.execute(statement)
    assert_usable(open_store(backend.url), ticket)


def test_runs_list_on_a_damaged_store_says_so_in_one_line(
        capsys: pytest.CaptureFixture[str], ticket: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    open_store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE store_meta SET value = 'garbled' WHERE key = 'schema_version'")
    code = main(["runs", "list", "--store", str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "not a version number" in err, err


# -- read-only stores -------------------------------------------------------------------------

def test_a_read_only_store_reads_and_refuses_every_change(ticket: ModuleType,
                                                         backend: Backend) -> None:
    writer = open_store(backend.url)
    writer.create(run := ticket.Ticket())
    writer.fire(ticket.Ticket, run.record.runId, "approve", note="ok")
    reader = open_store(backend.url, read_only=True)
    assert reader.load(ticket.Ticket, run.record.runId).record.note == "ok"
    assert [r.run_id for r in reader.stored_runs()] == [run.record.runId]
    assert reader.find(ticket.Ticket, status="approved") == [run.record.runId]
    for change in (lambda: reader.create(ticket.Ticket()),
                   lambda: reader.fire(ticket.Ticket, run.record.runId, "close"),
                   lambda: reader.fire_next_due(ticket.Ticket),
                   lambda: reader.save(reader.load(ticket.Ticket, run.record.runId))):
        with pytest.raises(ReadOnlyStore, match="read_only=False"):
            change()
    assert [r.event for r in reader.history(run.record.runId)] == ["approve"]


@pytest.mark.sync_only("patches the synchronous driver class's migrations")
def test_a_read_only_store_creates_and_upgrades_nothing(ticket: ModuleType, backend: Backend,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    if backend.name == "sqlite":
        empty = tmp_path / "empty.db"
        sqlite3.connect(empty).close()
        with pytest.raises(StoreError, match="is not a run store"):
            open_store(empty, read_only=True)
        assert sqlite3.connect(empty).execute("SELECT * FROM sqlite_master").fetchall() == []
    else:
        with pytest.raises(StoreError, match="is not a run store"):
            open_store(backend.url, read_only=True)
        assert _rows(backend, "SELECT to_regclass('store_meta')::text") == [(None,)]
    store = open_store(backend.url)
    store.close()
    # A runtime whose schema is one version newer would upgrade the store: not read-only.
    monkeypatch.setattr(schema_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setattr(type(store), "migrations",
                        [*type(store).migrations, ("CREATE TABLE x (y TEXT)",)])
    with pytest.raises(ReadOnlyStore, match="open it once writable"):
        open_store(backend.url, read_only=True)
    assert _version(backend) == [(str(SCHEMA_VERSION),)]


def _read_only_store(ticket: ModuleType, tmp_path: Path) -> tuple[Path, str]:
    folder = tmp_path / "backup"
    folder.mkdir()
    path = folder / "runs.db"
    with open_store(path) as store:
        store.create(run := ticket.Ticket())
        store.fire(ticket.Ticket, run.record.runId, "deny", note="no")
    return path, run.record.runId


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_file_or_folder_is_read(capsys: pytest.CaptureFixture[str],
                                           ticket: ModuleType, tmp_path: Path,
                                           what: str) -> None:
    """A backup, a replica, a read-only mount: `open_store(read_only=True)` and the CLI read
    it and change nothing in it. (In a folder it cannot write, with no -wal file, the store
    opens the file `immutable`; as root, chmod stops nothing and it opens it `mode=ro`.)"""
    path, run_id = _read_only_store(ticket, tmp_path)
    before = path.read_bytes()
    locked = path if what == "file" else path.parent
    mode = locked.stat().st_mode
    locked.chmod(0o555 if what == "folder" else 0o444)
    try:
        store = open_store(path, read_only=True)
        if what == "folder" and not os.access(path.parent, os.W_OK):
            assert "immutable=1" in _uri_of(store)  # no -shm file could be made
        assert store.load(ticket.Ticket, run_id).record.note == "no"
        store.close()
        code = main(["runs", "list", "--store", str(path)])
        out, err = capsys.readouterr()
        assert (code, err) == (0, "") and run_id in out
        spec = tmp_path / "ticket.yaml"
        spec.write_text(TICKET)
        code = main(["runs", "show", run_id, "--store", str(path), "--spec", str(spec)])
        out, err = capsys.readouterr()
        assert (code, err) == (0, "") and "denied" in out
        code = main(["runs", "verify", "--store", str(path), "--spec", str(spec)])
        out, err = capsys.readouterr()
        assert code == 0, (out, err)
    finally:
        locked.chmod(mode)
    assert path.read_bytes() == before


def test_a_live_store_in_a_read_only_folder_is_read_whole(
        capsys: pytest.CaptureFixture[str], ticket: ModuleType, tmp_path: Path) -> None:
    """A writer keeps the store open (its last commits are in the -wal file, not yet in the
    database file); an operator reads it through a read-only folder: every run is there."""
    path, _ = _read_only_store(ticket, tmp_path)
    writer = open_store(path)
    writer._db.execute("PRAGMA wal_autocheckpoint = 0")  # type: ignore[attr-defined]
    ids = []
    for _ in range(3):
        writer.create(run := ticket.Ticket())
        ids.append(run.record.runId)
    assert Path(f"{path}-wal").stat().st_size > 0
    mode = path.parent.stat().st_mode
    path.parent.chmod(0o555)
    try:
        code = main(["runs", "list", "--store", str(path)])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), err
        assert all(run_id in out for run_id in ids), out
        with open_store(path, read_only=True) as reader:
            assert len(reader.stored_runs()) == 4
    finally:
        path.parent.chmod(mode)
        writer.close()


def test_unread_changes_in_a_read_only_folder_are_refused_not_hidden(
        capsys: pytest.CaptureFixture[str], ticket: ModuleType, tmp_path: Path) -> None:
    """A store copied with its -wal file (changes not yet in the database file) but no -shm
    file, into a folder that cannot be written: SQLite cannot read the -wal file there, and
    an immutable read would hide its runs. It is refused, saying what to do (as root, SQLite
    makes the -shm file whatever the mode bits say, and reads it whole)."""
    source, _ = _read_only_store(ticket, tmp_path)
    writer = open_store(source)
    writer._db.execute("PRAGMA wal_autocheckpoint = 0")  # type: ignore[attr-defined]
    writer.create(run := ticket.Ticket())
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in ("", "-wal"):
        (copy / f"runs.db{suffix}").write_bytes(Path(f"{source}{suffix}").read_bytes())
    writer.close()
    path = copy / "runs.db"
    copy.chmod(0o555)
    try:
        code = main(["runs", "list", "--store", str(path)])
        out, err = capsys.readouterr()
        if os.access(copy, os.W_OK):  # root
            assert (code, err) == (0, "") and run.record.runId in out
        else:
            assert code != 0 and out == "" and "read a copy" in err and err.count("\n") == 1
            with pytest.raises(ReadOnlyStore, match="-wal file holds changes"):
                open_store(path, read_only=True)
    finally:
        copy.chmod(0o755)


def _uri_of(store: object) -> str:
    """The URI a SQLite store opened its file with (`PRAGMA database_list` gives the path
    only): the store keeps it as the connection's own record."""
    uri: str = store._uri  # type: ignore[attr-defined]
    return uri


def test_runs_list_does_not_wait_for_a_writers_lock(capsys: pytest.CaptureFixture[str],
                                                   ticket: ModuleType, tmp_path: Path) -> None:
    """A writer holds the write lock (BEGIN IMMEDIATE, as `fire` does) for as long as it
    likes: `runs list` and a read-only store still answer at once from the last commit."""
    path, run_id = _read_only_store(ticket, tmp_path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE runs SET status = 'closed'")  # not committed: not seen
    try:
        started = time.monotonic()
        code = main(["runs", "list", "--store", str(path)])
        out, err = capsys.readouterr()
        elapsed = time.monotonic() - started
        assert (code, err) == (0, "") and run_id in out and "closed" not in out
        assert elapsed < 2.5, elapsed  # the writer's lock is never waited for
        reader = open_store(path, read_only=True, timeout=60)
        assert reader.stored_runs()[0].status == "denied"
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert os.path.exists(path)


def test_runs_work_upgrades_a_store_the_read_only_actions_cannot_read(
        capsys: pytest.CaptureFixture[str], ticket: ModuleType, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A store one schema version behind the runtime: `runs list` cannot read it and says
    which command upgrades it (no Python argument); `runs work`, the writable action, opens
    it writable and so upgrades it."""
    path, run_id = _read_only_store(ticket, tmp_path)
    with open_store(path, read_only=True) as probe:
        backend_class = type(probe)
    monkeypatch.setattr(schema_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setattr(backend_class, "migrations",
                        [*backend_class.migrations, ("CREATE TABLE x (y TEXT)",)])
    code = main(["runs", "list", "--store", str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "`statechart runs work --store URL --spec SPEC --once`" in err
    assert "read_only" not in err
    spec = tmp_path / "gate.yaml"
    spec.write_text(GATE)
    code = main(["runs", "work", "--store", str(path), "--spec", str(spec), "--once"])
    out, err = capsys.readouterr()
    assert code == 0, err
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM store_meta").fetchall() == [
            (str(SCHEMA_VERSION + 1),)]
    code = main(["runs", "list", "--store", str(path)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "") and run_id in out
