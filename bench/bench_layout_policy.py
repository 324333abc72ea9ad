"""The diagram layout policy (`statechart.render.bounds`) measured: the same specs laid out
with today's full settings, with edge labels as `xlabel` only, and with the fast settings.

    .venv/bin/python bench/bench_layout_policy.py [CASE ...] [--variants full,xlabel,fast]
                                                  [--timeout 90]

CASE: `agent_run`, `support_run` (specs/), `denseN` / `flatN` (bench/genspec.py, nested or
flat, N atomic states), `sparseN` (bench/bench_render.py's sparse shape), `adversarial` (10
compound states with 900 events each: 9,010 transitions in 15 lines). Each layout runs once
(graphviz-pure -Tsvg) under a timeout and a 4 GiB memory cap; one JSON line per layout, with
the settings the policy picks for that spec. docs/performance.md holds a measured copy.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_render import sparse_spec
from genspec import generate

from statechart.linter import check_file
from statechart.model import Spec
from statechart.render.bounds import LayoutBounds
from statechart.render.dot import dot_source
from statechart.render.layout import LayoutError, layout

ROOT = Path(__file__).resolve().parent.parent


def adversarial() -> str:
    events = ", ".join(f"e{i}: c{i % 10}" for i in range(900))
    lines = ["statechart: adversarial", "version: 1", "initial: c0", "states:"]
    lines += [f"  c{c}: {{initial: a{c}, on: {{{events}, done: d}}, states: {{a{c}: {{}}}}}}"
              for c in range(10)]
    return "\n".join([*lines, "  d: {final: true}"]) + "\n"


def load(case: str, folder: Path) -> Spec:
    if case in ("agent_run", "support_run"):
        path = ROOT / "specs" / f"{case}.yaml"
    else:
        text = adversarial() if case == "adversarial" else \
            generate(int(case[5:]), nested=True) if case.startswith("dense") else \
            generate(int(case[4:])) if case.startswith("flat") else sparse_spec(int(case[6:]))
        path = folder / f"{case}.yaml"
        path.write_text(text, encoding="utf-8")
    result = check_file(path)
    assert result.spec is not None and not result.errors, case
    return result.spec


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="*", default=[
        "agent_run", "support_run", "dense10", "dense20", "sparse100", "dense50", "dense100",
        "flat100", "sparse500", "flat200", "dense200", "sparse1000", "adversarial"])
    parser.add_argument("--variants", default="full,xlabel,fast")
    parser.add_argument("--timeout", type=float, default=90.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases:
            spec = load(case, Path(tmp))
            for variant in args.variants.split(","):
                dot = dot_source(spec, header=False, fast=variant != "full")
                if variant == "xlabel":  # labels as xlabel, today's graph settings
                    dot = re.sub(r" (nslimit1?=1|mclimit=0\.1|splines=line)", "", dot)
                start = time.perf_counter()
                try:
                    layout(dot, "svg", timeout=args.timeout, max_memory=4 * 2**30)
                    took = f"{time.perf_counter() - start:.2f} s"
                except LayoutError as exc:
                    took = f"failed: {exc}"
                print(json.dumps({
                    "case": case, "states": len(spec.states),
                    "transitions": len(spec.transitions()),
                    "policy": LayoutBounds().settings(spec) or "omitted",
                    "variant": variant, "layout": took}), flush=True)


if __name__ == "__main__":
    main()
