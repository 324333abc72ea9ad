"""One worker process of the work-item chaos test (tests/test_work_chaos.py): an AsyncWorker
over the asynchronous store that runs the job spec's `do_it` items. Each handler execution
appends one line to the log file (`key attempt owner`) before it returns its outcome, so
the test counts executions against what the store applied.

    python tests/work_chaos_worker.py URL MODULE_PATH LOG OWNER
"""

from __future__ import annotations

import asyncio
import os
import random
import sys

from store_support import import_path

from statechart_runtime.handlers import Outcome, WorkContext
from statechart_runtime.store import open_async_store
from statechart_runtime.worker import AsyncWorker


async def main(url: str, module_path: str, log_path: str, owner: str) -> None:
    job = import_path(__import__("pathlib").Path(module_path), "chaos_job").Job
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    async def do_it(work: WorkContext) -> Outcome:
        # O_APPEND: each line whole, whatever the other processes write meanwhile.
        os.write(log, f"{work.key} {work.attempt} {owner}\n".encode())
        await asyncio.sleep(random.uniform(0.1, 0.5))
        return Outcome("done", output={"attempt": work.attempt, "owner": owner})

    async with await open_async_store(url, timeout=5.0) as store:
        worker = AsyncWorker(store, job, handlers={"do_it": do_it}, concurrency=2,
                             poll=0.05, owner=owner, max_sleep=0.5, shutdown_grace=1.0)
        async with worker.stopped_by_signals():
            await worker.run()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
