"""What inline suppressions (`statechart.suppressions`) add to `check`: a generated spec
(bench/genspec.py) checked as it is and with one `# statechart: ignore[...]` comment,
interleaved in one process, reported as the ratio of the two (median and quartiles).

    python bench/bench_suppressions.py [N] [--runs R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from genspec import generate

from statechart.linter import check_source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=5000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    plain = generate(args.n).encode()
    marked = plain.replace(b"  s17:\n", b"  s17:  # statechart: ignore[trap-state]\n", 1)
    assert marked != plain
    ratios, seconds = [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        check_source("big.yaml", plain)
        middle = time.perf_counter()
        found = check_source("big.yaml", marked)
        end = time.perf_counter()
        assert [d.rule for d in found.diagnostics] == ["unused-suppression"]
        ratios.append((end - middle) / (middle - start))
        seconds.append(middle - start)
    q1, median, q3 = statistics.quantiles(ratios, n=4)
    print(f"{args.n} states: check {statistics.median(seconds):.2f} s; with one suppression "
          f"{median:.2f}x (IQR {q1:.2f}-{q3:.2f}), {args.runs} interleaved runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
