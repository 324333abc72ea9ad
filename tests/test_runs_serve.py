"""`statechart runs serve`: it serves the console over a store with the spec's diagram and
the authentication asked for, says so on stderr, and refuses (exit 2) to bind beyond
loopback without authentication, a store that does not exist, and users it cannot read."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from console_support import seed

from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
STATECHART = [sys.executable, "-m", "statechart"]


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


LISTENER = """\
import sys


def told(observation):
    name = type(observation).__name__
    if name == "Answered":
        print(f"{name} {observation.run_id} {observation.event} by {observation.who}",
              file=sys.stderr, flush=True)
"""


def test_it_serves_the_console_with_basic_auth(tmp_path: Path) -> None:
    with open_store(tmp_path / "runs.db") as store:
        seed(store)
    port = _port()
    (tmp_path / "serve_listener.py").write_text(LISTENER)
    env = {**os.environ, "STATECHART_CONSOLE_USERS": "alice:wonderland",
           "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    server = subprocess.Popen(
        [*STATECHART, "runs", "serve", "--store", str(tmp_path / "runs.db"), "--spec",
         str(ROOT / "specs" / "agent_run.yaml"), "--port", str(port), "--metrics",
         "--listener", "serve_listener:told"],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        said = server.stderr.readline()
        assert f"http://127.0.0.1:{port} over {tmp_path / 'runs.db'} for agent_run" in said
        assert "HTTP basic authentication" in said
        deadline = time.monotonic() + 30
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as web:
            while True:
                try:
                    assert web.get("/api/runs").status_code == 401
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "the console did not start"
                    time.sleep(0.1)
            page = web.get("/runs/approve-soon", auth=("alice", "wonderland"))
            assert page.status_code == 200
            assert 'stroke="#d6336c"' in page.text  # the compiler's diagram, highlighted
            assert web.get("/metrics").status_code == 401
            scraped = web.get("/metrics", auth=("alice", "wonderland"))
            assert 'statechart_runs{' in scraped.text and 'status="waiting"' in scraped.text
            answered = web.post("/api/runs/approve-soon/events/approve",
                                json={"approvedBy": "ops"}, auth=("alice", "wonderland"))
            assert answered.status_code == 200, answered.text
            ready, _, _ = select.select([server.stderr], [], [], 20)  # never hang here
            assert ready, "the listener said nothing"
            assert server.stderr.readline().strip() == "Answered approve-soon approve by alice"
    finally:
        server.terminate()
        server.wait(10)
        if server.stderr is not None:
            server.stderr.close()


def test_without_authentication_only_loopback_names_are_served(tmp_path: Path) -> None:
    # A page on another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own
    # name as the Host header: the console without authentication refuses it.
    with open_store(tmp_path / "runs.db") as store:
        seed(store)
    port = _port()
    env = {k: v for k, v in os.environ.items() if k != "STATECHART_CONSOLE_USERS"}
    server = subprocess.Popen(
        [*STATECHART, "runs", "serve", "--store", str(tmp_path / "runs.db"), "--spec",
         str(ROOT / "specs" / "agent_run.yaml"), "--port", str(port)],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        assert "no authentication: loopback clients only" in server.stderr.readline()
        deadline = time.monotonic() + 30
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as web:
            while True:
                try:
                    assert web.get("/api/runs").status_code == 200
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "the console did not start"
                    time.sleep(0.1)
            assert web.get("/api/runs", headers={"Host": f"localhost:{port}"}).status_code == 200
            refused = web.get("/api/runs", headers={"Host": f"rebind.example:{port}"})
            assert refused.status_code == 400
            assert "approve-soon" not in refused.text
    finally:
        server.terminate()
        server.wait(10)
        if server.stderr is not None:
            server.stderr.close()


@pytest.mark.parametrize(("args", "env", "said"), [
    (["--host", "0.0.0.0"], {}, "without authentication the console binds to loopback only"),
    (["--auth", "basic"], {"STATECHART_CONSOLE_USERS": "alice"},
     "expected NAME:PASSWORD items"),
    (["--port", "70000"], {}, "--port 70000: expected 1 to 65535"),
    (["--listener", "no_such_module_x:L"], {}, "cannot import 'no_such_module_x'"),
])
def test_usage_errors(tmp_path: Path, args: list[str], env: dict[str, str], said: str) -> None:
    with open_store(tmp_path / "runs.db"):
        pass
    done = subprocess.run(
        [*STATECHART, "runs", "serve", "--store", str(tmp_path / "runs.db"), "--spec",
         str(ROOT / "specs" / "agent_run.yaml"), *args], cwd=ROOT, capture_output=True,
        text=True, env={**{k: v for k, v in os.environ.items()
                           if k != "STATECHART_CONSOLE_USERS"}, **env}, timeout=60)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr


def test_a_store_that_does_not_exist(tmp_path: Path) -> None:
    done = subprocess.run(
        [*STATECHART, "runs", "serve", "--store", str(tmp_path / "nope.db"), "--spec",
         str(ROOT / "specs" / "agent_run.yaml")], cwd=ROOT, capture_output=True, text=True,
        timeout=60)
    assert done.returncode == 2
    assert "no such store" in done.stderr
    assert not (tmp_path / "nope.db").exists()
