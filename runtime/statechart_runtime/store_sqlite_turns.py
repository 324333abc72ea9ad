"""How the writers of one SQLite store wait for each other: in the kernel, on a lock file
beside the database (`runs.db-lock`, empty), not by trying SQLite's write lock again and
again.

SQLite has no queue for its write lock: a writer that finds it taken can only sleep and
try again. With a few writers the sleeps are guesses, too long (the lock was free most of
the time: throughput drops) or too short (they spin, and on a busy machine keep the writer
holding the lock from running), and a writer that keeps losing the race waits for hundreds
of milliseconds. Here a writer first takes its turn, an exclusive `flock` on the lock file:
a waiting writer sleeps until the holder gives the turn back, then wakes at once, and
`BEGIN IMMEDIATE` finds the write lock free. The turn is only that: SQLite's own lock still
guards the data, so a writer that does not take turns (the `sqlite3` shell, another
program) is still kept out, and only makes the others wait as it would have anyway.

`flock` cannot time out, so a writer that has to wait does so in a thread it can give up
on: after `timeout` seconds the call is refused as busy, and the thread gives the turn back
the moment it gets it. A platform without `flock` (Windows), a file system that refuses it
or a lock file that cannot be made: writers only try SQLite's lock, as before.
"""

from __future__ import annotations

import os
import threading

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock
    fcntl = None  # type: ignore[assignment]

SUFFIX = "-lock"


class WriterTurns:
    """The turns of one store object's writes (one open file description, so two store
    objects of one process take turns too)."""

    def __init__(self, database: str) -> None:
        self.path = database + SUFFIX
        self._fd: int | None = None
        self._usable = fcntl is not None
        self._held = False

    def take(self, timeout: float) -> bool:
        """Wait for this writer's turn, up to `timeout` seconds. False when the wait timed
        out; True when the turn is held, or when there are no turns here (the caller then
        only tries SQLite's lock)."""
        fd = self._file()
        if fd is None:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._held = True
            return True
        except BlockingIOError:
            pass
        except OSError:  # a file system without flock: no turns from now on
            self._usable = False
            return True
        waiter = _Waiter(fd)
        threading.Thread(target=waiter.wait, name="sqlite-writer-turn", daemon=True).start()
        if waiter.taken(timeout):
            self._held = True
            return True
        self._fd = None  # the waiter has the file now; the next call opens it again
        return False

    def give_back(self) -> None:
        if self._held and self._fd is not None:
            self._held = False
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # gives the turn back too
            self._fd = None
            self._held = False

    def _file(self) -> int | None:
        if self._fd is None and self._usable:
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError:  # a folder we may not write: the store's own files will say so
                self._usable = False
        return self._fd


class _Waiter:
    """A blocking flock in a thread of its own: `taken(timeout)` waits for it. When the
    caller gave up first, the waiter closes the file as soon as it gets the lock (closing
    gives it back), so a given-up wait never keeps the turn."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.done = threading.Event()
        self.guard = threading.Lock()
        self.got = False
        self.abandoned = False

    def wait(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError:
            pass  # no turn: the caller tries SQLite's lock alone
        with self.guard:
            if self.abandoned:
                os.close(self.fd)
                return
            self.got = True
        self.done.set()

    def taken(self, timeout: float) -> bool:
        self.done.wait(timeout)
        with self.guard:
            if not self.got:
                self.abandoned = True
            return self.got
