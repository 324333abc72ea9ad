"""Benchmark the generated module: import time, events per second, and `build` on 200 specs.

    python bench/bench_codegen.py [--sizes 10 1000 5000] [--runs 3] [--events 3000]
                                  [--markdown FILE]   (results: docs/performance.md)

For each size (a flat spec from bench/genspec.py), side by side in one run:
- import: the generated module imported in a fresh process (python-statemachine already
  imported, so only the module's own cost counts), cold (compiles, writes the .pyc) and warm
  (from the .pyc); against the same module with python-statemachine's default class checks
  left on, which is what building that class without the compiler costs;
- events: `run.next()` on the generated facade (record kept: history, counts, checks)
  against `machine.send("next")` on a plain python-statemachine class of the same graph (the
  generated machine class, with the guard defined on it), both walking the `next` chain.
Then `statechart build` twice on 200 small specs: the first writes, the second finds nothing
changed (the number that matters for CI and editors).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "compiler"))

from benchlib import import_seconds, module_source  # noqa: E402
from genspec import generate  # noqa: E402

from statechart import build, outputs  # noqa: E402

# The runtime's machine base class turns the library's class checks off; the "checked"
# variant turns them back on in the generated class, which is what building the class
# without the compiler costs.
MACHINE_BASE = "(_api.Machine):\n"
CHECKS_ON = ("    validate_disconnected_states = True\n"
             "    validate_trap_states = True\n"
             "    validate_final_reachability = True\n")


def time_imports(source: str, folder: Path, runs: int) -> dict[str, float]:
    """Median seconds: generated cold/warm, and with the library's checks on (warm)."""
    (folder / "gen.py").write_text(source)
    assert source.count(MACHINE_BASE) == 1
    (folder / "checked.py").write_text(source.replace(MACHINE_BASE, MACHINE_BASE + CHECKS_ON))
    cold, warm, checked = [], [], []
    for _ in range(runs):
        shutil.rmtree(folder / "__pycache__", ignore_errors=True)
        cold.append(import_seconds(folder, "gen"))
        warm.append(import_seconds(folder, "gen"))
        checked.append(import_seconds(folder, "checked"))
    return {"cold": statistics.median(cold), "warm": statistics.median(warm),
            "checked": statistics.median(checked)}


def events_per_second(source: str, folder: Path, n: int, events: int,
                      runs: int) -> dict[str, float]:
    sys.path.insert(0, str(folder))
    name = f"bench_{n}_events"
    (folder / f"{name}.py").write_text(source)
    module = __import__(name)
    base = f"BenchFlat{n}"
    facade = getattr(module, base)
    machine_class = getattr(module, base + "Machine")
    plain = type("Plain", (machine_class,), {"lucky": lambda self: True})
    steps = max(1, min(n - 1, 200))  # `next` from s0 on; entering `done` needs a field

    def chain_generated() -> float:
        run = facade(run_id="bench")
        start = time.perf_counter()
        for _ in range(steps):
            run.next()
        return (time.perf_counter() - start) / steps

    def chain_plain() -> float:
        sm = plain()
        start = time.perf_counter()
        for _ in range(steps):
            sm.send("next")
        return (time.perf_counter() - start) / steps

    # Many short rounds, interleaved, and the median: this machine's noise comes in bursts
    # that would otherwise land on one side.
    rounds = max(runs * 10, events // steps)
    gen, psm = [], []
    for _ in range(rounds):
        gen.append(chain_generated())
        psm.append(chain_plain())
    return {"generated": 1 / statistics.median(gen), "plain": 1 / statistics.median(psm)}


def build_200(folder: Path) -> dict[str, float]:
    specs = folder / "specs"
    specs.mkdir(parents=True)
    for i in range(200):
        text = generate(12, seed=i).replace("statechart: bench_flat_12", f"statechart: spec_{i}")
        (specs / f"spec_{i}.yaml").write_text(text)
    old = Path.cwd()
    os.chdir(folder)
    saved = dict(outputs.PER_SPEC), dict(outputs.ALL_SPECS)
    outputs.PER_SPEC.pop("docs", None)  # code and schema only: docs have their own bench
    outputs.ALL_SPECS.clear()
    try:
        start = time.perf_counter()
        plan = build.plan(["specs"])
        assert plan.ok, (plan.problems, [d for d in plan.diagnostics if d.severity == "error"])
        build.apply(plan)
        first = time.perf_counter() - start
        start = time.perf_counter()
        changes = build.apply(build.plan(["specs"]))
        second = time.perf_counter() - start
        assert {a for _, a in changes} == {"unchanged"}
    finally:
        os.chdir(old)
        outputs.PER_SPEC.clear()
        outputs.PER_SPEC.update(saved[0])
        outputs.ALL_SPECS.update(saved[1])
    return {"first": first, "unchanged": second}


def markdown(rows: list[dict[str, Any]], b200: dict[str, float], args: argparse.Namespace) -> str:
    out = [
        "## statechart build: generated code",
        "",
        f"Measured by `python bench/bench_codegen.py` on {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; imports: median of {args.runs} "
        "fresh processes; events: median of interleaved rounds of up to 200 `next` events; "
        "flat specs from bench/genspec.py (about 4 transitions per state).",
        "",
        "| states | import, generated (warm .pyc) | import, generated (cold) | same class, "
        "library checks on | speed-up | events/s generated (record kept) | events/s "
        "plain python-statemachine | record-keeping cost |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        cost = r["plain"] / r["generated"] - 1
        out.append(
            f"| {r['n']:,} | {r['warm'] * 1000:,.1f} ms | {r['cold'] * 1000:,.1f} ms | "
            f"{r['checked'] * 1000:,.1f} ms | {r['checked'] / r['warm']:.1f}x | "
            f"{r['generated']:,.0f} | {r['plain']:,.0f} | {cost:+.0%} |")
    out += [
        "",
        f"`statechart build` on 200 specs of 12 states (code and schema): first build "
        f"{b200['first']:.2f} s, nothing changed {b200['unchanged']:.2f} s "
        f"({b200['unchanged'] / 2:.2f} s per 100 specs; every spec is still checked).",
        "",
        "Import: the speed-up is the library's class checks, which the generated class turns "
        "off because `statechart check` already did them (the final-reachability check is "
        "quadratic). Events: the record keeping is the runtime's per-microstep hook (limits, "
        "required fields, history entry), against the generated machine class alone (which "
        "has the runtime's engine too).",
        "",
    ]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 5000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--markdown", help="write the results table to this file")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            folder = Path(tmp) / f"n{n}"
            folder.mkdir()
            source = module_source(n)
            row: dict[str, Any] = {"n": n, **time_imports(source, folder, args.runs)}
            row.update(events_per_second(source, folder, n, args.events, args.runs))
            rows.append(row)
            print(row, flush=True)
        b200 = build_200(Path(tmp) / "b200")
        print(b200)
    text = markdown(rows, b200, args)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
