"""Benchmark what timers (`after:`) and history cost: the same spec with and without them.

    python bench/bench_timers.py [--rounds 15] [--events 4000] [--runs 5] [--size 10000]
                                 [--markdown docs/performance.md]

Every figure is a ratio against a baseline measured in the same run, in interleaved rounds
(the machine is noisy), medians reported:

1. events/s of the agent run (specs/agent_run.yaml) against the same spec with timers on
   `reasoning` and `tool_call` (every event of the loop then disarms one timer and arms
   another, and keeps the record's `timers`) and `proceed` re-entering `running` through deep
   history (every step then keeps the remembered configurations): steady, one run looping
   call_tool/tool_result; and a path through an interruption (created, driven to the end, a
   new run each time). Also `fire_due` when nothing is due (the check a scheduler makes) and
   when one timer is due (a whole step);
2. import time of both generated modules, cold (no .pyc) and warm, in fresh processes;
3. `check_source` of a nested bench/genspec.py spec of `--size` states with two timers on
   every atomic state (a delay and a guarded ISO 8601 one) and a deep-history transition on
   every group, against the bare C-loader parse of the same text (gc off, the stricter
   baseline of bench/bench_check.py), and against the check of the spec without them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "compiler"))

from benchlib import time_cold_warm  # noqa: E402
from genspec import generate  # noqa: E402

from statechart.codegen import python_module  # noqa: E402
from statechart.linter import check_source  # noqa: E402
from statechart_runtime.run import spec_of  # noqa: E402

HEADING = "## Timers (bench/bench_timers.py)"
# Timers on the states the benchmark path visits, leading where their events would.
TIMED_STATES = {
    "reasoning": "after: {10m: tool_call}",
    "tool_call": "after: {PT2M: reasoning}",
}


def with_timers(text: str) -> str:
    """specs/agent_run.yaml with a timer on each state of TIMED_STATES (after its `on:`), and
    `proceed` re-entering `running` through deep history."""
    for state, after in TIMED_STATES.items():
        pattern = re.compile(rf"^(\s*){state}:\n((?:\1  .*\n)+)", re.MULTILINE)
        match = pattern.search(text)
        assert match, state
        indent = match.group(1)
        text = text[:match.end()] + f"{indent}  {after}\n" + text[match.end():]
    assert "      proceed: running\n" in text
    text = text.replace("      proceed: running\n",
                        "      proceed: {target: running, history: deep}\n")
    return text.replace("statechart: agent_run", "statechart: agent_run_timed")


def big_with_timers(n: int) -> str:
    """A nested genspec spec of `n` states with two timers on every atomic state and, on
    every group, a transition that re-enters it through deep history."""
    out = []
    group = None
    for line in generate(n, nested=True).splitlines():
        out.append(line)
        stripped = line.strip()
        if re.fullmatch(r"g\d+_\d+:", stripped):
            group = stripped[:-1]
        if stripped == "cancel: done" and group is not None:
            out.append(line.replace("cancel: done", f"again: {{target: {group}, "
                                                   "history: deep}"))
        if stripped.startswith("branch:"):  # the last line of an atomic state
            indent = line[:len(line) - len(line.lstrip())][:-2]
            target = re.search(r"target: (\w+)", line)
            assert target
            out.append(f"{indent}after: {{15m: {target.group(1)}, "
                       f"PT1H: {{target: {target.group(1)}, guard: lucky}}}}")
    return "\n".join(out) + "\n"


def load(text: str, folder: Path, name: str) -> Any:
    result = check_source(f"{name}.yaml", text.encode())
    assert result.spec is not None and not result.errors, result.errors[:3]
    (folder / f"{name}.py").write_text(python_module.render(result.spec))
    sys.path.insert(0, str(folder))
    return __import__(name)


def facade_of(module: Any) -> Any:
    return next(v for k, v in vars(module).items()
                if isinstance(v, type) and hasattr(v, "_sc_machine") and k[0].isupper()
                and v.__dict__.get("_sc_machine") is not None)


def events_per_second(module: Any, events: int) -> float:
    facade = facade_of(module)
    clock = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    run = facade(clock=lambda: clock)
    run.triage()
    run.start()
    start = time.perf_counter()
    for _ in range(events // 2):
        run.call_tool()
        run.tool_result()
    return events / (time.perf_counter() - start)


def path_events_per_second(module: Any, runs: int) -> float:
    """A new run driven through an interruption to the end, `runs` times (11 events each)."""
    facade = facade_of(module)
    reason = next(v for k, v in vars(module).items() if k.endswith("InterruptReason"))
    approval = next(iter(reason))
    clock = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    start = time.perf_counter()
    for _ in range(runs):
        run = facade(clock=lambda: clock)
        run.triage()
        run.start()
        run.call_tool()
        run.tool_result()
        run.interrupt(interruptReason=approval)
        run.await_approval()
        run.approve()
        run.proceed()
        run.call_tool()
        run.tool_result()
        run.complete()
    return runs * 11 / (time.perf_counter() - start)


def fire_due_seconds(module: Any, rounds: int, due: bool) -> float:
    """Median seconds of one `fire_due` with nothing due, or with one timer due."""
    facade = facade_of(module)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    times = []
    for _ in range(rounds):
        now = [t0]
        run = facade(clock=lambda now=now: now[0])
        run.triage()
        run.start()
        now[0] = t0 + (dt.timedelta(minutes=11) if due else dt.timedelta(minutes=1))
        start = time.perf_counter()
        fired = run.fire_due()
        times.append(time.perf_counter() - start)
        assert bool(fired) == due, fired
    return statistics.median(times)


def median(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def check_ratios(n: int, runs: int) -> dict[str, float]:
    timed, bare = big_with_timers(n), generate(n, nested=True)
    result = check_source("timed.yaml", timed.encode())
    assert result.spec is not None and not result.diagnostics, result.diagnostics[:3]
    assert len(result.spec.timers()) == 2 * n
    assert any(t.history for t in result.spec.transitions())

    def parse(text: str) -> None:
        gc.disable()
        try:
            yaml.load(text, Loader=yaml.CSafeLoader)
        finally:
            gc.enable()

    parse_s, parse_bare_s, timed_s, bare_s = [], [], [], []
    for _ in range(runs):  # interleaved
        parse_s.append(median(lambda: parse(timed), 1))
        parse_bare_s.append(median(lambda: parse(bare), 1))
        timed_s.append(median(lambda: check_source("timed.yaml", timed.encode()), 1))
        bare_s.append(median(lambda: check_source("bare.yaml", bare.encode()), 1))
    return {"parse": statistics.median(parse_s), "timed": statistics.median(timed_s),
            "parse_bare": statistics.median(parse_bare_s),
            "bare": statistics.median(bare_s), "size": len(timed) / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()

    text = (HERE / "agent_run_v1.yaml").read_text()  # without timers of its own
    folder = Path(tempfile.mkdtemp(prefix="bench_timers"))
    bare = load(text.replace("statechart: agent_run", "statechart: agent_run_bare"), folder,
                "agent_run_bare")
    timed = load(with_timers(text), folder, "agent_run_timed")
    spec = spec_of(facade_of(timed))
    assert spec.timers and spec.chart.remembers and not spec_of(facade_of(bare)).timers

    rates: dict[str, list[float]] = {"bare": [], "timed": []}
    paths: dict[str, list[float]] = {"bare": [], "timed": []}
    for _ in range(args.rounds):
        rates["bare"].append(events_per_second(bare, args.events))
        rates["timed"].append(events_per_second(timed, args.events))
        paths["bare"].append(path_events_per_second(bare, args.events // 11))
        paths["timed"].append(path_events_per_second(timed, args.events // 11))
    eps = {k: statistics.median(v) for k, v in rates.items()}
    path = {k: statistics.median(v) for k, v in paths.items()}
    idle = fire_due_seconds(timed, args.rounds * 20, due=False)
    firing = fire_due_seconds(timed, args.rounds * 20, due=True)
    samples: dict[str, dict[str, list[float]]] = {
        name: {"cold": [], "warm": []} for name in ("agent_run_bare", "agent_run_timed")}
    for _ in range(args.runs):  # interleaved
        for name, times in samples.items():
            for kind, value in time_cold_warm(folder, name, 1).items():
                times[kind].append(value)
    imports = {name: {kind: statistics.median(v) for kind, v in times.items()}
               for name, times in samples.items()}
    check = check_ratios(args.size, args.runs)

    lines = [
        HEADING, "",
        f"Generated by `python bench/bench_timers.py` on {dt.date.today()}: Python "
        f"{platform.python_version()}; medians of {args.rounds} interleaved rounds "
        f"({args.events:,} events each) and {args.runs} runs. specs/agent_run.yaml against "
        "the same spec with a timer on `reasoning` (`10m`) and `tool_call` (`PT2M`) and "
        "`proceed` re-entering `running` through deep history: the steady loop "
        "call_tool/tool_result disarms one timer and arms the other on every event, and every "
        "step keeps the remembered configurations.",
        "",
        "| measure | without | with timers and history | ratio |",
        "|---|---:|---:|---:|",
        f"| events/s (steady loop) | {eps['bare']:,.0f} | {eps['timed']:,.0f} | "
        f"**{eps['timed'] / eps['bare']:.2f}** |",
        f"| events/s (new run through an interruption, 11 events) | {path['bare']:,.0f} | "
        f"{path['timed']:,.0f} | **{path['timed'] / path['bare']:.2f}** |",
        f"| import, cold | {imports['agent_run_bare']['cold'] * 1000:.1f} ms | "
        f"{imports['agent_run_timed']['cold'] * 1000:.1f} ms | "
        f"{imports['agent_run_timed']['cold'] / imports['agent_run_bare']['cold']:.2f} |",
        f"| import, warm | {imports['agent_run_bare']['warm'] * 1000:.1f} ms | "
        f"{imports['agent_run_timed']['warm'] * 1000:.1f} ms | "
        f"{imports['agent_run_timed']['warm'] / imports['agent_run_bare']['warm']:.2f} |",
        "",
        f"`fire_due` with nothing due: {idle * 1e6:.1f} µs; with one timer due (a whole "
        f"step): {firing * 1e6:.0f} µs (an event costs {1e6 / eps['timed']:.0f} µs).",
        "",
        f"`check` of a nested bench/genspec.py spec of {args.size:,} states with two timers "
        f"on every atomic state ({2 * args.size:,} timers) and a deep-history transition on "
        f"every group ({check['size']:.1f} MiB): "
        f"{check['timed'] * 1000:,.0f} ms, **{check['timed'] / check['parse']:.2f}×** the C "
        f"parse of the same text (gc off: {check['parse'] * 1000:,.0f} ms; target ≤ 2×). "
        f"The same spec without them, in the same run: check "
        f"{check['bare'] * 1000:,.0f} ms, {check['bare'] / check['parse_bare']:.2f}× its C "
        f"parse ({check['parse_bare'] * 1000:,.0f} ms).",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.markdown:
        doc = args.markdown.read_text()
        pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
        doc = pattern.sub(section + "\n", doc) if pattern.search(doc) else \
            doc.rstrip("\n") + "\n\n" + section
        args.markdown.write_text(doc)


if __name__ == "__main__":
    main()
