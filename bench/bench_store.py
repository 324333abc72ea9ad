"""The run store on SQLite and PostgreSQL: throughput and latency of `store.fire`, `find` and
`due` over 100,000 stored runs with their query plans, and `fire` on long runs.

    python bench/bench_store.py [--events 1000] [--runs 100000] [--steps 10 10000]
                                [--backends sqlite postgres] [--markdown]

- **fire**: agent runs driven around `running` (call_tool / tool_result: every event is
  accepted), `--events` events in all, by 1 worker process, by 4 and by 8 (each on 8 runs
  of its own; the ratio to 1 worker in brackets), against the same events sent to in-memory
  runs in this process (no store), and against the same writes done by hand (`handwritten`).
  Latency p50/p99 of one `fire` from the 1-worker run, and p99 from the 8-worker run.
  Then what `fire`'s checks of the head add, without the commit's fsync that hides it: its
  locking read alone against the same with the statement the checks read (in turn, rolled
  back), and the Python checks.
- **queries**: `--runs` runs stored, most of them finished (written straight into the tables
  in bulk, as `create` would write them, without history), 1% with a timer due;
  the time of `find` by status, state and tag and of `due`, and the plan of each query
  (EXPLAIN QUERY PLAN / EXPLAIN): they must use indexes.
- **long runs**: `fire` on a run with `--steps` steps of history already stored: the cost of
  one fire must not depend on it (target: within 2x).
- **verify**: `runs verify` over `--verify-runs` stored runs with their histories, against
  the same checks on two streamed queries (target: within 1.5x), a plain streaming read of
  the same rows (JSON decoded, nothing checked: target within 3x, issue 31), and one run at
  a time.
- **async**: the asynchronous store (`open_async_store`, bench/store_async.py): `fire` per
  call (awaited one at a time) against the synchronous `fire`, rounds interleaved (target:
  within 1.15x); 200 runs fired at once from one event loop with a pool of 8 connections
  and of 1 (PostgreSQL target: at least 3x); as `async-peers`, LangGraph's `ainvoke` with
  `AsyncSqliteSaver` / `AsyncPostgresSaver` beside it (target: `fire` at least 5x faster).
- **peers** (not in the default parts; `pip install -e '.[bench]'`): one durable step of the
  store (`fire`, one process), the same writes by hand, and what users would pick instead:
  LangGraph (`invoke` of a one-node graph holding the same record fields, with its
  `SqliteSaver` / `PostgresSaver`) and DBOS (a `@DBOS.step` in a workflow), p50 of each
  (bench/peers.py).

SQLite files are in a temporary folder (WAL, synchronous=FULL: an fsync per commit).
PostgreSQL is the server named by $STATECHART_TEST_POSTGRES_URL, else a throwaway server
started with tests/pg_server.py (fsync on, as a real server). Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import importlib.util
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import agent_run_v1_module  # noqa: E402
from pg_server import URL_VARIABLE, Server  # noqa: E402

from statechart_runtime.run import active_states  # noqa: E402
from statechart_runtime.store import Statements, open_store  # noqa: E402
from statechart_runtime.store.core.checks import utc_text as _utc_text  # noqa: E402

WORKERS = 8
MISSING_PEERS = ("--parts peers needs LangGraph and DBOS, which are not project "
                 "dependencies: pip install -e '.[bench]'")
WORKER_COUNTS = (1, 4, WORKERS)  # worker processes, each on 8 runs of its own
LOOP = ("call_tool", "tool_result")


def connect(url: str) -> Any:
    """A connection of the bench's own to the store's database (autocommit: each transaction
    begun and ended by the statements it sends), for what the store's API does not do: rows
    written straight into its tables, query plans, `fire`'s reads alone."""
    if url.startswith("postgres"):
        import psycopg

        return psycopg.connect(url, autocommit=True)
    import sqlite3

    from statechart_runtime.store.sqlite import path_of

    return sqlite3.connect(path_of(url), isolation_level=None)


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
    p = "?" if url.startswith("sqlite") else "%s"  # the writes by hand: the driver's mark
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


