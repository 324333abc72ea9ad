"""The asynchronous store, for `bench_store.py --parts async` (issue 26): one process, one
event loop, the same database and durability as the synchronous store beside it.

- `per_call`: `await store.fire(...)` one call at a time against the synchronous
  `store.fire(...)` on runs of their own, interleaved in rounds (the ratio is what counts);
- `concurrent`: `runs` runs fired at once from one loop (`asyncio.gather`), a pool of
  `pool_size` connections: events per second, rounds interleaved between pool sizes;
- `langgraph_async`: LangGraph's `ainvoke` of a one-node graph with its
  `AsyncSqliteSaver` / `AsyncPostgresSaver` (bench/peers.py's graph), one at a time.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from statechart_runtime.store import open_async_store, open_store

LOOP = ("call_tool", "tool_result")


def per_call(ar: Any, make_run: Callable[[], Any], url: str, events: int,
             rounds: int = 5) -> tuple[float, float]:
    """The median ms of one synchronous `fire` and of one awaited asynchronous `fire`,
    `events` of each per round, on the same 8 runs, the two taken in turn round after
    round (the synchronous store refuses a running loop: its rounds run outside the loop,
    each asynchronous round in a loop of its own, its store opened before the timing)."""
    sync_store = open_store(url)
    sync_runs = async_runs = [make_run() for _ in range(8)]
    for run in sync_runs:
        sync_store.create(run)
    position = {r.record.runId: len(r.record.history) for r in sync_runs}
    sync_times: list[float] = []
    async_times: list[float] = []

    async def async_round() -> None:
        async with open_async_store(url, pool_size=1) as store:
            for n in range(events):
                run_id = async_runs[n % 8].record.runId
                started = time.perf_counter()
                await store.fire(ar.AgentRun, run_id, LOOP[position[run_id] % 2])
                async_times.append(time.perf_counter() - started)
                position[run_id] += 1

    for _ in range(rounds):
        for n in range(events):
            run_id = sync_runs[n % 8].record.runId
            started = time.perf_counter()
            sync_store.fire(ar.AgentRun, run_id, LOOP[position[run_id] % 2])
            sync_times.append(time.perf_counter() - started)
            position[run_id] += 1
        asyncio.run(async_round())
    sync_store.close()
    return statistics.median(sync_times) * 1000, statistics.median(async_times) * 1000


def concurrent(ar: Any, make_run: Callable[[], Any], url: str, runs: int,
               pool_sizes: tuple[int, ...], rounds: int = 3) -> dict[int, float]:
    """Events per second of `runs` fires at once from one loop (one event to each run),
    for each pool size, rounds interleaved between the sizes."""
    got: dict[int, list[float]] = {size: [] for size in pool_sizes}

    async def main() -> None:
        stores = {size: await open_async_store(url, pool_size=size) for size in pool_sizes}
        try:
            ids = {}
            for size, store in stores.items():
                made = [make_run() for _ in range(runs)]
                await asyncio.gather(*(store.create(run) for run in made))
                ids[size] = [(r.record.runId, len(r.record.history)) for r in made]
            for n in range(rounds):
                for size, store in stores.items():
                    started = time.perf_counter()
                    await asyncio.gather(*(
                        store.fire(ar.AgentRun, run_id, LOOP[(steps + n) % 2])
                        for run_id, steps in ids[size]))
                    got[size].append(runs / (time.perf_counter() - started))
        finally:
            for store in stores.values():
                await store.close()

    asyncio.run(main())
    return {size: statistics.median(values) for size, values in got.items()}


def langgraph_async(url: str, fields: dict[str, Any], events: int) -> float:
    """The p50 (ms) of one LangGraph `ainvoke` with its async checkpointer on `url` (a
    SQLite file path, or a PostgreSQL URL)."""
    import peers

    async def invokes(graph: Any) -> float:
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        await graph.ainvoke(fields, config)
        latencies = []
        for n in range(events):
            started = time.perf_counter()
            await graph.ainvoke({"event": LOOP[n % 2]}, config)
            latencies.append(time.perf_counter() - started)
        return statistics.median(latencies) * 1000

    async def main() -> float:
        if url.startswith("postgres"):
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            async with AsyncPostgresSaver.from_conn_string(url) as saver:
                await saver.setup()
                return await invokes(peers.graph(fields, saver))
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with aiosqlite.connect(url) as conn:
            await conn.execute("PRAGMA journal_mode = WAL")
            await conn.execute("PRAGMA synchronous = FULL")
            return await invokes(peers.graph(fields, AsyncSqliteSaver(conn)))

    return asyncio.run(main())
