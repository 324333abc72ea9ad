"""Classes with actions on the kernel's path (issue 31): events/s and memory per run of the
agent run with one no-op entry action, and with typical actions, against the same class
without any; and the class with one action stepped through python-statemachine's machine
(what every class with an action did before its runs called their actions themselves).

    python bench/bench_actions.py [--rounds 21] [--runs-per-round 20] [--live 2000]

Every figure is a ratio to the class without actions, measured in the same run, in rounds
that alternate the order of the two (ABBA): the goal is events/s with one no-op action at
least 0.7x the class without it, and memory per run within 1.5x.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "compiler"))

from bench_runtime import (  # noqa: E402
    FEW_EVENTS,
    Generated,
    agent_path,
    drive,
    live_bytes,
    paired_rounds,
)

from statechart.codegen import python_module  # noqa: E402
from statechart.linter import check_source  # noqa: E402

# The agent run as bench_runtime.py drives it (version 1: its path sets no tool call id).
SPEC = HERE / "agent_run_v1.yaml"


def _after(text: str, line: str, added: str) -> str:
    """`text` with `added` (lines) after its one line `line` (the spec is changed as text, so
    its YAML stays as written)."""
    assert text.count(line + "\n") == 1, line
    return text.replace(line + "\n", line + "\n" + added, 1)


REASONING = "        description: The model is thinking about the next step."


def one_action(text: str) -> str:
    """One no-op entry action, on the state the run enters most (`reasoning`)."""
    return _after(text, REASONING, "        entry: [noted]\n")


def typical_actions(text: str) -> str:
    """What a service would hang on the agent run: a clock around `running`, a log line per
    tool call, a notice on interruption, and the result published on completion."""
    text = one_action(text)
    text = _after(text, "    description: The agent is working.",
                  "    entry: [start_clock]\n    exit: [stop_clock]\n")
    text = _after(text, "        description: A tool call is in flight.",
                  "        entry: [log_tool_call]\n")
    assert text.count("      complete: completed\n") == 1
    text = text.replace("      complete: completed\n",
                        "      complete: {target: completed, actions: [publish_result]}\n")
    interrupted = text.index("\n  interrupted:\n") + len("\n  interrupted:\n")
    return text[:interrupted] + "    entry: [notify_owner]\n" + text[interrupted:]


def build(folder: Path, name: str, change: Callable[[str], str] | None) -> Generated:
    text = SPEC.read_text(encoding="utf-8")
    if change is not None:
        text = change(text)
    result = check_source(f"{name}.yaml", text.encode())
    assert result.spec is not None and not result.errors, result.errors[:3]
    path = folder / f"{name}.py"
    path.write_text(python_module.render(result.spec), encoding="utf-8")
    return Generated(path)


def after_few(gen: Generated, make: Callable[[int], Any]) -> Callable[[int], Any]:
    """A run made by `make`, after the first few events of the path (what memory counts)."""
    few = gen.prepare(FEW_EVENTS)
    return lambda i: drive(make(i), few)


class _Listener:
    """A `model=` with nothing of its own: the run steps through its machine."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds (21)")
    parser.add_argument("--runs-per-round", type=int, default=20,
                        help="runs created and driven through the path per round (20)")
    parser.add_argument("--live", type=int, default=2000, help="memory: live runs (2000)")
    args = parser.parse_args(argv)
    path = agent_path(3)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain = build(folder, "actions_none", None)
        one = build(folder, "actions_one", one_action)
        typical = build(folder, "actions_typical", typical_actions)
        per_round = args.runs_per_round * len(path)

        def driven(gen: Generated, make: Callable[[int], Any]) -> Callable[[], float]:
            calls = gen.prepare(path)  # typed by the module's own enums

            def rounds() -> float:
                start = time.perf_counter()
                for i in range(args.runs_per_round):
                    drive(make(i), calls)
                return (time.perf_counter() - start) / per_round
            return rounds

        def with_machine(gen: Generated) -> Callable[[int], Any]:
            return lambda i: gen.facade(run_id=f"bench-{i}", model=_Listener())

        subjects = {"one no-op entry action": (one, one.new_run),
                    "typical actions": (typical, typical.new_run),
                    "one no-op entry action, through the machine": (one, with_machine(one))}
        base = driven(plain, plain.new_run)
        rows = []
        for name, (gen, make) in subjects.items():
            subject = driven(gen, make)
            base(), subject()  # warm-up
            gc.collect()
            times_base, times_subject = paired_rounds(base, subject, args.rounds)
            ratios = sorted(b / s for b, s in zip(times_base, times_subject, strict=True))
            memory_base = statistics.median(
                live_bytes(after_few(plain, plain.new_run), args.live) for _ in range(3))
            memory_subject = statistics.median(
                live_bytes(after_few(gen, make), args.live) for _ in range(3))
            rows.append((name, 1 / statistics.median(times_base),
                         1 / statistics.median(times_subject), statistics.median(ratios),
                         ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4],
                         memory_base, memory_subject))
            print(f"{name}: {rows[-1]}", flush=True)
    print()
    print("| class | events/s without actions | events/s | ratio (q1-q3) | KiB per run "
          "(without / with) | memory ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, eb, es, ratio, q1, q3, mb, ms in rows:
        print(f"| {name} | {eb:,.0f} | {es:,.0f} | {ratio:.2f}x ({q1:.2f}-{q3:.2f}) | "
              f"{mb / 1024:.1f} / {ms / 1024:.1f} | {ms / mb:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
