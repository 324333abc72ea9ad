"""Time `store.fire` (load, send, save in one SQLite transaction) on agent runs whose history
is already `--steps` long.

    python bench/bench_store.py [--steps 10 1000] [--fires 41]

For each size: one run is driven to that many steps (call_tool / tool_result in `running`),
created in a fresh SQLite store in a temporary folder, then sent `--fires` more events one at
a time through `store.fire`; the median of each is reported, with `store.load` alone and a
`Record.from_json` alone for comparison. A store that loads and saves whole records replays
the whole history on every event (docs/runs.md, "Cost"): fire grows with the run.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]


def agent_run_module() -> object:
    spec = importlib.util.spec_from_file_location("agent_run", ROOT / "generated" / "agent_run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_run"] = module
    spec.loader.exec_module(module)
    return module


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--fires", type=int, default=41)
    args = parser.parse_args()
    ar: object = agent_run_module()
    AgentRun = ar.AgentRun  # type: ignore[attr-defined]
    print("| steps of history | fire (ms) | load (ms) | from_json (ms) |")
    print("| ---: | ---: | ---: | ---: |")
    for steps in args.steps:
        run = AgentRun()
        run.triage()
        run.start()
        while len(run.record.history) < steps:
            run.call_tool() if len(run.record.history) % 2 == 0 else run.tool_result()
        with tempfile.TemporaryDirectory() as folder:
            store = open_store(Path(folder) / "runs.db")
            store.create(run)
            run_id = run.record.runId
            events = ["call_tool", "tool_result"]
            if len(run.record.history) % 2:
                events.reverse()
            fire, load, parse = [], [], []
            for n in range(args.fires):
                started = time.perf_counter()
                store.fire(AgentRun, run_id, events[n % 2])
                fire.append(time.perf_counter() - started)
                started = time.perf_counter()
                loaded = store.load(AgentRun, run_id)
                load.append(time.perf_counter() - started)
                text = loaded.record.to_json()
                started = time.perf_counter()
                AgentRun._sc_record.from_json(text)
                parse.append(time.perf_counter() - started)
            store.close()
        print(f"| {steps} | {median_ms(fire):.2f} | {median_ms(load):.2f} | "
              f"{median_ms(parse):.2f} |")


if __name__ == "__main__":
    main()
