"""Work items (docs/work.md) on SQLite and PostgreSQL: the claim -> handler -> outcome cycle
of the asynchronous worker against one `fire` and against DBOS's queue, in the same run; and
how soon a dead worker's item is claimed again.

    python bench/bench_work.py [--items 300] [--rounds 3] [--backends sqlite postgres]
                               [--parts cycle reclaim] [--reclaim 1:0.25 2:1] [--samples 5]

- **cycle**: `--items` job runs (tests/store_support.py's JOB: `start` enters `working`,
  whose work `do_it` has the outcome `done`) wait in `working`, each with its item pending;
  then worker processes drain them: `AsyncWorker(store, Job, handlers={"do_it": ...})`
  `.run()`, the worker a user starts with `statechart runs work` (poll 1 s, the default),
  whose handler does nothing but return `Outcome("done", output=...)`. Three shapes: one
  process with `concurrency=1` (x1), one process with `concurrency=4` (the default of
  `statechart runs work`: four claims in flight in one event loop), and four processes with
  `concurrency=1` each (4 proc). Cycles per second: items / (the last outcome's time - the
  first claim's time), both as the store stamped them (`work_items.ended_at`,
  `work_attempts.claimed_at`): the processes' start-up is not counted. Every item applied
  once is checked.
  Beside it, in each round: **fire**, the same outcome without the claim: `await
  store.fire(Job, run_id, "done", output=...)` on the asynchronous store, one process, one
  call at a time, over as many runs in `working` (it ends their items, as the outcome does);
  and **DBOS** (`pip install -e '.[bench]'`): as many workflows enqueued on a DBOS queue
  beforehand (`queue.enqueue`), then dequeued by the same shapes of processes (the queue's
  `worker_concurrency` 1 or 4), each workflow one `@DBOS.step` returning the output, which
  DBOS records with the workflow's. The queue polls every 0.01 s (DBOS's default, 1 s,
  would cap a slot at one workflow a second). Its rate: items / (the last workflow's return -
  the first step's start), times taken in the workflows (DBOS's SQLite stamps are whole
  seconds). Rounds interleave the systems; each cell is the median of the rounds, ratios are
  taken within a round (their range in brackets).
- **reclaim**: a live worker process (`AsyncWorker.run()`, poll P) and a dead one: an item is
  claimed (`claim_work`) and its lease (the work's `timeout`, L) left to expire, as a killed
  worker leaves it. The time from that claim to the item's next claim (by the live worker,
  as stamped in `work_attempts`) against L + P, `--samples` items per `L:P` pair, each
  claimed at a random moment of the worker's poll.

SQLite files are in a temporary folder (WAL, synchronous=FULL). PostgreSQL is the server
named by $STATECHART_TEST_POSTGRES_URL, else a throwaway server (tests/pg_server.py, fsync
on). Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from pg_server import URL_VARIABLE, Server  # noqa: E402
from store_support import import_path, job_text  # noqa: E402

from statechart_runtime.store import open_async_store, open_store  # noqa: E402

SPAWN = multiprocessing.get_context("spawn")
SHAPES = {"x1": (1, 1), "x4": (1, 4), "4 proc": (4, 1)}  # (processes, concurrency each)
DBOS_POLL = 0.01
MISSING_DBOS = ("the DBOS column needs DBOS, which is not a project dependency: "
                "pip install -e '.[bench]'")


# -- the job class, generated once, imported by path in every process --------------------

def job_module(folder: Path, timeout: str) -> Path:
    from codegen_support import checked_text, generate

    spec = checked_text(job_text(timeout=timeout))
    assert spec is not None
    path = folder / f"job_bench_{timeout.replace('.', '_')}.py"
    path.write_bytes(generate(spec)["generated/job.py"])
    return path


def job(path: Path) -> Any:
    return import_path(path, path.stem).Job


def waiting(url: str, path: Path, prefix: str, count: int) -> list[str]:
    """`count` job runs in `working`, each with its item pending."""
    job_class = job(path)
    ids = [f"{prefix}-{n}" for n in range(count)]
    with open_store(url) as store:
        for run_id in ids:
            store.create(job_class(run_id=run_id))
            store.fire(job_class, run_id, "start")
    return ids


def _query(url: str, sql: str, args: tuple[Any, ...]) -> Any:
    if url.startswith("sqlite"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            return db.execute(sql, args).fetchone()
        finally:
            db.close()
    import psycopg

    with psycopg.connect(url) as pg:
        return pg.execute(sql.replace("?", "%s"), args).fetchone()


def _stamp(text: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# -- the store's cycle ---------------------------------------------------------------------

async def _noop(work: Any) -> Any:
    from statechart_runtime.handlers import Outcome

    return Outcome("done", output={"key": work.key})


def store_worker(url: str, path: Path, concurrency: int, done: Any) -> None:
    """One worker process: `AsyncWorker.run()` until the main process says every item is
    applied (its last items finish first: `stop` drains)."""
    job_class = job(path)

    async def main() -> None:
        from statechart_runtime.worker import AsyncWorker

        async with await open_async_store(url) as store:
            worker = AsyncWorker(store, job_class, handlers={"do_it": _noop},
                                 concurrency=concurrency, listen=False)
            running = asyncio.ensure_future(worker.run())
            while not running.done():
                if await asyncio.to_thread(done.wait, 0.2):
                    worker.stop()
                    break
            await running

    asyncio.run(main())


def drained(target: Any, args: tuple[Any, ...], processes: int, finished: Any) -> None:
    """`processes` processes running `target(*args, done)` until `finished()` (asked every
    0.1 s), then told to stop (`done` set) and joined."""
    with SPAWN.Manager() as manager:
        done = manager.Event()
        workers = [SPAWN.Process(target=target, args=(*args, done)) for _ in range(processes)]
        for process in workers:
            process.start()
        while not finished():
            if not any(p.is_alive() for p in workers):
                raise SystemExit(f"{target.__name__}: the workers died before the end")
            time.sleep(0.1)
        done.set()
        for process in workers:
            process.join(60)


def store_cycles(url: str, path: Path, shape: tuple[int, int], items: int) -> float:
    processes, concurrency = shape
    prefix = f"c{uuid.uuid4().hex[:8]}"
    waiting(url, path, prefix, items)
    like = (f"{prefix}-%",)
    drained(store_worker, (url, path, concurrency), processes, lambda: _query(
        url, "SELECT count(*) FROM work_items WHERE run_id LIKE ? AND ended_by = 'done'",
        like)[0] >= items)
    applied, last_end = _query(
        url, "SELECT count(*), max(ended_at) FROM work_items WHERE run_id "
        "LIKE ? AND ended_by = 'done'", like)
    claims, first = _query(url, "SELECT count(*), min(claimed_at) FROM work_attempts WHERE "
                           "item_key LIKE ?", like)
    if applied != items or claims != items:
        raise SystemExit(f"{items} items: {applied} applied after {claims} claims")
    return items / (_stamp(last_end) - _stamp(first))


def fire_rate(url: str, path: Path, items: int) -> float:
    """Outcomes per second applied by `fire` alone (no claim), one call at a time."""
    job_class = job(path)
    ids = waiting(url, path, f"f{uuid.uuid4().hex[:8]}", items)

    async def main() -> float:
        async with await open_async_store(url) as store:
            started = time.perf_counter()
            for run_id in ids:
                await store.fire(job_class, run_id, "done", output={"key": run_id})
            return items / (time.perf_counter() - started)

    return asyncio.run(main())


# -- DBOS's queue --------------------------------------------------------------------------

_DBOS: list[Any] = []  # DBOS registers a function once per process


def _dbos_workflow() -> Any:
    if _DBOS:
        return _DBOS[0]
    from dbos import DBOS

    @DBOS.step()
    def handle(key: str) -> dict[str, Any]:
        return {"key": key, "started": time.time()}

    @DBOS.workflow(name="work_cycle")
    def cycle(key: str) -> dict[str, Any]:
        output = handle(key)
        return {**output, "returned": time.time()}

    _DBOS.append(cycle)
    return cycle


def _dbos_config(url: str, app: str) -> dict[str, Any]:
    # An executor id per process: with one id (DBOS's default, "local"), each process
    # launched would recover the workflows the others are running.
    return {"name": app, "system_database_url": url, "dbos_system_schema": app,
            "log_level": "WARNING", "executor_id": f"bench-{os.getpid()}"}


def dbos_enqueue(url: str, app: str, queue: str, concurrency: int, items: int) -> None:
    """The queue (`worker_concurrency`, polled every DBOS_POLL s) and `items` workflows on
    it, from a process that dequeues nothing."""
    from dbos import DBOS

    DBOS(config=_dbos_config(url, app))  # type: ignore[arg-type]
    workflow = _dbos_workflow()
    DBOS.listen_queues([])
    DBOS.launch()
    try:
        on = DBOS.register_queue(queue, worker_concurrency=concurrency,
                                 polling_interval_sec=DBOS_POLL, on_conflict="always_update")
        for n in range(items):
            on.enqueue(workflow, f"{queue}-{n}")
    finally:
        DBOS.destroy()


def dbos_worker(url: str, app: str, queue: str, done: Any) -> None:
    from dbos import DBOS

    DBOS(config=_dbos_config(url, app))  # type: ignore[arg-type]
    _dbos_workflow()
    DBOS.listen_queues([queue])
    DBOS.launch()
    done.wait(600)
    DBOS.destroy()


def dbos_cycles(url: str, app: str, shape: tuple[int, int], items: int) -> float:
    from dbos import DBOSClient

    processes, concurrency = shape
    queue = f"q{uuid.uuid4().hex[:8]}"
    enqueue = SPAWN.Process(target=dbos_enqueue, args=(url, app, queue, concurrency, items))
    enqueue.start()
    enqueue.join()
    if enqueue.exitcode:
        raise SystemExit("enqueueing DBOS workflows failed")
    client = DBOSClient(system_database_url=url, dbos_system_schema=app,
                        application_name=app)
    try:
        drained(dbos_worker, (url, app, queue), processes, lambda: len(client.list_workflows(
            queue_name=queue, status="SUCCESS", load_input=False, load_output=False)) >= items)
        outputs = [w.output for w in client.list_workflows(queue_name=queue,
                                                           load_input=False)]
    finally:
        client.destroy()
    if len(outputs) != items or len({o["key"] for o in outputs}) != items:
        raise SystemExit(f"DBOS: {len(outputs)} outputs for {items} workflows")
    return items / (max(o["returned"] for o in outputs) - min(o["started"] for o in outputs))


def dbos_url(backend: str, folder: Path, base: str | None) -> str:
    if backend == "sqlite":
        path = folder / "dbos.db"
        db = sqlite3.connect(path)
        try:  # WAL, as the store's (DBOS sets no pragma; synchronous stays FULL)
            assert db.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
        finally:
            db.close()
        return f"sqlite:///{path}"
    assert base is not None
    return base


# -- the table -----------------------------------------------------------------------------

def cycle_table(urls: dict[str, str], dbos_urls: dict[str, str], path: Path, items: int,
                rounds: int, dbos: bool) -> None:
    systems = ["work"] + (["DBOS"] if dbos else [])
    header = ["fire (/s)"] + [f"{s} {n} (/s)" for s in systems for n in SHAPES]
    header += ["cycle / fire time, x1"] + ([f"work / DBOS {n}" for n in SHAPES]
                                            if dbos else [])
    print("| backend | " + " | ".join(header) + " |")
    print("| --- |" + " ---: |" * len(header))
    for backend, url in urls.items():
        app = f"bench_work_{uuid.uuid4().hex[:8]}"
        table = []
        for _ in range(rounds):
            row = {"fire": fire_rate(url, path, items)}
            for name, shape in SHAPES.items():
                row[f"work {name}"] = store_cycles(url, path, shape, items)
                if dbos:
                    row[f"DBOS {name}"] = dbos_cycles(dbos_urls[backend], app, shape, items)
            print(f"<!-- {backend} round: " + ", ".join(f"{k} {v:.0f}" for k, v in
                                                      row.items()) + " -->", flush=True)
            table.append(row)
        cells = [_median(table, "fire")] + [_median(table, f"{s} {n}") for s in systems
                                            for n in SHAPES]
        cells.append(_ratio(table, "fire", "work x1"))  # rates: a cycle's time / a fire's
        if dbos:
            cells += [_ratio(table, f"work {n}", f"DBOS {n}") for n in SHAPES]
        print(f"| {backend} | " + " | ".join(cells) + " |", flush=True)


def _median(table: list[dict[str, float]], key: str) -> str:
    return f"{statistics.median(r[key] for r in table):,.0f}"


def _ratio(table: list[dict[str, float]], top: str, bottom: str) -> str:
    """The median over the rounds of each round's ratio, and their range."""
    got = sorted(r[top] / r[bottom] for r in table)
    return f"{statistics.median(got):.2f}x ({got[0]:.2f}-{got[-1]:.2f})"


