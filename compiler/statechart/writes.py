"""Writing a build's files: one build at a time, all files or none, errors as messages.

- One at a time: a build holds an exclusive `flock` on the project's root folder while it
  writes (`locked`); `build --check` holds a shared one while it reads, so it never compares a
  half-written set. A second build waits for the first (the caller is told, to say so), and
  only then removes temp files left by a killed build: before this, the start of one build
  deleted the temp files of another, whose rename then failed.
- All or none: every file is first written to a temp file next to it (same file system),
  flushed and fsynced; only when all of them are written are they renamed over their targets.
  A full disk, a read-only file system or a file where a folder should be fails in the first
  phase, which leaves every output as it was: never docs of the new spec next to code of the
  old one. A rename fails only in rare cases (a folder where the file should be); the files
  renamed before it stay new, and the message says to build again.
- Errors: an `OSError` becomes a `WriteError` naming the path and what to do, for the CLI to
  print; never a traceback.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from statechart_runtime.errors import StatechartError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock: builds there do not take turns
    fcntl = None  # type: ignore[assignment]

TMP_SUFFIX = ".statechart-tmp"


class WriteError(StatechartError):
    """A file of the build could not be written or removed; the message says what to do."""


def _hint(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "free some disk space (or raise the quota or file size limit) and build again"
    if exc.errno == errno.EROFS:
        return "the file system is read-only: build in a writable copy"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "check the permissions of the folder and build again"
    if exc.errno in (errno.EEXIST, errno.ENOTDIR):
        return "a file is where a folder is needed: move it away and build again"
    if exc.errno == errno.EISDIR:
        return "a folder is where a file is needed: move it away and build again"
    return "fix the cause and build again"


def error(root: Path, what: str, exc: OSError) -> WriteError:
    """`exc`, as a message naming the path concerned (relative to `root` when inside it)."""
    where = Path(exc.filename) if exc.filename else None
    if where is not None and where.is_absolute() and where.is_relative_to(root):
        where = where.relative_to(root)
    at = f" ({where.as_posix()})" if where is not None else ""
    return WriteError(f"{what}{at}: {exc.strerror or exc}; {_hint(exc)}")


@contextmanager
def locked(root: Path, *, exclusive: bool, on_wait: Callable[[], None] | None) -> Iterator[None]:
    """Hold a lock on the folder `root` (exclusive to write, shared to read); `on_wait` is
    called before waiting for another build that holds it. The lock goes with the process:
    a build that is killed never leaves it behind."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(root, os.O_RDONLY)
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, mode)
        except OSError as exc:
            # A file system without flock (some network mounts): build unlocked, as before.
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.EBADF):
                raise
        yield
    finally:
        os.close(fd)


def remove_leftover_temps(root: Path, folders: tuple[str, ...]) -> None:
    """Temp files of a build that was killed before its rename (never a target file). Only
    under the exclusive lock: a running build's temp files are not leftovers."""
    for folder in folders:
        base = root / folder
        if base.is_dir():
            for tmp in base.rglob(f".*{TMP_SUFFIX}"):
                tmp.unlink(missing_ok=True)


def _write_temp(path: Path, data: bytes) -> str:
    """`data` in a new temp file next to `path`, flushed to disk; its name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp creates 0600; generated files are shared
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:  # already gone, or the folder went read-only: nothing more to do
        pass


def _fsync_folder(folder: Path) -> None:
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:  # platforms without directory handles
        return
    try:
        os.fsync(dir_fd)
    except OSError:  # some file systems refuse fsync on a folder; the renames are done
        pass
    finally:
        os.close(dir_fd)


def write_all(root: Path, files: dict[str, bytes]) -> None:
    """Replace each `root / rel` by its bytes: all temp files first, then the renames (see
    the module's docstring). Raises WriteError, with every temp file removed."""
    temps: list[tuple[str, Path]] = []
    try:
        for rel, data in files.items():
            try:
                temps.append((_write_temp(root / rel, data), root / rel))
            except OSError as exc:
                raise error(root, f"cannot write {rel}", exc) from None
        for done, (tmp, path) in enumerate(temps):
            try:
                os.replace(tmp, path)  # replaces a symlink itself, never writes through it
            except OSError as exc:
                changed = "no output was changed" if done == 0 else \
                    f"{done} output(s) before it were replaced"
                raise error(root, f"cannot replace {path.relative_to(root).as_posix()} "
                                  f"({changed})", exc) from None
    except BaseException:
        for tmp, _ in temps:
            if os.path.lexists(tmp):
                _unlink(tmp)
        raise
    for folder in dict.fromkeys(path.parent for _, path in temps):
        _fsync_folder(folder)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace one file so that a reader (or a kill) sees the old or the new file, never a
    part. Raises WriteError."""
    write_all(path.parent, {path.name: data})
