"""Benchmark `statechart paths --cover transitions` against XState's path generators.

    python bench/bench_paths.py [--sizes 50,500] [--simple-timeout 30] [--markdown FILE]

For the agent run (specs/agent_run.yaml) and bench/genspec.py specs of 50 and 500 atomic
states (flat, and nested in groups), side by side on this machine:

- `paths`: `statechart_runtime.testing.paths` on the spec's tables (`codegen.spec_tables`,
  as the command builds them; not timed);
- `statechart paths` command: the whole command (`python -m statechart paths SPEC`, start-up,
  check and output included) in a process of its own, its CPU seconds from the children's
  rusage; run twice per round: with bytecode caches (as users run it) and with
  `PYTHONDONTWRITEBYTECODE=1` and no caches (every module compiled at start; first, then
  once untimed to write the caches again: until 2026-12-06 the run with caches followed
  the one that removed them, and compiled every module in all rounds but the first), and
  its ratio to `getShortestPaths`' CPU seconds (the issue-31 goal: under 0.6 s, at most 2x); with
  `--baseline TREE` (a directory holding another version's `compiler/` and `runtime/`, e.g.
  `git archive main compiler runtime | tar -x -C TREE`), the same command with that tree
  first on `PYTHONPATH`, in the same rounds, so that before and after are measured side by
  side;
- `xstate shortest`: `getShortestPaths` of `xstate/graph` (XState 5.33.3, bench/xstate/:
  `npm ci` there first), one path to every state XState tells apart; its CPU seconds timed
  inside node (the generator alone, as the goal compares), and the whole node process's
  (start-up, `import` of XState, the machine, the generator and its JSON output: what a
  command that prints XState's paths would take, beside `statechart paths`' whole command);
- `xstate simple`: `getSimplePaths`, every simple path to every state, capped: stopped after
  `--simple-timeout` seconds (it enumerates paths, whose number grows exponentially).

The same machine is given to XState: every state with its id, `initial`, `parallel`, `final`,
guarded alternatives (`guard: NAME`: each event is offered once per combination of its
guards' answers, `{type, answers}`, so that the traversal tries both), `done:` as `onDone`,
history transitions through history states, and each timer as an event of its own name
(`after.retryAt.retrying`: XState's traversal takes events, and a clock advance is one step
in both). Limits and record fields are not XState's: its paths may ask for a fifth retry.

Every path of either tool is then replayed with the runtime's step kernel
(`statechart_runtime.explore`, what a generated class runs) from a new run, event by event
with the path's guard answers (a timer event as a clock advance), until one is refused: the
transitions taken count as covered. Reported per tool: transition coverage (of the
transitions `paths` finds reachable), paths, total events, the generator's seconds (median
of `--rounds` runs for `paths`; XState in a node process of its own, its generator timed
inside it, start-up excluded; wall and CPU seconds: the CPU figure is the one to compare on a
busy machine), and for `paths` events per reachable transition (the goal: at most 3) and
configurations explored. The rounds interleave `paths`, the command and `getShortestPaths`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "compiler"))

from genspec import generate  # noqa: E402

from statechart.codegen.spec_tables import spec_tables  # noqa: E402
from statechart.linter import check_file, check_source  # noqa: E402
from statechart.model import Spec  # noqa: E402
from statechart_runtime import testing  # noqa: E402
from statechart_runtime.testing.explore import Space  # noqa: E402

XSTATE = HERE / "xstate"


# -- the spec as an XState machine -----------------------------------------------------------

def xstate_machine(spec: Spec) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """(machine config, events offered to the traversal, guard names)."""
    histories: dict[str, set[str]] = {}
    for t in spec.transitions():
        if t.history:
            histories.setdefault(t.target, set()).add(t.history)

    def target(t: Any) -> str:
        return f"#{t.target}__{t.history}" if t.history else f"#{t.target}"

    def alternatives(ts: list[Any]) -> list[dict[str, Any]]:
        return [{"target": target(t), **({"guard": t.guard} if t.guard else {})} for t in ts]

    def node(name: str) -> dict[str, Any]:
        state = spec.states[name]
        out: dict[str, Any] = {"id": name}
        if state.kind == "parallel":
            out["type"] = "parallel"
        elif state.kind == "final":
            out["type"] = "final"
        elif state.kind == "compound":
            out["initial"] = state.initial
        on: dict[str, list[dict[str, Any]]] = {}
        done: list[Any] = []
        for t in state.transitions:
            if t.trigger == "done":
                done.append(t)
            else:
                on.setdefault(t.event, []).append(t)
        if on:
            out["on"] = {event: alternatives(ts) for event, ts in on.items()}
        if done:
            out["onDone"] = alternatives(done)
        children = {c: node(c) for c in state.children}
        for kind in sorted(histories.get(name, ())):
            children[f"{name}__{kind}"] = {"id": f"{name}__{kind}", "type": "history",
                                           "history": kind}
        if children:
            out["states"] = children
        return out

    machine = {"id": spec.name, "initial": spec.initial,
               "states": {s.name: node(s.name) for s in spec.top_level}}
    guards_of: dict[str, list[str]] = {}
    for t in spec.transitions():
        if t.trigger != "done":
            found = guards_of.setdefault(t.event, [])
            if t.guard and t.guard not in found:
                found.append(t.guard)
    events = [{"type": event, "answers": dict(zip(guards, answers, strict=True))}
              for event, guards in guards_of.items()
              for answers in itertools.product([True, False], repeat=len(guards))]
    names = sorted({t.guard for t in spec.transitions() if t.guard})
    return machine, events, names


def run_xstate(spec: Spec, algorithm: str, timeout: float) -> dict[str, Any] | None:
    """XState's paths, or None when the generator did not finish within `timeout` s; with
    `processSeconds`, the node process's CPU seconds (user + system)."""
    machine, events, guards = xstate_machine(spec)
    payload = json.dumps({"algorithm": algorithm, "machine": machine, "events": events,
                          "guards": guards})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(["node", str(XSTATE / "paths.mjs")], input=payload,
                              capture_output=True, text=True, timeout=timeout, check=True,
                              cwd=XSTATE)
    except subprocess.TimeoutExpired:
        return None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, Any] = json.loads(done.stdout)
    result["processSeconds"] = (after.ru_utime - before.ru_utime) + \
        (after.ru_stime - before.ru_stime)
    return result