def head_reads(url: str, reads: int) -> tuple[float, float, float]:
    """What `fire`'s checks of the head add to it, without the commit's fsync (which hides
    it): the median µs of fire's reading statements in a write transaction that is rolled
    back, the locking SELECT of the head alone against it with the second statement that
    reads the run's states and last step (sent together, as `fire` does: one round trip on
    PostgreSQL), taken in turn on a run with 10 steps; and of the Python checks
    (`checks.head_disagreement`) on the restored head. The statements are the store's
    (`store.sql`), sent on a connection of the bench's own."""
    from contextlib import nullcontext

    from statechart_runtime.store.core import checks as store_checks

    ar = agent_run_module()
    store = open_store(url)
    run = running_run(ar, 10)
    store.create(run)
    run_id = run.record.runId
    db = connect(url)
    pipeline = (lambda: db.pipeline()) if url.startswith("postgres") else nullcontext

    def checked_head() -> tuple[Any, ...]:  # as `fire` reads it: the head, then its checks
        head = db.execute(store.sql.head_locked, (run_id,))
        checks = db.execute(store.sql.head_checks, (run_id, run_id))
        return (*head.fetchone(), *checks.fetchone())

    def read(checked: bool) -> float:
        started = time.perf_counter()
        with pipeline():
            db.execute(store.sql.begin_write)
            if checked:
                checked_head()
            else:
                db.execute(store.sql.head_locked, (run_id,)).fetchone()
            db.execute("ROLLBACK")
        return time.perf_counter() - started

    alone, checked = [], []
    for _ in range(reads):
        alone.append(read(False))
        checked.append(read(True))
    with pipeline():
        db.execute(store.sql.begin_write)
        row = checked_head()
        db.execute("ROLLBACK")
    restored = store.load(ar.AgentRun, run_id)
    started = time.perf_counter()
    for _ in range(reads):
        store_checks.head_disagreement(restored, row[5], store_checks.state_set(row[6]),
                                       row[3], row[7:10])
    python = (time.perf_counter() - started) / reads
    db.close()
    store.close()
    return (statistics.median(alone) * 1e6, statistics.median(checked) * 1e6, python * 1e6)


# -- queries over many runs ---------------------------------------------------------------

def _driven(ar: Any, *events: str) -> Any:
    """A new agent run that took `events`."""
    run = ar.AgentRun()
    for event in events:
        run.send(event)
    return run


def _paused(ar: Any) -> Any:
    """An agent run paused for an approval."""
    run = _driven(ar, "triage", "start")
    run.interrupt(interruptReason=ar.AgentRunInterruptReason.approval)
    run.await_approval()
    return run


def bulk_runs(ar: Any, url: str, count: int) -> None:
    """`count` runs as most stores hold them: most finished (90% completed), the rest
    running (4% reasoning, 3% in a tool call) or paused waiting for an approval (3%); 1% have
    a timer due. Written as `create` writes them (the head and the active states), in one
    transaction, without their history."""
    driven = functools.partial(_driven, ar)
    paused = _paused(ar)
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
        states += [(run_id, "agent_run", name) for name in active_states(run)]
    _bulk(url, lambda sql: [(_insert_runs(sql), runs), (sql.insert_state, states)])


def _insert_runs(sql: Statements) -> str:
    """The backend's INSERT of a `runs` row's first ten columns (its placeholder: that of
    insert_state); the columns added since (the trace context) are left NULL."""
    mark = "%s" if "%s" in sql.insert_state else "?"
    return ("INSERT INTO runs (run_id, spec, spec_version, revision, status, steps, record, "
            f"next_due, created_at, updated_at) VALUES ({', '.join([mark] * 10)})")


def _bulk(url: str, statements: Callable[[Statements], list[tuple[str, list[Any]]]]) -> None:
    """Rows written straight into the store's tables (created first), in one transaction,
    then ANALYZE: `statements(the backend's SQL)`."""
    store = open_store(url)
    sql = store.sql
    store.close()
    db = connect(url)
    db.execute(sql.begin_write)
    for text, rows in statements(sql):
        db.cursor().executemany(text, rows)
    db.execute("COMMIT")
    db.execute("ANALYZE")
    db.close()


def queries(url: str, count: int) -> tuple[dict[str, tuple[float, int]], dict[str, list[str]]]:
    ar = agent_run_module()
    bulk_runs(ar, url, count)
    store = open_store(url)
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
    sqls["due(now, limit=100)"] = (store.sql.due, ["agent_run", 1,
                                                   "2026-01-01T00:00:00.000000Z", 100])
    plans = {}
    db = connect(url)
    for name, query in sqls.items():
        assert query is not None
        sql, args = query
        rows = db.execute(explain + sql, args).fetchall()
        plans[name] = [str(row[0] if pg else row[-1]) for row in rows]
    db.close()
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


# -- verify over many runs -----------------------------------------------------------------