# -- reclaim after a worker's death --------------------------------------------------------

def live_worker(url: str, path: Path, poll: float, done: Any) -> None:
    job_class = job(path)

    async def main() -> None:
        from statechart_runtime.worker import AsyncWorker

        async with await open_async_store(url) as store:
            worker = AsyncWorker(store, job_class, handlers={"do_it": _noop}, poll=poll,
                                 concurrency=1, listen=False)
            running = asyncio.ensure_future(worker.run())
            await asyncio.to_thread(done.wait, 600)
            worker.stop()
            await running

    asyncio.run(main())


def reclaims(url: str, folder: Path, lease: float, poll: float, samples: int
             ) -> list[float]:
    """Seconds from a claim left to expire (a dead worker's) to the item's next claim, by a
    live worker polling every `poll` seconds, for a lease of `lease` seconds."""
    path = job_module(folder, f"{lease:g}s")
    job_class = job(path)
    gaps = []
    with SPAWN.Manager() as manager, open_store(url) as store:
        done = manager.Event()
        live = SPAWN.Process(target=live_worker, args=(url, path, poll, done))
        live.start()
        time.sleep(2.0)  # imported and polling
        while len(gaps) < samples:
            # At a random moment of the live worker's poll (else each sample would start
            # in step with the previous reclaim, so at the same point of the poll).
            time.sleep(random.uniform(0, poll))
            run_id = f"r{uuid.uuid4().hex[:8]}"
            store.create(job_class(run_id=run_id))
            store.fire(job_class, run_id, "start")
            dead = store.claim_work(job_class, owner="dead")
            if dead is None or dead.run_id != run_id:  # the live worker was first: again
                continue
            deadline = time.monotonic() + lease + poll + 5
            while time.monotonic() < deadline:
                [item] = store.work_items(run_id)
                if len(item.history) > 1:
                    break
                time.sleep(0.02)
            else:
                raise SystemExit(f"lease {lease}s, poll {poll}s: not claimed again in "
                                 f"{lease + poll + 5:g} s")
            first, second = item.history[0], item.history[1]
            assert second.claimed_at >= dead.lease_until, (second, dead)
            gaps.append((second.claimed_at - first.claimed_at).total_seconds())
        done.set()
        live.join(60)
    return gaps


