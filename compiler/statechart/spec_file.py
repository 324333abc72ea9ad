"""Read a spec file's bytes, refusing what is not a spec file before anything is read.

Every command reads specs (and the bases they `extends`) through `read_spec`, and so does
`check` when it shows a snippet, so the same file is never refused once and read the next time.
What it refuses, and why:
- anything but a regular file (a FIFO would block the reader forever, a device never ends):
  the file is opened without blocking and checked on the open handle, so it cannot be swapped
  between the check and the read;
- a symlink (or a path through a symlinked folder) whose target is outside the spec's specs
  folder: a spec committed as `specs/ENV.yaml -> /proc/self/environ` would otherwise put the
  CI's environment into the snippet of a finding. `extends` keeps to the same folder;
- a file over `yaml_source.MAX_BYTES`: its size is taken before reading, and at most one byte
  more than the limit is ever read (files under /proc report a size of 0).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from statechart.yaml_source import MAX_BYTES, TOO_LARGE_HINT, too_large
from statechart_runtime.errors import StatechartError

_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


class SpecFileError(StatechartError):
    """A spec file that is not read: `message` says why, `hint` what to do."""

    def __init__(self, path: str, message: str, hint: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
        self.hint = hint


def specs_root(path: Path) -> Path:
    """The specs folder of `path`: the nearest folder named `specs` holding it, else the folder
    holding it. Found from where the file is named, not where a symlink points: a link must
    not bring its own target's folder as the limit it is checked against."""
    folder = path.absolute().parent.resolve()
    for parent in (folder, *folder.parents):
        if parent.name == "specs":
            return parent
    return folder


def read_spec(path: str | os.PathLike[str], root: Path | None = None) -> bytes:
    """The bytes of the spec at `path`, whose real path must be inside `root` (default: its
    specs folder). Raises SpecFileError for a refused file, OSError when it cannot be read."""
    given = Path(path)
    limit = specs_root(given) if root is None else root
    real = given.resolve()
    if not real.is_relative_to(limit):
        raise SpecFileError(
            str(path), f"file is a symlink to {real}, outside the specs folder {limit}; not read",
            "copy the spec into the folder, or link to a file inside it")
    # O_NONBLOCK: opening a FIFO for reading would wait for a writer; regular files ignore it.
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise SpecFileError(str(path), f"file is {kind}, not a regular file; not read",
                                "a spec must be a regular file")
        if info.st_size > MAX_BYTES:
            raise SpecFileError(str(path), too_large(info.st_size), TOO_LARGE_HINT)
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:  # grew since, or a file that reports no size
        raise SpecFileError(str(path), too_large(None), TOO_LARGE_HINT)
    return raw