# -- replaying a path ------------------------------------------------------------------------

def covered(space: Space, path: list[dict[str, Any]]) -> tuple[set[tuple[str, str, int]], int]:
    """The transitions a path takes from a new run, replayed with the step kernel until an
    event is refused, and how many of its events were taken."""
    snap = space.start()
    taken: set[tuple[str, str, int]] = set()
    steps = 0
    for event in path:
        if event["type"] in space.spec.timers.by_event:
            found = space.advance(snap, event["answers"])
            if found is None or found[0].fired[:1] != (event["type"],):
                break
        else:
            found = space.send(snap, event["type"], event["answers"])
            if found is None or found[0].refused:
                break
        move, snap = found
        taken |= {(s, e, p) for s, e, _, _, p in move.micro}
        steps += 1
    return taken, steps


def as_events(path: testing.Path) -> list[dict[str, Any]]:
    out = []
    for step in path.steps:
        kind = step.fired[0] if step.kind == "clock" else str(step.event)
        out.append({"type": kind, "answers": dict(step.guards)})
    return out


# -- the measurements ------------------------------------------------------------------------

def command_cpu(spec_file: Path, bytecode: bool, tree: Path | None = None) -> float:
    """CPU seconds (user + system) of `statechart paths SPEC_FILE` in a new process; without
    `bytecode`, with PYTHONDONTWRITEBYTECODE set and the caches removed first; with `tree`,
    that tree's `compiler/` and `runtime/` first on PYTHONPATH (a baseline)."""
    env = dict(os.environ)
    root = ROOT if tree is None else tree
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "compiler"), str(tree / "runtime")])
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for cache in (*root.glob("compiler/**/__pycache__"), *root.glob("runtime/**/__pycache__")):
            for compiled in cache.glob("*.pyc"):
                compiled.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "statechart", "paths", str(spec_file)], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(name: str, spec: Spec, text: bytes, rounds: int, simple_timeout: float,
            baseline: Path | None = None) -> list[dict[str, Any]]:
    tables = spec_tables(spec)
    space = Space(tables)
    seconds, cpu, cached, uncached = [], [], [], []
    before_cached: list[float] = []
    before_uncached: list[float] = []
    shortest: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        spec_file = Path(folder) / Path(spec.path).name
        spec_file.write_bytes(text)
        for _ in range(rounds):
            start, start_cpu = time.perf_counter(), time.process_time()
            found = testing.paths(tables)
            seconds.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            # Without caches first (each run removes them), then once untimed to write them
            # again, then with them: before and after in turns.
            if baseline is not None:
                before_uncached.append(command_cpu(spec_file, bytecode=False, tree=baseline))
                command_cpu(spec_file, bytecode=True, tree=baseline)
            uncached.append(command_cpu(spec_file, bytecode=False))
            command_cpu(spec_file, bytecode=True)
            if baseline is not None:
                before_cached.append(command_cpu(spec_file, bytecode=True, tree=baseline))
            cached.append(command_cpu(spec_file, bytecode=True))
            result = run_xstate(spec, "shortest", 300.0)
            assert result is not None
            shortest.append(result)
    command_cached, command_uncached = statistics.median(cached), statistics.median(uncached)
    xstate_cpu = statistics.median(r["cpuSeconds"] for r in shortest)
    node_cpu = statistics.median(r["processSeconds"] for r in shortest)
    before = "" if baseline is None else (
        f"; before ({baseline.name}): {statistics.median(before_cached):.3f} s with caches "
        f"({statistics.median(before_cached) / xstate_cpu:.2f}x), "
        f"{statistics.median(before_uncached):.3f} s without; every round, CPU s with "
        f"caches, before / after: " + ", ".join(
            f"{b:.2f}/{a:.2f}" for b, a in zip(before_cached, cached, strict=True)))
    reachable = {(i.state, str(i.event), int(i.alternative or 0))
                 for i in set(found.items) - set(found.unreachable)}
    rows = []

    def row(tool: str, paths: list[list[dict[str, Any]]] | None, took: float | None,
            took_cpu: float | None, extra: str = "") -> None:
        if paths is None:
            rows.append({"spec": name, "tool": tool, "coverage": None, "paths": None,
                         "events": None, "seconds": took, "cpu": took_cpu, "note": extra})
            return
        taken: set[tuple[str, str, int]] = set()
        for path in paths:
            taken |= covered(space, path)[0]
        rows.append({"spec": name, "tool": tool, "reachable": len(reachable),
                     "coverage": len(taken & reachable) / max(len(reachable), 1),
                     "paths": len(paths), "events": sum(len(p) for p in paths),
                     "seconds": took, "cpu": took_cpu, "note": extra})

    row("statechart paths", [as_events(p) for p in found.paths], statistics.median(seconds),
        statistics.median(cpu),
        f"{found.events / max(len(reachable), 1):.2f} events per transition, "
        f"{found.configurations} configurations; the whole command "
        f"{command_cached:.3f} s CPU with bytecode caches "
        f"({command_cached / xstate_cpu:.2f}x getShortestPaths' CPU), "
        f"{command_uncached:.3f} s without "
        f"({command_uncached / xstate_cpu:.2f}x); "
        f"{command_cached / node_cpu:.2f}x XState's whole node process{before}")
    row("xstate shortest", shortest[-1]["paths"],
        statistics.median(r["seconds"] for r in shortest), xstate_cpu,
        f"median of {rounds} runs; the whole node process {node_cpu:.3f} s CPU")
    result = run_xstate(spec, "simple", simple_timeout)
    if result is None:
        row("xstate simple", None, None, None, f"stopped after {simple_timeout:g} s")
    else:
        row("xstate simple", result["paths"], result["seconds"], result["cpuSeconds"])
    return rows