def reclaim_table(urls: dict[str, str], folder: Path, pairs: list[tuple[float, float]],
                  samples: int) -> None:
    print("\n| backend | lease L (s) | poll P (s) | L + P (s) | claim to next claim: "
          "min / median / max (s) | max - L (s) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for backend, url in urls.items():
        for lease, poll in pairs:
            gaps = reclaims(url, folder, lease, poll, samples)
            print(f"| {backend} | {lease:g} | {poll:g} | {lease + poll:g} | "
                  f"{min(gaps):.3f} / {statistics.median(gaps):.3f} / {max(gaps):.3f} | "
                  f"{max(gaps) - lease:.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--parts", nargs="+", default=["cycle", "reclaim"])
    parser.add_argument("--no-dbos", action="store_true", help="leave DBOS out")
    parser.add_argument("--reclaim", nargs="+", default=["1:0.25", "2:1"],
                        help="LEASE:POLL pairs, seconds")
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    dbos = not args.no_dbos
    if dbos and "cycle" in args.parts:
        try:
            import dbos as _  # noqa: F401
        except ImportError:
            raise SystemExit(MISSING_DBOS) from None
    server = None
    base = os.environ.get(URL_VARIABLE)
    if "postgres" in args.backends and not base:
        server = Server.start(fsync=True)
        base = server.url
    folder = Path(tempfile.mkdtemp(prefix="bench-work-"))
    try:
        urls, dbos_urls = {}, {}
        for backend in args.backends:
            if backend == "sqlite":
                urls[backend] = f"sqlite:///{folder}/work.db"
            else:
                import psycopg

                assert base is not None
                schema = f"bench_work_{uuid.uuid4().hex[:8]}"
                with psycopg.connect(base, autocommit=True) as db:
                    db.execute(f"CREATE SCHEMA {schema}")
                separator = "&" if "?" in base else "?"
                urls[backend] = f"{base}{separator}options=-csearch_path%3D{schema}"
            dbos_urls[backend] = dbos_url(backend, folder, base)
        for url in urls.values():
            open_store(url).close()  # the schema, before processes race to make it
        path = job_module(folder, "30s")
        if "cycle" in args.parts:
            cycle_table(urls, dbos_urls, path, args.items, args.rounds, dbos)
        if "reclaim" in args.parts:
            pairs = [tuple(float(x) for x in pair.split(":")) for pair in args.reclaim]
            reclaim_table(urls, folder, pairs, args.samples)  # type: ignore[arg-type]
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
