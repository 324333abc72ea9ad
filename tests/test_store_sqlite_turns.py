"""SQLite writers take turns on a lock file beside the database (`WriterTurns`): a waiting
writer sleeps in the kernel and starts as soon as the one before it commits. The turn only
orders writers; SQLite's write lock still guards the data. A turn that does not come within
`timeout` is given up (one more try of SQLite's lock, then the busy error), a lock file that
cannot be made means no turns, and a read-only store never makes one."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest

from statechart_runtime.errors import StoreError
from statechart_runtime.store import open_store
from statechart_runtime.store_sqlite_turns import SUFFIX


def stored(ticket: ModuleType, store: object) -> str:
    run = ticket.Ticket()
    store.create(run)  # type: ignore[attr-defined]
    return str(run.record.runId)


def fire(ticket: ModuleType, store: object, run_id: str, n: int) -> bool:
    """The n-th event of a run going round open -> approved -> open."""
    event = ("approve", "reopen")[n % 2]
    return bool(store.fire(ticket.Ticket, run_id, event, note=f"{event} {n}").applied)  # type: ignore[attr-defined]


def held_turn(path: Path) -> int:
    """The turn of the store at `path`, taken as another writer would take it."""
    fd = os.open(f"{path}{SUFFIX}", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def turn_waiters() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "sqlite-writer-turn"]


def test_a_writer_waits_for_the_turn_and_goes_on_when_it_is_given_back(
        ticket: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = open_store(path)
    run_id = stored(ticket, store)
    assert Path(f"{path}{SUFFIX}").exists()  # made by the first write
    fd = held_turn(path)
    threading.Timer(0.3, os.close, (fd,)).start()  # the other writer commits in 0.3 s
    started = time.monotonic()
    applied = fire(ticket, store, run_id, 0)
    assert time.monotonic() - started >= 0.25  # it waited for its turn ...
    assert applied  # ... and then wrote
    time.sleep(0.05)
    assert turn_waiters() == []  # the thread that waited has ended
    assert fire(ticket, store, run_id, 1)  # the turn was given back after the commit
    assert [step.event for step in store.history(run_id)] == ["approve", "reopen"]
    store.close()


def test_a_turn_that_does_not_come_is_given_up_and_sqlite_s_lock_tried(
        ticket: ModuleType, tmp_path: Path) -> None:
    """Someone holds the turn but not SQLite's lock (a stuck process, say): after `timeout`
    the writer tries SQLite's lock once and, finding it free, writes. The thread that waited
    gives the turn back the moment it gets it."""
    path = tmp_path / "runs.db"
    store = open_store(path, timeout=0.3)
    run_id = stored(ticket, store)
    fd = held_turn(path)
    started = time.monotonic()
    assert fire(ticket, store, run_id, 0)
    assert time.monotonic() - started >= 0.3
    assert len(turn_waiters()) == 1  # still waiting for the turn it gave up on
    os.close(fd)
    time.sleep(0.1)
    assert turn_waiters() == []
    other = held_turn(path)  # ... and it did not keep the turn
    os.close(other)
    assert fire(ticket, store, run_id, 1)  # the store goes on
    store.close()


def test_a_turn_and_sqlite_s_lock_both_held_is_the_busy_error_and_the_store_goes_on(
        ticket: ModuleType, tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "runs.db"
    store = open_store(path, timeout=0.2)
    store.max_attempts = 1
    run_id = stored(ticket, store)
    fd = held_turn(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError, match=r"stayed busy.*nothing was stored"):
        fire(ticket, store, run_id, 0)
    writer.execute("ROLLBACK")
    writer.close()
    os.close(fd)
    time.sleep(0.1)
    assert fire(ticket, store, run_id, 0)
    assert len(store.history(run_id)) == 1  # nothing twice
    store.close()


def test_no_lock_file_can_be_made_so_writers_only_try_sqlite_s_lock(
        ticket: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    Path(f"{path}{SUFFIX}").mkdir()  # in the way: the file cannot be opened
    store = open_store(path)
    run_id = stored(ticket, store)
    assert fire(ticket, store, run_id, 0)
    store.close()


def test_a_read_only_store_makes_no_lock_file(ticket: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with open_store(path) as store:
        stored(ticket, store)
    Path(f"{path}{SUFFIX}").unlink()
    with open_store(path, read_only=True) as reader:
        assert len(reader.stored_runs()) == 1
    assert not Path(f"{path}{SUFFIX}").exists()


def test_two_stores_of_one_process_take_turns(ticket: ModuleType, tmp_path: Path) -> None:
    """Each store object has its own turn (its own open file): threads of one process, a
    store each, write in turn and lose nothing."""
    path = tmp_path / "runs.db"
    with open_store(path) as store:
        ids = [stored(ticket, store) for _ in range(4)]

    def fire_all(run_id: str) -> None:
        with open_store(path) as mine:
            for n in range(20):
                fire(ticket, mine, run_id, n)

    threads = [threading.Thread(target=fire_all, args=(run_id,)) for run_id in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with open_store(path) as store:
        assert [len(store.history(run_id)) for run_id in ids] == [20] * 4