def stored_histories(ar: Any, url: str, count: int) -> None:
    """`count` runs with their histories (2 to 12 steps: finished, looping through tools,
    paused for an approval), written straight into the tables as `create` writes them (head,
    active states, steps), in one transaction. Eight histories, each run's times its own
    (run n's are the template's plus n seconds): runs share their structure, as real runs
    do, not their times."""
    from statechart_runtime.chart.values import time_text

    driven = functools.partial(_driven, ar)
    paused = _paused(ar)
    templates = [driven("triage", "start", "complete"), paused] + [
        driven("triage", "start", *LOOP * loops) for loops in range(6)]
    runs, states, steps = [], [], []
    for n in range(count):
        run = templates[n % len(templates)]
        run_id = f"run-{n:06d}"
        later = dt.timedelta(seconds=n)
        head_data = run.record.to_dict(history=False)
        head_data.update(runId=run_id,
                         lastTransitionAt=time_text(run.record.lastTransitionAt + later))
        history = run.record.history
        runs.append((run_id, "agent_run", 1, 1, run.record.status.value, len(history),
                     json.dumps(head_data), None, "2025-01-01T00:00:00.000000Z",
                     "2025-01-01T00:00:00.000000Z"))
        states += [(run_id, "agent_run", name) for name in active_states(run)]
        steps += [(run_id, i, step.event.value, step.source.value, step.target.value,
                   _utc_text(step.at + later), json.dumps(step.values, sort_keys=True),
                   step.kind)
                  for i, step in enumerate(history)]
    _bulk(url, lambda sql: [(_insert_runs(sql), runs), (sql.insert_state, states),
                            (sql.insert_step, steps)])


def _streamed_runs(url: str) -> Any:
    """The rows of two queries streamed in one read transaction, the heads (with their
    active states) and the history ordered by run, merged by run id: (head, step rows) per
    run."""
    sqlite = url.startswith("sqlite")
    p = "?" if sqlite else "%s"
    agg = "group_concat" if sqlite else "string_agg"
    heads_sql = ("SELECT r.run_id, r.spec, r.spec_version, r.revision, r.status, r.steps, "
                 "r.created_at, r.updated_at, r.next_due, r.record, (SELECT "
                 f"{agg}(state, ' ') FROM run_states s WHERE s.run_id = r.run_id) FROM runs r "
                 f"WHERE r.spec = {p} ORDER BY r.run_id")
    steps_sql = ('SELECT h.run_id, h.event, h.source, h.target, h.at, h."values", h.kind '
                 f"FROM history h JOIN runs r ON r.run_id = h.run_id WHERE r.spec = {p} "
                 "ORDER BY h.run_id, h.idx")
    if sqlite:
        import sqlite3
        db: Any = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        db.execute("BEGIN")
        heads, steps = db.execute(heads_sql, ("agent_run",)), db.cursor()
        steps.execute(steps_sql, ("agent_run",))
    else:
        import psycopg
        db = psycopg.connect(url)
        db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        heads, steps = db.cursor(name="heads"), db.cursor(name="steps")
        heads.itersize = steps.itersize = 2000
        heads.execute(heads_sql, ("agent_run",))
        steps.execute(steps_sql, ("agent_run",))
    pending = next(steps, None)
    for head in heads:
        run_id, rows = head[0], []
        while pending is not None and pending[0] == run_id:
            rows.append(pending[1:])
            pending = next(steps, None)
        yield head, rows
    db.rollback() if not sqlite else db.execute("ROLLBACK")
    db.close()


def plain_read(url: str) -> int:
    """The floor: the same rows as `streamed_verify` reads, streamed and merged by run, each
    run's record and step values decoded from JSON, nothing checked. Returns the runs."""
    runs = 0
    for head, rows in _streamed_runs(url):
        record = json.loads(head[9])
        record["history"] = [json.loads(row[4]) for row in rows]
        runs += 1
    return runs


def streamed_verify(url: str, against: Any) -> int:
    """The baseline: the checks of `runs verify` (the same per-run function) on the rows of
    two queries streamed in one read transaction (`_streamed_runs`). Returns the findings."""
    from statechart.diagnostics import Span
    from statechart.runs_verify import check_run
    from statechart_runtime.errors import StoreError
    from statechart_runtime.store.core import rows as store_read

    where = Span.point(url, 1, 1)

    def damaged(field: str, message: str) -> StoreError:
        return StoreError(f"{field}: {message}")

    findings = 0
    for head, rows in _streamed_runs(url):
        stored = store_read.stored_run(head[:9], tuple(sorted((head[10] or "").split())),
                                        rows[-1][3] if rows else None)
        record = json.loads(head[9])
        record["history"] = store_read.step_dicts(rows, damaged)
        findings += check_run(head[0], (stored, record), against, None, where) is not None
    return findings


