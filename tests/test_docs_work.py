"""docs/work.md's fake agent, run as the page says: its `fake_agent.py` and `drive.py` blocks
written out, `drive.py` started, a worker (`statechart runs work --handlers`) beside it,
stopped mid-run (SIGTERM) and started again. What `drive.py` prints is the page's `output`
block, and the payment API saw each key once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "work.md"


def blocks() -> dict[str, str]:
    """The page's fenced blocks with a name after their language (```python drive.py)."""
    found = re.findall(r"^```\w+ (\S+)\n(.*?)^```$", PAGE.read_text(), re.S | re.M)
    return dict(found)


def _worker(url: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "statechart", "runs", "work", "--store", url, "--spec",
         "specs/agent_run.yaml", "--handlers", "fake_agent:HANDLERS", "--poll", "0.05",
         "--shutdown-grace", "5"],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("stop", [signal.SIGTERM])
def test_the_fake_agent_runs_as_documented(tmp_path: Path, stop: int) -> None:
    code = blocks()
    (tmp_path / "fake_agent.py").write_text(code["fake_agent.py"])
    (tmp_path / "drive.py").write_text(code["drive.py"])
    url = f"sqlite:///{tmp_path}/runs.db"
    calls = tmp_path / "tool_calls.log"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
           "TOOL_CALLS": str(calls)}
    drive = subprocess.Popen([sys.executable, str(tmp_path / "drive.py"), url], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "runs.db").exists():
        assert drive.poll() is None, drive.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    worker = _worker(url, env)
    try:
        # Its first line comes once SIGTERM stops it gracefully (a loaded machine may take
        # longer than the sleep below to get there).
        assert worker.stderr is not None
        started = worker.stderr.readline()
        assert started.startswith("statechart runs work: running"), started
        time.sleep(1.5)  # mid-run: the searches failed, the retries wait their backoff
        worker.send_signal(stop)
        _, said = worker.communicate(timeout=60)
        assert worker.returncode == 0, said
        worker = _worker(url, env)
        out, err = drive.communicate(timeout=120)
    finally:
        worker.send_signal(signal.SIGTERM)
        _, said = worker.communicate(timeout=60)
        drive.kill()
    assert drive.returncode == 0, err
    assert out == code["output"], out
    seen = Counter(calls.read_text().split("\n")[:-1])
    assert sorted(seen.values()) == [1] * 5, seen  # 3 searches and 2 refunds, each once
    with open_store(url) as store:
        for run_id in ("run-1", "run-2", "run-3"):
            for item in store.work_items(run_id):
                assert item.status == "ended", item
