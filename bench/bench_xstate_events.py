"""Benchmark the generated agent run's in-memory events against XState 5 in node.

    python bench/bench_xstate_events.py [--quick] [--rounds 41] [--runs-per-round 20]
                                        [--steady-events 400] [--tool-calls 3]

The same graph: bench/agent_run_v1.yaml, generated into a Python module (the plain class:
no actions, so it steps without a python-statemachine machine) and exported with the
project's own XState export (`statechart render -f xstate`, statechart.xstate.export).
The same path: bench_runtime's `agent_path` (triage, start, tool calls, an interruption
approved, a retry, complete). XState's guard `can_retry` answers true, as the generated
class's default does; the active states after every event are checked equal on both sides
before anything is timed.

Two measures, as in bench_runtime section 1: (a) created and driven: `--runs-per-round` new
runs (XState: `createActor(machine).start()`) each driven along the path; (b) steady: one
run looping call_tool/tool_result. XState runs in one node process (bench/xstate/events.mjs,
`npm ci` in bench/xstate) that answers one round per command, so its rounds interleave with
the generated class's (ABBA order) in the same run; the ratio reported is generated events/s
over XState's, the median over rounds (issue 31's goal: at least 0.5x).

The generated run keeps its record (the `set:` fields and the step history); XState's
snapshot carries no context here (the export puts `set:` in `meta`), so XState does less.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_runtime import (  # noqa: E402
    ROOT,
    Generated,
    agent_path,
    check_same_machine,
    drive,
    paired_rounds,
)
from benchlib import AGENT_RUN_V1, agent_run_v1_module  # noqa: E402

from statechart.linter import check_source  # noqa: E402
from statechart.xstate.export import machine_config  # noqa: E402

XSTATE_DIR = HERE / "xstate"
EVENTS_SCRIPT = XSTATE_DIR / "events.mjs"


class XStateProcess:
    """One node process holding the XState machine; each call times one round there."""

    def __init__(self, machine: dict[str, Any], guards: list[str], path: list[str],
                 to_steady: list[str], steady: list[str], runs_per_round: int) -> None:
        node = shutil.which("node")
        if node is None or not (XSTATE_DIR / "node_modules" / "xstate").is_dir():
            raise SystemExit("this bench needs node and XState: run `npm ci` in bench/xstate")
        self.proc = subprocess.Popen([node, str(EVENTS_SCRIPT)], cwd=XSTATE_DIR,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.ask(json.dumps({"machine": machine, "guards": guards, "path": path,
                                     "toSteady": to_steady, "steady": steady,
                                     "runsPerRound": runs_per_round}))
        assert ready == "ready", ready

    def ask(self, line: str) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise SystemExit(f"node ({EVENTS_SCRIPT.name}) ended: see its error above")
        return json.loads(answer)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def guards_of(config: dict[str, Any]) -> list[str]:
    """Every named guard in an XState config."""
    found: set[str] = set()

    def walk(node: dict[str, Any]) -> None:
        for transitions in node.get("on", {}).values():
            for t in transitions:
                if isinstance(t.get("guard"), str):
                    found.add(t["guard"])
        for child in node.get("states", {}).values():
            walk(child)

    walk(config)
    return sorted(found)


def check_same_path(gen: Generated, path: list[tuple[str, dict[str, str]]],
                    xstate: XStateProcess) -> None:
    """Both sides must walk `path` through the same active states, or the ratio means
    nothing."""
    theirs = xstate.ask("trace")
    run = gen.new_run(0)
    for (event, kwargs), active in zip(gen.prepare(path), theirs, strict=True):
        getattr(run, event)(**kwargs)
        ours = sorted(getattr(s, "value", s) for s in run.configuration)
        if ours != active:
            raise SystemExit(f"after {event}: generated {ours}, XState {active}")


def median_summary(gen_times: list[float], x_times: list[float]) -> dict[str, Any]:
    ratios = sorted(x / g for g, x in zip(gen_times, x_times, strict=True))
    n = len(ratios)
    return {"generated": 1 / sorted(gen_times)[n // 2], "xstate": 1 / sorted(x_times)[n // 2],
            "ratio": ratios[n // 2], "q1": ratios[n // 4], "q3": ratios[(3 * n) // 4],
            "rounds": n}


def bench(gen: Generated, path: list[tuple[str, dict[str, str]]], xstate: XStateProcess,
          rounds: int, runs_per_round: int, steady_events: int) -> dict[str, dict[str, Any]]:
    calls = gen.prepare(path)
    per_round = runs_per_round * len(path)
    loop = gen.prepare([("call_tool", {}), ("tool_result", {})] * (steady_events // 2))
    to_loop = gen.prepare(path[:2])

    def created_generated() -> float:
        start = time.perf_counter()
        for i in range(runs_per_round):
            drive(gen.new_run(i), calls)
        return (time.perf_counter() - start) / per_round

    def steady_generated() -> float:
        run = drive(gen.new_run(0), to_loop)
        start = time.perf_counter()
        drive(run, loop)
        return (time.perf_counter() - start) / len(loop)

    def created_xstate() -> float:
        return float(xstate.ask("created"))

    def steady_xstate() -> float:
        return float(xstate.ask("steady"))

    for _ in range(3):  # warm-up: node's JIT and both sides' first-call caches
        for fn in (created_generated, created_xstate, steady_generated, steady_xstate):
            fn()
    out = {}
    for name, a, b in (("created", created_generated, created_xstate),
                       ("steady", steady_generated, steady_xstate)):
        gc.collect()
        out[name] = median_summary(*paired_rounds(a, b, rounds))
        print(f"{name}: {out[name]}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (41)")
    parser.add_argument("--runs-per-round", type=int, help="created: runs a round (20)")
    parser.add_argument("--steady-events", type=int, help="steady: events a round (400)")
    parser.add_argument("--tool-calls", type=int, default=3, help="tool calls in the path")
    args = parser.parse_args(argv)
    defaults = ({"rounds": 5, "runs_per_round": 5, "steady_events": 100} if args.quick
                else {"rounds": 41, "runs_per_round": 20, "steady_events": 400})
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)

    result = check_source(str(AGENT_RUN_V1), AGENT_RUN_V1.read_bytes())
    assert result.spec is not None and not result.errors, result.errors
    config = machine_config(result.spec)
    gen = Generated(agent_run_v1_module(Path(tempfile.mkdtemp())))
    path = agent_path(args.tool_calls)
    check_same_machine(gen, path)
    events = [e for e, _ in path]
    steady = ["call_tool", "tool_result"] * (args.steady_events // 2)
    xstate = XStateProcess(config, guards_of(config), events, events[:2], steady,
                           args.runs_per_round)
    try:
        check_same_path(gen, path, xstate)
        res = bench(gen, path, xstate, args.rounds, args.runs_per_round, args.steady_events)
    finally:
        xstate.close()
    print()
    print(f"`python bench/bench_xstate_events.py` ({args.rounds} rounds; "
          f"{len(path)} events a path; {ROOT.name}):")
    print()
    print("| | generated events/s | XState 5 events/s | generated / XState (median [q1, q3]) |")
    print("|---|---:|---:|---:|")
    for name, label in (("created", "created and driven"), ("steady", "steady")):
        r = res[name]
        print(f"| {label} | {r['generated']:,.0f} | {r['xstate']:,.0f} | "
              f"{r['ratio']:.2f}x [{r['q1']:.2f}, {r['q3']:.2f}] |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