def verify_times(url: str, count: int, repeats: int) -> dict[str, float]:
    """Seconds (the best of `repeats`, taken in turn) of `runs verify` (batched snapshots),
    of the baseline (two streamed queries), and of reading the runs one at a time
    (`stored_record` per run, as `verify` did before: one transaction each)."""
    from statechart.diagnostics import Span
    from statechart.runs_verify import Against, check_run, verify

    ar = agent_run_module()
    stored_histories(ar, url, count)
    store = open_store(url)

    # A new `Against` per case, as each `statechart runs verify` makes its own: its memo of
    # replayed structures starts empty (`statechart_runtime.run.record_memo`).
    def batched() -> None:
        found = verify(store, url, Against("agent_run.yaml", ar.AgentRun))
        assert found.runs == count and not found.diagnostics, found.diagnostics[:3]

    def baseline() -> None:
        assert streamed_verify(url, Against("agent_run.yaml", ar.AgentRun)) == 0

    def plain() -> None:
        assert plain_read(url) == count

    def one_at_a_time() -> None:
        where = Span.point(url, 1, 1)
        against = Against("agent_run.yaml", ar.AgentRun)
        for run in store.stored_runs("agent_run"):
            assert check_run(run.run_id, store.stored_record(run.run_id), against, None,
                             where) is None

    cases = {"verify": batched, "two streamed queries": baseline, "plain read": plain,
             "one run at a time": one_at_a_time}
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeats):
        for name, case in cases.items():
            started = time.perf_counter()
            case()
            best[name] = min(best[name], time.perf_counter() - started)
    store.close()
    return best


