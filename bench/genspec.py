"""Generate large valid specs for benchmarks and tests, deterministically from a seed.

    python bench/genspec.py 10000 [--nested] [--seed 0] [-o big.yaml]

`generate(n, nested)` returns the YAML text of a spec with `n` atomic states `s0..s{n-1}`
plus a final `done` (and, nested, about n/9 compound states `g<level>_<j>` grouping them ten
by ten, level over level). Each atomic state has about 5 transitions: `next` along a chain that
visits every state and ends in `done` (so every state is reachable and can finish), two
random jumps, and one event with a guarded alternative and a fallback that also sets a
record field. Compound states add a `cancel` to `done`. The spec has a record and rules that
hold, and `statechart check` reports nothing on it.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

RECORD = """\
record:
  reason:
    type: string
    description: Why the last jump happened.
  attempts:
    type: integer
    description: How many times something was retried.
"""

RULES = """\
rules:
  - id: done-is-terminal
    unreachable: {from: done, to: s0}
    description: A finished run never starts again.
  - never: {from: done, to: [s0, {tag: busy}]}
"""


def _leaf(lines: list[str], rng: random.Random, i: int, n: int, indent: str) -> None:
    nxt = f"s{i + 1}" if i + 1 < n else "done"
    a, b, c, d = (f"s{rng.randrange(n)}" for _ in range(4))
    lines += [
        f"{indent}s{i}:",
        *([f"{indent}  description: Atomic state number {i}."] if i % 10 == 0 else []),
        *([f"{indent}  tags: [busy]"] if i % 7 == 0 else []),
        f"{indent}  on:",
        f"{indent}    next: {nxt}",
        f"{indent}    jump: {a}",
        f"{indent}    hop: {{target: {b}, set: [attempts]}}",
        f"{indent}    branch: [{{target: {c}, guard: lucky}}, {{target: {d}, set: [reason]}}]",
    ]


def generate(n: int, nested: bool = False, seed: int = 0) -> str:
    """A valid spec with `n` atomic states (see the module docstring)."""
    if n < 1:
        raise ValueError("n must be at least 1")
    rng = random.Random(seed)
    kind = "nested" if nested else "flat"
    lines = [
        f"statechart: bench_{kind}_{n}",
        "version: 1",
        f"description: A generated {kind} spec with {n} atomic states (seed {seed}).",
        "initial: s0",
        RECORD.rstrip("\n"),
        "states:",
    ]
    if not nested or n <= 10:
        for i in range(n):
            _leaf(lines, rng, i, n, "  ")
    else:
        # Group leaves ten by ten, then groups ten by ten, until at most ten remain on top.
        # A tree node is ("leaf", i) or ("group", name, children).
        nodes: list[tuple] = [("leaf", i) for i in range(n)]
        level = 0
        while len(nodes) > 10:
            nodes = [("group", f"g{level}_{j}", nodes[k:k + 10])
                     for j, k in enumerate(range(0, len(nodes), 10))]
            level += 1
        top = nodes
        lines[3] = f"initial: {_first_name(top[0])}"
        stack: list[tuple[tuple, int]] = [(node, 1) for node in reversed(top)]
        while stack:
            node, depth = stack.pop()
            indent = "  " * (2 * depth - 1)
            if node[0] == "leaf":
                _leaf(lines, rng, node[1], n, indent)
                continue
            _, name, children = node
            lines += [
                f"{indent}{name}:",
                f"{indent}  description: Group {name}.",
                f"{indent}  initial: {_first_name(children[0])}",
                f"{indent}  on:",
                f"{indent}    cancel: done",
                f"{indent}  states:",
            ]
            stack.extend((child, depth + 1) for child in reversed(children))
    lines += [
        "  done:",
        "    description: The run is over.",
        "    final: true",
        "    requires: [reason]",
        RULES.rstrip("\n"),
    ]
    return "\n".join(lines) + "\n"


def _first_name(node: tuple) -> str:
    return f"s{node[1]}" if node[0] == "leaf" else node[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of atomic states")
    parser.add_argument("--nested", action="store_true", help="group states in compound states")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", help="file to write (default: stdout)")
    args = parser.parse_args(argv)
    text = generate(args.n, args.nested, args.seed)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
