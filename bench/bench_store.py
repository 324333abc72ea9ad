"""The run store on SQLite and PostgreSQL: throughput and latency of `store.fire`, `find` and
`due` over 100,000 stored runs with their query plans, and `fire` on long runs.

    python bench/bench_store.py [--events 1000] [--runs 100000] [--steps 10 10000]
                                [--backends sqlite postgres] [--markdown]

- **fire**: agent runs driven around `running` (call_tool / tool_result: every event is
  accepted), `--events` events in all, by 1 worker process, by 4 and by 8 (each on 8 runs
  of its own; the ratio to 1 worker in brackets), against the same events sent to in-memory
  runs in this process (no store), and against the same writes done by hand (`handwritten`).
  Latency p50/p99 of one `fire` from the 1-worker run, and p99 from the 8-worker run.
- **queries**: `--runs` runs stored, most of them finished (written straight into the tables
  in bulk, as `create` would write them, without history), 1% with a timer due;
  the time of `find` by status, state and tag and of `due`, and the plan of each query
  (EXPLAIN QUERY PLAN / EXPLAIN): they must use indexes.
- **long runs**: `fire` on a run with `--steps` steps of history already stored: the cost of
  one fire must not depend on it (target: within 2x).

SQLite files are in a temporary folder (WAL, synchronous=FULL: an fsync per commit).
PostgreSQL is the server named by $STATECHART_TEST_POSTGRES_URL, else a throwaway server
started with tests/pg_server.py (fsync on, as a real server). Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import agent_run_v1_module  # noqa: E402
from pg_server import URL_VARIABLE, Server  # noqa: E402

from statechart_runtime.store import RunStore, open_store  # noqa: E402

WORKERS = 8
WORKER_COUNTS = (1, 4, WORKERS)  # worker processes, each on 8 runs of its own
LOOP = ("call_tool", "tool_result")


def agent_run_module() -> Any:
    if "agent_run" in sys.modules:
        return sys.modules["agent_run"]
    path = agent_run_v1_module(Path(tempfile.mkdtemp()))  # the v1 graph: comparable
    spec = importlib.util.spec_from_file_location("agent_run", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_run"] = module
    spec.loader.exec_module(module)
    return module


def running_run(ar: Any, steps: int = 2) -> Any:
    """An agent run in `running`, with `steps` steps of history (at least 2)."""
    run = ar.AgentRun()
    run.triage()
    run.start()
    while len(run.record.history) < steps:
        run.send(LOOP[len(run.record.history) % 2])
    return run


def next_event(steps: int) -> str:
    return LOOP[steps % 2]


# -- fire: throughput and latency ---------------------------------------------------------

def fire_worker(url: str, run_ids: list[str], steps: int, count: int, ready: Any
                ) -> tuple[list[float], float, float]:
    """Fire `count` events round-robin at `run_ids` (all at `steps` steps): the latencies,
    and when the first event started and the last one ended (the wall clock: the workers'
    start-up is not counted, and they start together: `ready` is a barrier)."""
    ar = agent_run_module()
    store = open_store(url)
    ready.wait()
    position = dict.fromkeys(run_ids, steps)
    latencies = []
    first = time.time()
    for n in range(count):
        run_id = run_ids[n % len(run_ids)]
        started = time.perf_counter()
        store.fire(ar.AgentRun, run_id, next_event(position[run_id]))
        latencies.append(time.perf_counter() - started)
        position[run_id] += 1
    last = time.time()
    store.close()
    return latencies, first, last


def in_memory(ar: Any, runs: int, count: int) -> float:
    """Events per second of the same events sent to in-memory runs (no store)."""
    memory = [running_run(ar) for _ in range(runs)]
    started = time.perf_counter()
    for n in range(count):
        run = memory[n % runs]
        run.send(next_event(len(run.record.history)))
    return count / (time.perf_counter() - started)


def throughput(url: str, events: int) -> dict[str, Any]:
    ar = agent_run_module()
    store = open_store(url)
    runs = [running_run(ar) for _ in range(sum(n * 8 for n in WORKER_COUNTS))]
    for run in runs:
        store.create(run)
    ids = [run.record.runId for run in runs]
    store.close()
    context = multiprocessing.get_context("spawn")
    out: dict[str, Any] = {}
    for workers in WORKER_COUNTS:  # each run is fired by one worker
        mine, ids = ids[:workers * 8], ids[workers * 8:]
        with context.Manager() as manager, context.Pool(workers) as pool:
            ready = manager.Barrier(workers)
            results = pool.starmap(fire_worker, [(url, mine[w::workers], 2, events // workers,
                                                  ready) for w in range(workers)])
        first = min(r[1] for r in results)
        last = max(r[2] for r in results)
        out[workers] = events // workers * workers / (last - first)
        latencies = sorted(t for r in results for t in r[0])
        out[f"p50 x{workers}"] = statistics.median(latencies) * 1000
        out[f"p99 x{workers}"] = latencies[int(len(latencies) * 0.99)] * 1000
    return out


def handwritten(url: str, events: int) -> float:
    """The p50 (ms) of the writes of one `fire` done by hand on the same tables, with the same
    durability, as an application would write them without the store: one UPDATE of the
    run's head (a record of the same size) and one INSERT of the step, in one transaction
    (SQLite: BEGIN IMMEDIATE, WAL, synchronous=FULL; PostgreSQL: one round trip, pipelined).
    No Python run, no codec, no locking read: the floor `fire` is measured against."""
    ar = agent_run_module()
    store = open_store(url)
    run = running_run(ar)
    store.create(run)
    store.close()
    run_id = run.record.runId
    head = json.dumps(run.record.to_dict(history=False), ensure_ascii=False)
    p = store.sql.param
    update = (f"UPDATE runs SET revision = {p}, status = {p}, steps = {p}, record = {p}, "
              f"updated_at = {p} WHERE run_id = {p}")
    insert = (f'INSERT INTO history (run_id, idx, event, source, target, at, "values", kind) '
              f"VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, NULL)")
    at = "2026-01-01T00:00:00.000000Z"
    latencies = []
    if url.startswith("sqlite"):
        import sqlite3
        db: Any = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
    else:
        import psycopg
        db = psycopg.connect(url, autocommit=True)
    for n in range(2, events + 2):
        started = time.perf_counter()
        if url.startswith("sqlite"):
            db.execute("BEGIN IMMEDIATE")
            db.execute(update, (n, "running", n + 1, head, at, run_id))
            db.execute(insert, (run_id, n, "call_tool", "running", "running", at, "{}"))
            db.execute("COMMIT")
        else:
            with db.pipeline():
                db.execute("BEGIN")
                db.execute(update, (n, "running", n + 1, head, at, run_id))
                db.execute(insert, (run_id, n, "call_tool", "running", "running", at, "{}"))
                db.execute("COMMIT")
        latencies.append(time.perf_counter() - started)
    db.close()
    return statistics.median(latencies) * 1000


# -- queries over many runs ---------------------------------------------------------------

def bulk_runs(ar: Any, store: RunStore, count: int) -> None:
    """`count` runs as most stores hold them: most finished (90% completed), the rest
    running (4% reasoning, 3% in a tool call) or paused waiting for an approval (3%); 1% have
    a timer due. Written as `create` writes them (the head and the active states), in one
    transaction, without their history."""
    def driven(*events: str) -> Any:
        run = ar.AgentRun()
        for event in events:
            run.send(event)
        return run

    paused = driven("triage", "start")
    paused.interrupt(interruptReason=ar.AgentRunInterruptReason.approval)
    paused.await_approval()
    spread = ([driven("triage", "start", "complete")] * 90 + [driven("triage", "start")] * 4
              + [driven("triage", "start", "call_tool")] * 3 + [paused] * 3)
    heads = [(run, json.dumps(run.record.to_dict(history=False))) for run in spread]
    runs, states = [], []
    for n in range(count):
        run, head = heads[n * 37 % len(heads)]
        run_id = uuid.uuid4().hex
        due = f"2025-01-01T00:{n % 60:02d}:00.000000Z" if n % 100 == 1 else None
        runs.append((run_id, "agent_run", 1, 1, run.record.status.value, 0,
                     head.replace(run.record.runId, run_id), due, "2025-01-01T00:00:00Z",
                     "2025-01-01T00:00:00Z"))
        states += [(run_id, "agent_run", name) for name in run._active]
    marks = ", ".join([store.sql.param] * 10)
    with store._transaction(store.sql.begin_write):
        store._many(f"INSERT INTO runs VALUES ({marks})", runs)
        store._many(store.sql.insert_state, states)
    with store._transaction(store.sql.begin_write):
        store._x("ANALYZE")


def queries(url: str, count: int) -> tuple[dict[str, tuple[float, int]], dict[str, list[str]]]:
    ar = agent_run_module()
    store = open_store(url)
    bulk_runs(ar, store, count)
    calls = {
        "find(status=running)": lambda: store.find(ar.AgentRun, status="running"),
        "find(state=tool_call)": lambda: store.find(ar.AgentRun, state="tool_call"),
        "find(tag=paused)": lambda: store.find(ar.AgentRun, tag="paused"),
        "due(now, limit=100)": lambda: store.due(ar.AgentRun),
    }
    times = {}
    for name, call in calls.items():
        found = call()
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            call()
            samples.append(time.perf_counter() - started)
        times[name] = (statistics.median(samples) * 1000, len(found))
    pg = url.startswith("postgres")
    explain = "EXPLAIN " if pg else "EXPLAIN QUERY PLAN "
    sqls = {name: store.find_sql(ar.AgentRun, **{key: value})
            for name, key, value in (("find(status=running)", "status", "running"),
                                     ("find(state=tool_call)", "state", "tool_call"),
                                     ("find(tag=paused)", "tag", "paused"))}
    sqls["due(now, limit=100)"] = (store.sql.due, ["agent_run", "2026-01-01T00:00:00.000000Z", 100])
    plans = {}
    for name, query in sqls.items():
        assert query is not None
        sql, args = query
        rows = store._read(lambda sql=sql, args=args: store._x(explain + sql, args).fetchall())
        plans[name] = [str(row[0] if pg else row[-1]) for row in rows]
    store.close()
    return times, plans


# -- fire on long runs --------------------------------------------------------------------

def long_runs(url: str, sizes: list[int], fires: int) -> dict[int, float]:
    """The median `fire` on runs of each size, fired in turn (one event to each run, then
    the next event to each) so that every size sees the same machine load."""
    ar = agent_run_module()
    store = open_store(url)
    ids = {}
    for steps in sizes:
        run = running_run(ar, steps)
        store.create(run)
        ids[steps] = run.record.runId
    samples: dict[int, list[float]] = {steps: [] for steps in sizes}
    for n in range(fires):
        for steps in sizes:
            started = time.perf_counter()
            store.fire(ar.AgentRun, ids[steps], next_event(steps + n))
            samples[steps].append(time.perf_counter() - started)
    store.close()
    return {steps: statistics.median(times) * 1000 for steps, times in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 10_000])
    parser.add_argument("--fires", type=int, default=41)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--parts", nargs="+", default=["fire", "queries", "long"])
    args = parser.parse_args()
    ar = agent_run_module()
    server = None
    folder = tempfile.mkdtemp(prefix="bench-store-")
    try:
        urls = {}
        for backend in args.backends:
            if backend == "sqlite":
                urls[backend] = lambda name: f"sqlite:///{folder}/{name}.db"
            else:
                base = os.environ.get(URL_VARIABLE)
                if not base:
                    server = Server.start(fsync=True)
                    base = server.url
                urls[backend] = _schema_url(base)
        if "fire" in args.parts:
            fire_table(ar, urls, args.events)
        if "queries" in args.parts:
            query_tables(urls, args.runs)
        if "long" in args.parts:
            long_table(urls, args.steps, args.fires)
    finally:
        if server is not None:
            server.stop()
        for path in Path(folder).glob("*"):
            path.unlink()
        os.rmdir(folder)


def fire_table(ar: Any, urls: dict[str, Any], events: int) -> None:
    memory = in_memory(ar, WORKERS * 8, events)
    print(f"in-memory runs (no store): {memory:,.0f} events/s\n")
    print("| backend | 1 worker (events/s) | 4 workers | 8 workers | fire p50 (ms) "
          "| fire p99 (ms) | p99, 8 workers (ms) | by hand p50 (ms) | fire / by hand |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for backend, url in urls.items():
        got = throughput(url("throughput"), events)
        hand = handwritten(url("handwritten"), events)
        print(f"| {backend} | {got[1]:,.0f} | {got[4]:,.0f} ({got[4] / got[1]:.2f}x) | "
              f"{got[8]:,.0f} ({got[8] / got[1]:.2f}x) | {got['p50 x1']:.2f} | "
              f"{got['p99 x1']:.2f} | {got['p99 x8']:.2f} | {hand:.2f} | "
              f"{got['p50 x1'] / hand:.2f}x |")


def query_tables(urls: dict[str, Any], runs: int) -> None:
    for backend, url in urls.items():
        times, plans = queries(url("queries"), runs)
        print(f"\n{backend}, {runs:,} runs:\n")
        print("| query | ms | ids found |")
        print("| --- | ---: | ---: |")
        for name, (ms, found) in times.items():
            print(f"| `{name}` | {ms:.2f} | {found:,} |")
        for name, plan in plans.items():
            print(f"\n{name}:\n" + "\n".join(f"    {line}" for line in plan))


def long_table(urls: dict[str, Any], sizes: list[int], fires: int) -> None:
    print("\n| backend | " + " | ".join(f"fire at {s:,} steps (ms)" for s in sizes)
          + " | ratio |")
    print("| --- |" + " ---: |" * (len(sizes) + 1))
    for backend, url in urls.items():
        got = long_runs(url("long"), sizes, fires)
        values = [got[s] for s in sizes]
        print(f"| {backend} | " + " | ".join(f"{v:.2f}" for v in values)
              + f" | {values[-1] / values[0]:.2f} |")


def _schema_url(base: Any) -> Any:
    """A fresh schema per part of the benchmark on the server at `base`."""
    import psycopg

    def url(name: str) -> str:
        schema = f"bench_{name}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(base, autocommit=True) as db:
            db.execute(f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in base else "?"
        return f"{base}{separator}options=-csearch_path%3D{schema}"
    return url


if __name__ == "__main__":
    main()