def verify_table(urls: dict[str, Any], count: int, repeats: int) -> None:
    print(f"\n`runs verify` over {count:,} stored runs (s, best of {repeats}):\n")
    print("| backend | verify (batches of 500) | two streamed queries | plain read "
          "| verify / streamed | verify / plain read | one run at a time |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for backend, url in urls.items():
        got = verify_times(url("verify"), count, repeats)
        print(f"| {backend} | {got['verify']:.2f} | {got['two streamed queries']:.2f} | "
              f"{got['plain read']:.2f} | "
              f"{got['verify'] / got['two streamed queries']:.2f}x | "
              f"{got['verify'] / got['plain read']:.2f}x | "
              f"{got['one run at a time']:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 10_000])
    parser.add_argument("--fires", type=int, default=41)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--verify-runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--parts", nargs="+",
                        default=["fire", "queries", "long", "verify", "async"],
                        help="also: peers (LangGraph and DBOS), async-peers (async, with "
                        "LangGraph's ainvoke): pip install -e '.[bench]'")
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
                urls[backend] = schema_url(base)
        if "fire" in args.parts:
            fire_table(ar, urls, args.events)
        if "queries" in args.parts:
            query_tables(urls, args.runs)
        if "long" in args.parts:
            long_table(urls, args.steps, args.fires)
        if "verify" in args.parts:
            verify_table(urls, args.verify_runs, args.repeats)
        if "async" in args.parts or "async-peers" in args.parts:
            async_table(ar, urls, args.events, peers="async-peers" in args.parts)
        if "peers" in args.parts:
            peers_table(ar, urls, args.events, base_urls={
                name: (server.url if server is not None else os.environ[URL_VARIABLE])
                for name in urls if name != "sqlite"})
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
    print("\nfire's checks of the head (its run_states rows and last step), without the "
          "commit:\n")
    print("| backend | locking SELECT alone (µs) | with the checks' statement (µs) | ratio "
          "| Python checks (µs) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for backend, url in urls.items():
        alone, checked, python = head_reads(url("heads"), 500)
        print(f"| {backend} | {alone:.0f} | {checked:.0f} | {checked / alone:.2f}x | "
              f"{python:.1f} |")


def async_table(ar: Any, urls: dict[str, Any], events: int, *, peers: bool) -> None:
    """The asynchronous store (bench/store_async.py): `fire` per call against the
    synchronous one, 200 runs fired at once from one loop with a pool of 8 connections and
    of 1, and (with `peers`) LangGraph's `ainvoke` with its async checkpointer."""
    import store_async

    make = functools.partial(running_run, ar)
    print("\n| backend | sync `fire` p50 (ms) | async `fire` p50 (ms) | async / sync "
          "| 200 at once, pool 8 (events/s) | pool 1 (events/s) | 8 / 1 |"
          + (" LangGraph `ainvoke` p50 (ms) | `ainvoke` / async `fire` |" if peers else ""))
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if peers else ""))
    for backend, url in urls.items():
        sync_ms, async_ms = store_async.per_call(ar, make, url("async_per_call"), events // 5)
        at_once = store_async.concurrent(ar, make, url("async_concurrent"), 200, (8, 1))
        line = (f"| {backend} | {sync_ms:.2f} | {async_ms:.2f} | {async_ms / sync_ms:.2f}x | "
                f"{at_once[8]:,.0f} | {at_once[1]:,.0f} | {at_once[8] / at_once[1]:.2f}x |")
        if peers:
            fields = running_run(ar).record.to_dict(history=False)
            where = url("async_langgraph")
            if backend == "sqlite":
                where = where.removeprefix("sqlite:///")
            graph = store_async.langgraph_async(where, fields, events)
            line += f" {graph:.2f} | {graph / async_ms:.2f}x |"
        print(line, flush=True)


def peers_table(ar: Any, urls: dict[str, Any], events: int, base_urls: dict[str, str],
                rounds: int = 5) -> None:
    """One durable step of the store (`fire`, one process), by hand, of LangGraph (`invoke`
    with its checkpointer, at its default durability and at `durability="exit"`) and of DBOS
    (a step in a workflow): on the same database, interleaved in `rounds` rounds of
    `events / rounds` steps each (every system runs in every round, one after the other, so a
    busy moment of a shared machine falls on all of them). Each cell is the median of the
    rounds' p50s; a ratio to `fire` is taken within each round, and its range over the rounds
    is shown."""
    import threading

    try:
        import peers
    except ImportError:
        raise SystemExit(MISSING_PEERS) from None
    fields = running_run(ar).record.to_dict(history=False)
    names = ("fire", "by hand", "LangGraph (default)", 'LangGraph ("exit")', "DBOS")
    print("\n| backend | " + " | ".join(f"{n} p50 (ms)" for n in names)
          + " | LangGraph / `fire` | LangGraph exit / `fire` | DBOS / `fire` | DBOS's SQLite |")
    print("| --- |" + " ---: |" * (len(names) + 3) + " --- |")
    per_round = max(events // rounds // 8 * 8, 16)  # each of the 8 runs the same number
    def one_backend(backend: str, url: Any) -> None:
        store_url = url("peers_fire")
        store = open_store(store_url)
        runs = [running_run(ar) for _ in range(8)]
        for run in runs:
            store.create(run)
        store.close()
        folder = store_url.removeprefix("sqlite:///").rsplit("/", 1)[0]
        dbos_url = peers.wal_database(f"{folder}/dbos.db") if backend == "sqlite" \
            else base_urls[backend]
        graph_url = url("peers_langgraph")
        if backend != "sqlite":
            peers.langgraph_postgres_setup(graph_url)
        steps = 2

        def fire() -> float:
            nonlocal steps
            latencies = fire_worker(store_url, [r.record.runId for r in runs], steps,
                                    per_round, threading.Barrier(1))[0]
            steps += per_round // len(runs)
            return statistics.median(latencies) * 1000

        def graph(durability: str | None) -> float:
            if backend == "sqlite":
                return peers.langgraph_sqlite(f"{folder}/langgraph.db", fields, per_round,
                                              durability)
            return peers.langgraph_postgres(graph_url, fields, per_round, durability)

        systems = (fire, lambda: handwritten(url("peers_hand"), per_round),
                   lambda: graph(None), lambda: graph("exit"),
                   lambda: peers.dbos_steps(dbos_url, fields, per_round))
        table = [[system() for system in systems] for _ in range(rounds)]
        cells = [statistics.median(row[i] for row in table) for i in range(len(systems))]

        def ratio(i: int) -> str:
            got = sorted(row[i] / row[0] for row in table)
            return f"{statistics.median(got):.2f}x ({got[0]:.2f}-{got[-1]:.2f})"

        sqlite_mode = peers.sqlite_settings(f"{folder}/dbos.db") if backend == "sqlite" \
            else "–"
        print(f"| {backend} | " + " | ".join(f"{c:.2f}" for c in cells)
              + f" | {ratio(2)} | {ratio(3)} | {ratio(4)} | {sqlite_mode} |", flush=True)

    for backend, url in urls.items():
        one_backend(backend, url)


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


def schema_url(base: Any) -> Any:
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
