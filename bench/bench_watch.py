"""Watching steps (`store.watch`, docs/runs.md): what the notice every PostgreSQL step sends
at its commit costs a `fire`, and how soon a watch yields a step after its commit.

    python bench/bench_watch.py [--rounds 15] [--events 40] [--steps 50]

- **notice**: agent runs driven around `running` (call_tool / tool_output) by 1 thread and
  by 8 (a synchronous store each, a run each), with the store's step notice (`SELECT
  pg_notify(...)` in the step's transaction, the backend's `announce_step`) and without it
  (the same statements but that one), the two in turn within each round (their order
  alternating); the ratio of the time per `fire` with it to without, per round: median and
  quartiles. PostgreSQL only (SQLite has no notices: its watches poll).
- **latency**: a watch (`store.watch(..., poll=P)`, a thread of its own, a store of its own)
  and `--steps` steps fired one at a time, 0.05 s apart: seconds from a `fire`'s return to
  the watch yielding its step, median and max; PostgreSQL with its poll at 5 s (the notice
  wakes it), SQLite polling every 0.05 s and every 0.5 s.

PostgreSQL is the server named by $STATECHART_TEST_POSTGRES_URL, else a throwaway server
(tests/pg_server.py). Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from pg_server import URL_VARIABLE, Server  # noqa: E402

from generated.agent_run import AgentRun  # noqa: E402
from statechart_runtime.store import open_store  # noqa: E402


def fresh_postgres(server: str) -> str:
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in server else "?"
    return f"{server}{separator}options=-csearch_path%3D{schema}"


def running(url: str) -> tuple[Any, str]:
    store = open_store(url)
    run_id = uuid.uuid4().hex
    store.create(AgentRun(run_id=run_id))
    store.fire(AgentRun, run_id, "triage")
    store.fire(AgentRun, run_id, "start")
    return store, run_id


def drive(runs: list[tuple[Any, str]], events: int) -> float:
    """Seconds per `fire`, each run driven by a thread of its own."""
    def work(store: Any, run_id: str) -> None:
        for _ in range(events):
            store.fire(AgentRun, run_id, "call_tool", toolCallId="c")
            store.fire(AgentRun, run_id, "tool_output", toolOutput={"a": 1})

    threads = [threading.Thread(target=work, args=run) for run in runs]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (time.perf_counter() - started) / (len(runs) * events * 2)


def notice(url: str, rounds: int, events: int) -> None:
    from statechart_runtime.store.postgres._sync import PostgresStore

    with_notice = PostgresStore.sql
    without = dataclasses.replace(with_notice, announce_step="")
    print("| threads | with the notice / without, per `fire`: median | quartiles |")
    print("| ---: | ---: | ---: |")
    try:
        for threads in (1, 8):
            runs = [running(url) for _ in range(threads)]
            ratios = []
            for n in range(rounds):
                order = [("with", with_notice), ("without", without)]
                took = {}
                for name, sql in order if n % 2 == 0 else order[::-1]:
                    PostgresStore.sql = sql
                    took[name] = drive(runs, events)
                ratios.append(took["with"] / took["without"])
            low, _, high = statistics.quantiles(ratios, n=4)
            print(f"| {threads} | {statistics.median(ratios):.3f}× | {low:.3f}–{high:.3f} |")
            for store, _ in runs:
                store.close()
    finally:
        PostgresStore.sql = with_notice


def latency(name: str, url: str, poll: float, steps: int) -> None:
    store, run_id = running(url)
    fired: dict[int, float] = {}
    seen: dict[int, float] = {}
    start = store.watch_position()

    def watch() -> None:
        with open_store(url) as mine, contextlib.closing(
                mine.watch(AgentRun, after=start, poll=poll)) as changes:
            for change in changes:
                seen[change.index] = time.monotonic()
                if len(seen) == steps:
                    return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.5)
    base = store.stored_runs()[0].steps  # the run's steps so far (the store's only run)
    for n in range(steps):
        event = ("call_tool", {"toolCallId": "c"}) if n % 2 == 0 else \
            ("tool_output", {"toolOutput": {"n": n}})
        store.fire(AgentRun, run_id, event[0], **event[1])
        fired[base + n] = time.monotonic()
        time.sleep(0.05)
    watcher.join(60)
    delays = [seen[i] - fired[i] for i in fired if i in seen]
    print(f"| {name} | {poll:g} | {len(delays)} of {steps} | {statistics.median(delays):.4f} "
          f"| {max(delays):.4f} |")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--events", type=int, default=40)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    server = os.environ.get(URL_VARIABLE)
    own = None
    if not server:
        own = Server.start(fsync=True)
        server = own.url
    try:
        notice(fresh_postgres(server), args.rounds, args.events)
        print()
        print("| backend | watch poll (s) | steps seen | commit → yielded, median (s) | max (s) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        latency("PostgreSQL (the notice)", fresh_postgres(server), 5.0, args.steps)
        with tempfile.TemporaryDirectory() as folder:
            for poll in (0.05, 0.5):
                latency("SQLite", f"sqlite:///{folder}/watch-{poll}.db", poll, args.steps)
    finally:
        if own is not None:
            own.stop()


if __name__ == "__main__":
    main()
