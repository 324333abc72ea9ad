"""`statechart resolve SPEC`: print a spec as checked, with its `extends` chain merged in."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from statechart.linter import check_file
from statechart.overlay import resolve
from statechart.report import concise
from statechart.yaml_source import load_bytes, scalar_value

HELP = "print the resolved YAML of a spec that extends another (overlay merged onto its base)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="a spec file")


def plain(node: yaml.Node) -> object:
    """Node tree -> Python data, iteratively (no recursion limit)."""
    root: list[object] = [None]
    stack: list[tuple[yaml.Node, object, object]] = [(node, root, 0)]
    while stack:
        current, holder, slot = stack.pop()
        value: object
        if isinstance(current, yaml.MappingNode):
            value = {}
            for k, v in current.value:
                key = str(scalar_value(k)) if isinstance(k, yaml.ScalarNode) else "?"
                value[key] = None  # type: ignore[index]
                stack.append((v, value, key))
        elif isinstance(current, yaml.SequenceNode):
            value = [None] * len(current.value)
            stack.extend((v, value, i) for i, v in enumerate(current.value))
        else:
            value = scalar_value(current)  # type: ignore[arg-type]
        holder[slot] = value  # type: ignore[index]
    return root[0]


def run(args: argparse.Namespace) -> int:
    result = check_file(args.spec)
    if result.errors:
        sys.stdout.write(concise(result.errors, {}))
        return 1
    source, _ = load_bytes(args.spec, Path(args.spec).read_bytes())
    assert source is not None
    merged, _ = resolve(source)
    tree = merged.source.root if merged is not None else source.root
    chain = " <- ".join(merged.chain) if merged is not None else args.spec
    print(f"# Resolved from {chain} by statechart resolve.")
    print(yaml.safe_dump(plain(tree), sort_keys=False, allow_unicode=True, width=100), end="")
    return 0
