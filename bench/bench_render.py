"""Where render time goes: DOT/Mermaid text generation against the SVG layout step.

    .venv/bin/python bench/bench_render.py [--sizes 100 1000 5000] [--timeout 300]

Two shapes of spec:
- dense: bench/genspec.py, nested (compound states group the atomic ones ten by ten), about
  5 transitions per atomic state, two of them random jumps anywhere in the spec;
- sparse: `sparse_spec` below, the same grouping, 2 transitions per state, both local (next in
  the chain, back to the group's first state): closer to a hand-written spec.
Text generation is the median of 3 runs; the layout (graphviz-pure -Tsvg, the default engine)
runs once, with a timeout and a memory cap, because it dominates.
Prints a Markdown table (docs/performance.md holds a measured copy).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from genspec import generate

from statechart.linter import check_file
from statechart.render.dot import dot_source
from statechart.render.layout import LayoutError, layout
from statechart.render.mermaid import mermaid_source

MEMORY_CAP = 6 * 2**30


def sparse_spec(n: int) -> str:
    """`n` atomic states in compound groups of ten; `next` along the chain, `back` to the
    group's first state; a final `done`."""
    lines = ["statechart: bench_sparse", "version: 1", "initial: g0", "states:"]
    for g in range(0, n, 10):
        lines += [f"  g{g // 10}:", f"    initial: s{g}", "    states:"]
        for i in range(g, min(g + 10, n)):
            nxt = f"s{i + 1}" if i + 1 < n else "done"
            lines += [f"      s{i}:", "        on:", f"          next: {nxt}"]
            if i > g:
                lines.append(f"          back: s{g}")
    lines += ["  done:", "    final: true"]
    return "\n".join(lines) + "\n"


def median_seconds(fn, runs: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(n: int, shape: str, timeout: float) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"bench_{n}.yaml"
        text = generate(n, nested=True) if shape == "dense" else sparse_spec(n)
        path.write_text(text, encoding="utf-8")
        start = time.perf_counter()
        result = check_file(path)
        check = time.perf_counter() - start
    spec = result.spec
    assert spec is not None and not result.errors, [d.message for d in result.errors[:3]]
    dot = dot_source(spec)
    row = {
        "shape": shape,
        "states": f"{len(spec.states):,}",
        "transitions": f"{len(spec.transitions()):,}",
        "check (load+rules)": f"{check:.3f} s",
        "DOT text": f"{median_seconds(lambda: dot_source(spec)):.3f} s",
        "Mermaid text": f"{median_seconds(lambda: mermaid_source(spec)):.3f} s",
        "DOT size": f"{len(dot.encode()) / 1024:,.0f} KiB",
    }
    start = time.perf_counter()
    try:
        svg = layout(dot, "svg", timeout=timeout, max_memory=MEMORY_CAP)
        row["SVG layout (graphviz-pure)"] = f"{time.perf_counter() - start:.2f} s"
        row["SVG size"] = f"{len(svg) / 1024:,.0f} KiB"
    except LayoutError as exc:
        row["SVG layout (graphviz-pure)"] = f"not done: {str(exc).split(';')[0]}"
        row["SVG size"] = "-"
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000],
                        help="numbers of atomic states")
    parser.add_argument("--shapes", nargs="+", default=["sparse", "dense"],
                        choices=["sparse", "dense"])
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="layout timeout per size, seconds")
    args = parser.parse_args(argv)
    rows = []
    for shape in args.shapes:
        for n in args.sizes:
            rows.append(measure(n, shape, args.timeout))
            print(f"measured {shape} {n}: {rows[-1]}", file=sys.stderr, flush=True)
    keys = list(rows[0])
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"{platform.system()}, {os.cpu_count()} CPUs; layout timeout {args.timeout:g} s, "
          f"memory cap {MEMORY_CAP / 2**30:g} GiB\n")
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(row[k] for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
