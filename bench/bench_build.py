"""Benchmark `statechart build` against `check` of the same spec, in one run, interleaved.

    python bench/bench_build.py [--sizes 1000 10000] [--rounds 3]

For each size, a flat spec from bench/genspec.py in a new project folder (every kind of output;
a spec of this size is over the diagram's layout bound, so no SVG). Each round times, one
after the other:
- `check`: `linter.check_file` of the spec (what `build` runs first);
- `build`, first: `build.plan` + `build.apply` in a project whose outputs and manifest were
  deleted (every generator runs);
- `build`, nothing changed: the same again (the manifest, `statechart.build_cache`, lets it
  skip the generators).
Ratios are taken within a round (the machine is shared and noisy); the median and the range
over the rounds are printed. Goals (issue 31): first build <= 2x check at 10,000 states,
nothing changed <= 1.2x check.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from genspec import generate

from statechart import build, outputs
from statechart.config import Config
from statechart.linter import check_file
from statechart.render import bounds


def one_round(root: Path, spec: Path, config: Config) -> dict[str, float]:
    times: dict[str, float] = {}
    gc.collect()
    start = time.perf_counter()
    check_file(spec, config)
    times["check"] = time.perf_counter() - start
    for folder in ("generated", "docs", ".statechart"):
        shutil.rmtree(root / folder, ignore_errors=True)
    for name in ("first", "unchanged"):
        gc.collect()  # the last build's model and files are garbage, not in the way
        start = time.perf_counter()
        with outputs.using(config), bounds.using(config=config):
            plan = build.plan(["specs"], config)
            assert plan.ok, [d.message for d in plan.diagnostics[:3]]
            done = build.apply(plan)
        times[name] = time.perf_counter() - start
        changed = [rel for rel, action in done if action != "unchanged"]
        assert (name == "first") == bool(changed), (name, done)
        del plan, done
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    here = Path.cwd()
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp).resolve()
            (root / "specs").mkdir()
            spec = root / "specs" / f"bench_flat_{n}.yaml"
            spec.write_text(generate(n, False), "utf-8")
            os.chdir(root)
            try:
                config = Config(root)
                rounds = [one_round(root, Path("specs") / spec.name, config)
                          for _ in range(args.rounds)]
            finally:
                os.chdir(here)
        for name in ("first", "unchanged"):
            ratios = sorted(r[name] / r["check"] for r in rounds)
            print(f"flat {n:,}: check {statistics.median(r['check'] for r in rounds):.2f} s, "
                  f"build {name} {statistics.median(r[name] for r in rounds):.2f} s: "
                  f"{statistics.median(ratios):.2f}x check "
                  f"(rounds {ratios[0]:.2f}-{ratios[-1]:.2f}x)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
