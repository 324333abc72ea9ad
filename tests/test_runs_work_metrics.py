"""`statechart runs work --metrics [HOST:]PORT` (docs/observability.md): a real worker
process serves its runs' Prometheus metrics on a port of its own; scraped here over HTTP and
parsed by prometheus-client's own parser: what it counted (transitions, fire latency, work
claims and ends, timer lateness) and what it read from the store at the scrape (runs by
status, the work queue, overdue timers)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store_support import GATE, Clock, job_class, job_text
from test_metrics import samples

from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]
Found = dict[tuple[str, frozenset[tuple[str, str]]], float]


@contextmanager
def worker(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """`statechart runs work ARGS --metrics 0` running; the URL of its metrics."""
    process = subprocess.Popen(
        [sys.executable, "-m", "statechart", "runs", "work", *args, "--metrics", "0",
         "--max-sleep", "0.2"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        said = process.stderr.readline()
        assert " at http://127.0.0.1:" in said, said + process.stderr.read()
        yield said.rsplit(" at ", 1)[1].strip()
    finally:
        process.send_signal(signal.SIGTERM)
        _, rest = process.communicate(timeout=60)
    assert process.returncode == 0, rest
    assert "Traceback" not in rest, rest


def scrape(url: str) -> Found:
    with urllib.request.urlopen(url, timeout=30) as page:
        assert page.headers["Content-Type"].startswith("text/plain")
        return samples(page.read())


def scraped_until(url: str, done: Callable[[Found], bool]) -> Found:
    deadline = time.monotonic() + 60
    while True:
        found = scrape(url)
        if done(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def at(found: Found, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def test_the_worker_serves_the_metrics_of_the_timers_it_fires(tmp_path: Path) -> None:
    spec = tmp_path / "gate.yaml"
    spec.write_text(GATE)
    from codegen_support import checked_text, generate
    from store_support import import_path

    checked = checked_text(GATE)
    assert checked is not None
    (tmp_path / "gate_metrics.py").write_bytes(generate(checked)["generated/gate.py"])
    gate = import_path(tmp_path / "gate_metrics.py", "gate_metrics").Gate
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    # Created two minutes ago: the 30 s timers are 90 s overdue.
    past = Clock(dt.datetime.now(dt.UTC) - dt.timedelta(minutes=2))
    with open_store(url, clock=past) as store:
        store.create(gate(run_id="g1", clock=past))
        store.create(gate(run_id="g2", clock=past))
    with worker("--store", url, "--spec", str(spec)) as metrics:
        # The gauge is read at the scrape, the counters told after each commit: both.
        found = scraped_until(metrics, lambda found: at(
            found, "statechart_runs", spec="gate", status="expired") == 2 and at(
            found, "statechart_fire_duration_seconds_count", spec="gate", via="fire_due",
            outcome="taken") == 2)
    assert at(found, "statechart_runs", spec="gate", status="expired") == 2
    assert at(found, "statechart_timers_overdue", spec="gate") == 0
    assert at(found, "statechart_transitions_total", spec="gate",
              event="after.delay1.waiting", source="waiting", target="expired") == 2
    assert at(found, "statechart_fire_duration_seconds_count", spec="gate", via="fire_due",
              outcome="taken") == 2
    late = at(found, "statechart_timer_lateness_seconds_sum", spec="gate", state="waiting")
    assert 2 * 90 <= late < 2 * 150
    assert ("statechart_work_queue", frozenset()) not in found


def test_the_worker_serves_the_metrics_of_its_work_items(tmp_path: Path) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text(job_text())
    release = tmp_path / "release"
    (tmp_path / "held_handlers.py").write_text(textwrap.dedent(f"""\
        import asyncio, pathlib
        from statechart_runtime.handlers import Outcome

        async def do_it(work):
            while not pathlib.Path({str(release)!r}).exists():
                await asyncio.sleep(0.02)
            return Outcome("done", output={{"key": work.key}})

        HANDLERS = {{"do_it": do_it}}
        """))
    job: Any = job_class(tmp_path)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        for number in range(3):
            store.create(job(run_id=f"r{number}"))
            store.fire(job, f"r{number}", "start")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}"
           f"{os.environ.get('PYTHONPATH', '')}"}
    with worker("--store", url, "--spec", str(spec), "--handlers", "held_handlers:HANDLERS",
                "--concurrency", "2", "--poll", "0.05", env=env) as metrics:
        # Two items held by their handlers, the third waiting for a free slot.
        held = scraped_until(metrics, lambda found: at(
            found, "statechart_work_queue", spec="job", handler="do_it",
            status="claimed") == 2)
        release.touch()
        done = scraped_until(metrics, lambda found: at(
            found, "statechart_runs", spec="job", status="finished") == 3 and at(
            found, "statechart_work_ends_total", spec="job", handler="do_it",
            result="completed") == 3)
    assert at(held, "statechart_work_queue", spec="job", handler="do_it",
              status="claimed") == 2
    assert at(held, "statechart_work_queue", spec="job", handler="do_it",
              status="pending") == 1
    assert at(held, "statechart_work_claims_total", spec="job", handler="do_it",
              expired="false") == 2
    assert at(done, "statechart_work_claims_total", spec="job", handler="do_it",
              expired="false") == 3
    assert at(done, "statechart_work_ends_total", spec="job", handler="do_it",
              result="completed") == 3
    assert at(done, "statechart_transitions_total", spec="job", event="done",
              source="working", target="finished") == 3
    assert at(done, "statechart_work_queue", spec="job", handler="do_it",
              status="claimed") == 0
    assert at(done, "statechart_runs", spec="job", status="finished") == 3


def test_a_port_it_cannot_serve_on_is_said(tmp_path: Path) -> None:
    spec = tmp_path / "gate.yaml"
    spec.write_text(GATE)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url):
        pass
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "statechart", "runs", "work", "--store", url, "--spec",
             str(spec), "--once", "--metrics", f"127.0.0.1:{port}"],
            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"--metrics 127.0.0.1:{port}: cannot serve there" in done.stderr
    assert "Traceback" not in done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "statechart", "runs", "work", "--store", url, "--spec",
         str(spec), "--metrics", "localhost:http"], cwd=ROOT, capture_output=True,
        text=True, timeout=120)
    assert bad.returncode == 2
    assert "expected [HOST:]PORT" in bad.stderr


