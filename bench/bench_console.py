"""The run console (statechart_runtime.console) on SQLite and PostgreSQL: the server time of
`GET /api/runs` over 100,000 stored runs (one status, first page) against the two store
calls it makes; the run page of a run with 10,000 steps (first view and later ones); an
answer over HTTP on loopback (POST to committed response) against the store's own `fire`,
interleaved.

    python bench/bench_console.py [--runs 100000] [--steps 10000] [--answers 200]
                                  [--backends sqlite postgres]

- **list**: `--runs` runs written in bulk as bench_store.py writes them (90% completed);
  `GET /api/runs?spec=agent_run&status=running` and `...&status=completed` through the app
  in this process (httpx's ASGI transport: server time, no socket), p50 of 30, against
  the same two store calls (`runs_page`, `status_counts` of the spec's statuses up to
  1,000 each) made directly.
- **run page**: `GET /runs/{id}` (HTML: head, the newest 50 steps, each with the
  configuration after it, the state tree, the answer forms) of a run with `--steps` steps:
  its first view (which walks the whole history once for the configurations; after another
  run's page, so that the templates are compiled already) and the p50 of later ones.
- **answer**: `POST /api/runs/{id}/events/{event}` (JSON, an Idempotency-Key, no auth) to
  uvicorn on 127.0.0.1 in a process of its own (httpx on loopback), through the app in
  this process (server time), and through an app given a synchronous store object (its
  calls in a worker thread: the console before the asynchronous store), against
  `store.fire(...)` with a key (the synchronous store's, and `await` the asynchronous
  store's), each on a run of its own of the same store, in turn; p50 of each, and in
  brackets the p50 of each answer's difference to the synchronous `fire` measured next to
  it (the load of the machine moves both alike); and the mean CPU time of this process per
  in-process answer (client, app and store) and per synchronous `fire`, which the
  machine's load does not move.
- `--parts`: which of list, page, answer to run (default: all).

PostgreSQL: the server named by $STATECHART_TEST_POSTGRES_URL, else a throwaway one.
Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import httpx  # noqa: E402
import uvicorn  # noqa: E402
from bench_store import agent_run_module, bulk_runs, running_run, schema_url  # noqa: E402
from pg_server import URL_VARIABLE, Server  # noqa: E402

from statechart_runtime.console import app  # noqa: E402
from statechart_runtime.console.core import COUNT_CAP  # noqa: E402
from statechart_runtime.run import spec_of  # noqa: E402
from statechart_runtime.store import (  # noqa: E402
    BlockingInEventLoop,
    RunFilter,
    open_async_store,
    open_store,
)

LOOP = ("call_tool", "tool_result")


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def list_part(url: str, runs: int, repeats: int = 30) -> dict[str, float]:
    ar = agent_run_module()
    store = open_store(url)
    bulk_runs(ar, url, runs)
    asgi = app(url, [ar.AgentRun])
    statuses = sorted(spec_of(ar.AgentRun).statuses_by_name)
    out: dict[str, float] = {}

    async def measure() -> None:
        transport = httpx.ASGITransport(app=asgi, client=("127.0.0.1", 5000))
        async with asgi.router.lifespan_context(asgi), \
                httpx.AsyncClient(transport=transport, base_url="http://console") as web:
            for status in ("running", "completed"):
                path = f"/api/runs?spec=agent_run&status={status}"
                assert len((await web.get(path)).json()["runs"]) == 50
                samples = []
                for _ in range(repeats):
                    started = time.perf_counter()
                    answer = await web.get(path)
                    samples.append(time.perf_counter() - started)
                    assert answer.status_code == 200
                out[f"api {status}"] = p50(samples)
                direct = []
                conditions = RunFilter(spec="agent_run", status=status)
                for _ in range(repeats):
                    started = time.perf_counter()
                    store.runs_page(conditions, limit=50)
                    store.status_counts(conditions, statuses=statuses, cap=COUNT_CAP)
                    direct.append(time.perf_counter() - started)
                out[f"store {status}"] = p50(direct)

    asyncio.run(measure())
    store.close()
    return out


def run_page_part(url: str, steps: int, repeats: int = 20) -> tuple[float, float]:
    ar = agent_run_module()
    store = open_store(url)
    run = running_run(ar, steps)
    store.create(run)
    run_id = run.record.runId
    other = running_run(ar)
    store.create(other)
    asgi = app(url, [ar.AgentRun])
    result: list[float] = []

    async def measure() -> None:
        transport = httpx.ASGITransport(app=asgi, client=("127.0.0.1", 5000))
        async with asgi.router.lifespan_context(asgi), \
                httpx.AsyncClient(transport=transport, base_url="http://console") as web:
            # Another run's page first: the templates are compiled once per process.
            assert (await web.get(f"/runs/{other.record.runId}")).status_code == 200
            started = time.perf_counter()
            first = await web.get(f"/runs/{run_id}")
            result.append(time.perf_counter() - started)
            assert first.status_code == 200 and f"{steps} steps" in first.text
            samples = []
            for _ in range(repeats):
                started = time.perf_counter()
                await web.get(f"/runs/{run_id}")
                samples.append(time.perf_counter() - started)
            result.append(statistics.median(samples))

    asyncio.run(measure())
    store.close()
    return result[0] * 1000, result[1] * 1000


def answer_part(url: str, answers: int) -> tuple[float, ...]:
    """p50 of a POST answer over loopback HTTP, of the same through the app in this process
    (server time), and of the store's own `fire`, interleaved, each on a run of its own."""
    ar = agent_run_module()
    store = open_store(url)
    runs = [running_run(ar) for _ in range(5)]
    for run in runs:
        store.create(run)
    http_id, asgi_id, thread_id, direct_id, awaited_id = (run.record.runId for run in runs)
    threaded_store = open_store(url)  # the console over a store object: calls in a thread
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The server in a process of its own, as deployed (in this process its threads and the
    # client's would take turns on the GIL).
    server = multiprocessing.get_context("fork").Process(
        target=_serve, args=(url, ar.AgentRun, port), daemon=True)
    server.start()
    over_http: list[float] = []
    in_process: list[float] = []
    in_thread: list[float] = []
    awaited: list[float] = []
    direct: list[float] = []
    cpu_answer: list[float] = []
    cpu_fire: list[float] = []

    async def measure() -> None:
        on_async = app(url, [ar.AgentRun])
        on_thread = app(threaded_store, [ar.AgentRun])
        transport = httpx.ASGITransport(app=on_async, client=("127.0.0.1", 1))
        through = httpx.ASGITransport(app=on_thread, client=("127.0.0.1", 1))
        async with on_async.router.lifespan_context(on_async), \
                httpx.AsyncClient(transport=transport, base_url="http://console") as local, \
                httpx.AsyncClient(transport=through, base_url="http://console") as threaded, \
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as web, \
                open_async_store(url) as async_store:
            deadline = time.monotonic() + 30
            while True:  # started, connection and pool warm
                try:
                    await web.get("/api/runs")
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "the console did not start"
                    await asyncio.sleep(0.05)
            await local.get("/api/runs")
            await threaded.get("/api/runs")
            for n in range(answers):
                event = LOOP[n % 2]
                for client, run_id, samples in ((web, http_id, over_http),
                                                (local, asgi_id, in_process),
                                                (threaded, thread_id, in_thread)):
                    started, cpu = time.perf_counter(), time.process_time()
                    done = await client.post(f"/api/runs/{run_id}/events/{event}", json={},
                                             headers={"Idempotency-Key": uuid.uuid4().hex})
                    samples.append(time.perf_counter() - started)
                    if client is local:  # this process's CPU: client, app and store
                        cpu_answer.append(time.process_time() - cpu)
                    assert done.status_code == 200, done.text
                started, cpu = time.perf_counter(), time.process_time()
                store.fire(ar.AgentRun, direct_id, event, idempotency_key=uuid.uuid4().hex)
                direct.append(time.perf_counter() - started)
                cpu_fire.append(time.process_time() - cpu)
                started = time.perf_counter()
                await async_store.fire(ar.AgentRun, awaited_id, event,
                                       idempotency_key=uuid.uuid4().hex)
                awaited.append(time.perf_counter() - started)

    try:
        asyncio.run(measure())
    finally:
        server.terminate()
        server.join(10)
        threaded_store.close()
        store.close()
    # Each answer against the fire next to it: the machine's load moves both alike.
    return (p50(over_http), p50(in_process), p50(direct),
            p50([h - d for h, d in zip(over_http, direct, strict=True)]),
            p50([a - d for a, d in zip(in_process, direct, strict=True)]),
            statistics.mean(cpu_answer) * 1000, statistics.mean(cpu_fire) * 1000,
            p50(in_thread), p50([t - d for t, d in zip(in_thread, direct, strict=True)]),
            p50(awaited))


def _serve(url: str, run_class: type[Any], port: int) -> None:
    uvicorn.run(app(url, [run_class]), host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--parts", nargs="+", default=["list", "page", "answer"],
                        choices=["list", "page", "answer"])
    args = parser.parse_args()
    # The baseline `store.fire` is the synchronous store's, called in the loop on purpose.
    warnings.simplefilter("ignore", BlockingInEventLoop)
    folder = tempfile.mkdtemp(prefix="bench-console-")
    server = None
    try:
        urls: dict[str, Any] = {}
        for backend in args.backends:
            if backend == "sqlite":
                urls[backend] = lambda name: f"sqlite:///{folder}/{name}.db"
            else:
                base = os.environ.get(URL_VARIABLE)
                if not base:
                    server = Server.start(fsync=True)
                    base = server.url
                urls[backend] = schema_url(base)
        print(f"\n| backend | GET /api/runs status=running (ms) | store calls (ms) | "
              f"status=completed (ms) | store calls (ms) | run page, {args.steps:,} steps: "
              "first / later (ms) | POST over loopback (ms) | POST, server time (ms) | "
              "POST, server time, store object in a thread (ms) | "
              "store.fire / await async store.fire (ms) | CPU: answer / fire (ms) |")
        print("| --- |" + " ---: |" * 10)
        for backend, url in urls.items():
            cells = [backend]
            if "list" in args.parts:
                listed = list_part(url("list"), args.runs)
                cells += [f"{listed[name]:.1f}" for name in (
                    "api running", "store running", "api completed", "store completed")]
            else:
                cells += ["-"] * 4
            if "page" in args.parts:
                first, later = run_page_part(url("page"), args.steps)
                cells.append(f"{first:.0f} / {later:.1f}")
            else:
                cells.append("-")
            if "answer" in args.parts:
                (posted, served, fired, posted_more, served_more, cpu_answer, cpu_fire,
                 threaded, threaded_more, fired_async) = answer_part(url("answer"), args.answers)
                cells += [f"{posted:.2f} ({posted_more:+.2f})",
                          f"{served:.2f} ({served_more:+.2f})",
                          f"{threaded:.2f} ({threaded_more:+.2f})",
                          f"{fired:.2f} / {fired_async:.2f}",
                          f"{cpu_answer:.2f} / {cpu_fire:.2f}"]
            else:
                cells += ["-"] * 5
            print("| " + " | ".join(cells) + " |", flush=True)
    finally:
        if server is not None:
            server.stop()
        for path in Path(folder).glob("*"):
            path.unlink()
        os.rmdir(folder)


if __name__ == "__main__":
    main()
