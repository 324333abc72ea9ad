"""The timer worker (`statechart_runtime.worker.Worker`) against the loop every team wrote
before it, in the same run, on SQLite and PostgreSQL.

    python bench/bench_worker.py [--timers 400] [--workers 1 2 4] [--backends sqlite postgres]

Each case stores `--timers` agent runs waiting for an approval whose deadline has passed,
then fires every timer and reports timers fired per second:

- **loop**: the documented loop, `while store.fire_next_due(AgentRun) is not None`, in one
  process (the baseline: what the worker replaces);
- **worker xN**: N processes each running `Worker.run_once()` over the same store (each
  timer fired exactly once is checked).

SQLite files are in a temporary folder (WAL, synchronous=FULL). PostgreSQL is the server
named by $STATECHART_TEST_POSTGRES_URL, else a throwaway server (tests/pg_server.py, fsync
on). Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from pg_server import URL_VARIABLE, Server  # noqa: E402
from store_support import import_path  # noqa: E402

from statechart_runtime.store import open_store  # noqa: E402
from statechart_runtime.worker import Worker  # noqa: E402

PAST = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)


def agent_run() -> Any:
    return import_path(ROOT / "generated" / "agent_run.py", "agent_run")


def fill(url: str, count: int) -> None:
    """`count` runs waiting for an approval that was due in 2020."""
    ar = agent_run()
    with open_store(url) as store:
        for _ in range(count):
            run = ar.AgentRun(clock=lambda: PAST)
            run.triage()
            run.start()
            run.interrupt(interruptReason=ar.AgentRunInterruptReason.approval)
            run.await_approval(approvalId="a", approvalDeadline=PAST + dt.timedelta(hours=1))
            store.create(run)


def loop(url: str, start: Any) -> tuple[int, float]:
    ar = agent_run()
    with open_store(url) as store:
        start.wait()
        began = time.perf_counter()
        fired = 0
        while store.fire_next_due(ar.AgentRun) is not None:
            fired += 1
        return fired, time.perf_counter() - began


def work(url: str, start: Any) -> tuple[int, float]:
    ar = agent_run()
    with open_store(url) as store, Worker(store, ar.AgentRun, listen=False) as worker:
        start.wait()
        began = time.perf_counter()
        worker.run_once()
        return worker.fired, time.perf_counter() - began


def case(url: str, target: Any, processes: int, timers: int) -> float:
    """Timers fired per second by `processes` processes running `target` from one start."""
    fill(url, timers)
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        start = manager.Event()
        with context.Pool(processes) as pool:
            pending = pool.starmap_async(target, [(url, start)] * processes)
            time.sleep(1.0 + 0.5 * processes)  # every process imported and connected
            start.set()
            results = pending.get(600)
    fired = sum(n for n, _ in results)
    if fired != timers:
        raise SystemExit(f"{target.__name__} x{processes}: fired {fired} of {timers} timers")
    return timers / max(seconds for _, seconds in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timers", type=int, default=400)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    args = parser.parse_args()
    server = None
    base = os.environ.get(URL_VARIABLE)
    if "postgres" in args.backends and not base:
        server = Server.start()
        base = server.url
    folder = Path(tempfile.mkdtemp())
    print("| backend | loop (timers/s) | " + " | ".join(
        f"worker x{n} (timers/s)" for n in args.workers) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in args.workers) + " |")
    try:
        for backend in args.backends:
            def url(name: str, backend: str = backend) -> str:
                if backend == "sqlite":
                    return f"sqlite:///{folder}/{name}.db"
                import psycopg

                schema = f"bench_{name}_{uuid.uuid4().hex[:8]}"
                with psycopg.connect(base, autocommit=True) as db:
                    db.execute(f"CREATE SCHEMA {schema}")
                return f"{base}?options=-csearch_path%3D{schema}"

            baseline = case(url("loop"), loop, 1, args.timers)
            rates = [case(url(f"work{n}"), work, n, args.timers) for n in args.workers]
            print(f"| {backend} | {baseline:,.0f} | " + " | ".join(
                f"{rate:,.0f} ({rate / baseline:.2f}x)" for rate in rates) + " |")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
