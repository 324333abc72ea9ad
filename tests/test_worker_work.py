"""The asynchronous worker runs work items (docs/work.md), on both backends: a handler's
outcome applied once per item, a failure retried after its backoff then the error event, a
handler past its timeout stopped and recorded, items of handlers it lacks left pending, a
shutdown that gives running items back, and `statechart runs work --handlers`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from store_support import Backend, job_class, job_text

from statechart_runtime.handlers import Outcome, WorkContext, WorkError
from statechart_runtime.store import open_async_store, open_store
from statechart_runtime.worker import AsyncWorker

ROOT = Path(__file__).resolve().parents[1]
STATECHART = [sys.executable, "-m", "statechart"]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return job_class(tmp_path_factory.mktemp("job"))


@pytest.fixture(scope="module")
def quick_job(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    return job_class(tmp_path_factory.mktemp("quick"), timeout="300ms", backoff="50ms")


@pytest.fixture(scope="module")
def timed_job(tmp_path_factory: pytest.TempPathFactory) -> type[Any]:
    # Its timeout leaves the worker 100 ms between stopping a handler and its lease's end
    # to record the failure: enough on a loaded machine (300 ms leaves 15 ms).
    return job_class(tmp_path_factory.mktemp("timed"), timeout="2s", backoff="1m")


def seeded(job: type[Any], url: str, runs: int) -> None:
    with open_store(url) as store:
        for number in range(runs):
            store.create(job(run_id=f"r{number}"))
            store.fire(job, f"r{number}", "start")


def test_every_item_runs_once_and_its_outcome_is_applied(job: type[Any],
                                                         backend: Backend) -> None:
    seeded(job, backend.url, 6)
    calls: Counter[str] = Counter()

    async def do_it(work: WorkContext) -> Outcome:
        calls[work.key] += 1
        await asyncio.sleep(0.01)
        return Outcome("done", output={"run": work.run_id, "attempt": work.attempt})

    async def main() -> AsyncWorker:
        async with await open_async_store(backend.url) as store:
            first = AsyncWorker(store, job, handlers={"do_it": do_it}, concurrency=3)
            second = AsyncWorker(store, job, handlers={"do_it": do_it}, concurrency=3)
            await asyncio.gather(first.run_once(), second.run_once())
            assert first.applied + second.applied == 6
            return first

    asyncio.run(main())
    assert sorted(calls) == [f"r{n}/working/0" for n in range(6)]
    assert set(calls.values()) == {1}
    with open_store(backend.url) as store:
        for number in range(6):
            run = store.load(job, f"r{number}")
            assert run.status.value == "finished"
            assert run.record.output == {"run": f"r{number}", "attempt": 1}
            [item] = store.work_items(f"r{number}")
            assert (item.status, item.ended_by, item.attempts) == ("ended", "done", 1)


def test_a_failing_handler_is_retried_then_the_error_event_fires(
        quick_job: type[Any], backend: Backend) -> None:
    seeded(quick_job, backend.url, 1)
    attempts: list[int] = []

    def do_it(work: WorkContext) -> Outcome:  # a plain function: run in a thread
        attempts.append(work.attempt)
        raise WorkError("the API answered 503", why="the API is down")

    async def main() -> None:
        async with await open_async_store(backend.url) as store:
            worker = AsyncWorker(store, quick_job, handlers={"do_it": do_it}, poll=0.02)
            task = asyncio.ensure_future(worker.run())
            for _ in range(200):
                await asyncio.sleep(0.02)
                if (await store.head(quick_job, "r0")).run.status.value == "failed":
                    break
            worker.stop()
            await task
            assert worker.work_failed == 2

    asyncio.run(main())
    assert attempts == [1, 2]
    with open_store(backend.url) as store:
        run = store.load(quick_job, "r0")
        assert (run.status.value, run.record.why) == ("failed", "the API is down")
        [item] = store.work_items("r0")
        assert [a.error for a in item.history] == ["the API answered 503"] * 2
        assert item.ended_by == "broke"


def test_a_handler_past_its_timeout_is_stopped_and_recorded(
        timed_job: type[Any], backend: Backend) -> None:
    seeded(timed_job, backend.url, 1)
    stopped: list[bool] = []

    async def do_it(work: WorkContext) -> Outcome:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append(True)
            raise
        return Outcome("done", output=1)

    # run_once runs the items ready now: the one attempt (the retry waits its backoff).
    async def once() -> AsyncWorker:
        async with await open_async_store(backend.url) as store:
            worker = AsyncWorker(store, timed_job, handlers={"do_it": do_it})
            await worker.run_once()
            return worker

    worker = asyncio.run(once())
    assert stopped == [True] and worker.work_failed == 1
    with open_store(backend.url) as store:
        [item] = store.work_items("r0")
        assert item.status == "pending" and item.failures == 1
        assert "did not return within the work's timeout (0:00:02)" in item.last_error


def test_items_of_a_handler_the_worker_lacks_stay_pending(job: type[Any],
                                                          backend: Backend) -> None:
    seeded(job, backend.url, 1)

    async def main() -> int:
        async with await open_async_store(backend.url) as store:
            worker = AsyncWorker(store, job, handlers={"something_else": lambda w: "done"})
            return await worker.run_once()

    assert asyncio.run(main()) == 0
    with open_store(backend.url) as store:
        [item] = store.work_items("r0")
        assert (item.status, item.attempts) == ("pending", 0)


def test_a_shutdown_gives_running_items_back(job: type[Any], backend: Backend) -> None:
    seeded(job, backend.url, 1)
    started = asyncio.Event()

    async def do_it(work: WorkContext) -> Outcome:
        started.set()
        await asyncio.sleep(30)
        return Outcome("done", output=1)

    async def main() -> AsyncWorker:
        async with await open_async_store(backend.url) as store:
            worker = AsyncWorker(store, job, handlers={"do_it": do_it}, shutdown_grace=0.1)
            task = asyncio.ensure_future(worker.run())
            await asyncio.wait_for(started.wait(), 10)
            worker.stop()
            await task
            return worker

    asyncio.run(main())
    with open_store(backend.url) as store:
        [item] = store.work_items("r0")
        assert (item.status, item.failures) == ("pending", 0)
        assert [a.result for a in item.history] == ["released"]
        assert store.load(job, "r0").status.value == "working"


def test_runs_work_with_handlers(tmp_path: Path, backend: Backend) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text(job_text())
    (tmp_path / "job_handlers.py").write_text(textwrap.dedent("""\
        from statechart_runtime.handlers import Outcome

        async def do_it(work):
            return Outcome("done", output={"key": work.key})

        HANDLERS = {"do_it": do_it}
        """))
    seeded(job_class(tmp_path), backend.url, 2)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}"
           f"{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [*STATECHART, "runs", "work", "--store", backend.url, "--spec", str(spec),
         "--handlers", "job_handlers:HANDLERS", "--once"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "running the work items of `job` runs" in done.stderr
    assert "work item r0/working/0 (attempt 1): done applied" in done.stderr
    assert "2 outcomes applied, 0 failed, 0 leases lost" in done.stderr
    with open_store(backend.url) as store:
        assert store.load(job_class(tmp_path), "r1").record.output == {
            "key": "r1/working/0"}
    bad = subprocess.run(
        [*STATECHART, "runs", "work", "--store", backend.url, "--spec", str(spec),
         "--handlers", "job_handlers:NOPE", "--once"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "'NOPE' is missing, not a mapping from handler names to functions" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_new_item_wakes_a_sleeping_postgres_worker_before_its_poll(
        job: type[Any], pg_backend: Backend) -> None:
    # The step that enqueues an item notifies at its commit: a worker asleep for its poll
    # (60 s here) claims the item at once.
    with open_store(pg_backend.url) as store:
        store.create(job(run_id="late"))

    def enqueue() -> None:
        with open_store(pg_backend.url) as store:
            store.fire(job, "late", "start")

    async def main() -> float:
        async with await open_async_store(pg_backend.url) as store:
            claimed = asyncio.Event()

            async def do_it(work: WorkContext) -> Outcome:
                claimed.set()
                return Outcome("done", output=1)

            worker = AsyncWorker(store, job, handlers={"do_it": do_it}, poll=60)
            running = asyncio.create_task(worker.run())
            await asyncio.sleep(1.0)  # it found nothing and sleeps
            loop = asyncio.get_running_loop()
            enqueued = loop.time()
            await asyncio.to_thread(enqueue)
            await asyncio.wait_for(claimed.wait(), 30)
            waited = loop.time() - enqueued
            worker.stop()
            await running
            return waited

    assert asyncio.run(main()) < 10
    with open_store(pg_backend.url) as store:
        assert store.load(job, "late").status.value == "finished"
