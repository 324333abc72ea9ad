"""A throwaway PostgreSQL server for the tests, the benchmark and `.ci/run`.

    python tests/pg_server.py start DIR   # prints `export STATECHART_TEST_POSTGRES_URL=...`
                                          # (fsync off: a server for tests)
    python tests/pg_server.py stop DIR

The server's data, log and unix socket live in DIR (a new temporary folder); it listens on
127.0.0.1 on a free port, trusts local connections, and is run as the `postgres` user when
this runs as root (the server refuses to run as root). `initdb` and `pg_ctl` must be on PATH
or in a PostgreSQL `bin` folder under /usr/lib/postgresql.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

# The variable the store tests read: a PostgreSQL URL of a server they may create schemas in.
URL_VARIABLE = "STATECHART_TEST_POSTGRES_URL"


def tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def available() -> str | None:
    """Why a server cannot be started here, or None when it can."""
    for name in ("initdb", "pg_ctl"):
        if tool(name) is None:
            return f"`{name}` is not installed"
    if os.geteuid() == 0:
        try:
            import pwd
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` user to run the server as"
    return None


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A server in `folder` (its data in folder/data); `url` connects to its `postgres`
    database as the `postgres` superuser."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    @classmethod
    def start(cls, folder: Path | None = None, *, fsync: bool = True) -> Server:
        reason = available()
        if reason is not None:
            raise RuntimeError(f"cannot start a PostgreSQL server: {reason}")
        folder = Path(folder or tempfile.mkdtemp(prefix="statechart-pg-"))
        folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        folder.chmod(0o700)
        initdb = tool("initdb")
        assert initdb is not None
        _run([initdb, "-D", str(folder / "data"), "-U", "postgres", "-A", "trust",
              "-E", "UTF8", "--no-sync"])
        options = [f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={folder}",
                   "-c max_connections=100", "-c fsync=" + ("on" if fsync else "off")]
        (folder / "options").write_text(" ".join(options), encoding="utf-8")
        server = cls(folder, _free_port())
        server.pg_ctl("start", "-w", "-t", "60", "-l", str(folder / "log"),
                      "-o", f"-p {server.port} " + " ".join(options))
        (folder / "port").write_text(str(server.port), encoding="utf-8")
        return server

    @classmethod
    def of(cls, folder: Path) -> Server:
        return cls(folder, int((folder / "port").read_text(encoding="utf-8")))

    def pg_ctl(self, *args: str) -> None:
        pg_ctl = tool("pg_ctl")
        assert pg_ctl is not None
        _run([pg_ctl, "-D", str(self.folder / "data"), *args])

    def restart(self) -> None:
        """A fast restart: open connections are cut, transactions in flight roll back."""
        options = (self.folder / "options").read_text(encoding="utf-8")
        self.pg_ctl("restart", "-m", "fast", "-w", "-t", "60", "-l", str(self.folder / "log"),
                    "-o", f"-p {self.port} {options}")

    def stop(self) -> None:
        try:
            self.pg_ctl("stop", "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _run(argv: list[str]) -> None:
    done = subprocess.run(_as_server_user(argv), capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n"
                           f"{done.stdout}{done.stderr}")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[1])
    if argv[0] == "start":
        try:
            server = Server.start(folder, fsync=False)  # for tests: no power cut to survive
        except RuntimeError as exc:
            print(f"pg_server: {exc}", file=sys.stderr)
            return 1
        print(f"export {URL_VARIABLE}={server.url}")
    else:
        Server.of(folder).stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