def specs(sizes: list[int]) -> list[tuple[str, Spec, bytes]]:
    """(name, spec, its YAML text) of each spec measured."""
    agent_file = ROOT / "specs" / "agent_run.yaml"
    agent = check_file(agent_file).spec
    assert agent is not None
    out = [("agent run", agent, agent_file.read_bytes())]
    for n in sizes:
        for nested in (False, True):
            kind = "nested" if nested else "flat"
            text = generate(n, nested).encode()
            result = check_source(f"bench_{kind}_{n}.yaml", text)
            assert result.spec is not None and not result.errors
            out.append((f"{n} states, {kind}", result.spec, text))
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| spec | tool | transitions covered | paths | events | seconds (CPU) | |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        cov = "—" if r["coverage"] is None else \
            f"{100 * r['coverage']:.0f}% of {r['reachable']}"
        lines.append(f"| {r['spec']} | {r['tool']} | {cov} | "
                     f"{'—' if r['paths'] is None else r['paths']} | "
                     f"{'—' if r['events'] is None else r['events']} | "
                     + ("—" if r["seconds"] is None else
                        f"{r['seconds']:.3f} ({r['cpu']:.3f})") + " | "
                     f"{r['note']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,500")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--simple-timeout", type=float, default=30.0)
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--baseline", type=Path, metavar="TREE",
                        help="also run the command of this tree (its compiler/ and runtime/), "
                             "in the same rounds")
    args = parser.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "compiler" / "statechart").is_dir():
        print(f"bench_paths: {args.baseline} holds no compiler/statechart", file=sys.stderr)
        return 2
    if not (XSTATE / "node_modules" / "xstate").is_dir():
        print(f"bench_paths: run `npm ci` in {XSTATE} first", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for name, spec, text in specs([int(n) for n in args.sizes.split(",")]):
        rows += measure(name, spec, text, args.rounds, args.simple_timeout, args.baseline)
        print(table([r for r in rows if r["spec"] == name]).split("\n", 2)[2], flush=True)
    out = table(rows)
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    print(f"\n{platform.python_implementation()} {platform.python_version()}, node {node.strip()}")
    print(out)
    if args.markdown:
        Path(args.markdown).write_text(out + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
