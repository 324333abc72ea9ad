"""`statechart resolve SPEC`: print a spec as checked, with its `extends` chain merged in."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
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
    # Each node to convert, with the setter that puts its value in its parent's slot.
    stack: list[tuple[yaml.Node, Callable[[object], None]]] = [(node, partial(root.__setitem__, 0))]
    while stack:
        current, put = stack.pop()
        value: object
        if isinstance(current, yaml.MappingNode):
            mapping: dict[str, object] = {}
            for k, v in current.value:
                key = str(scalar_value(k)) if isinstance(k, yaml.ScalarNode) else "?"
                mapping[key] = None  # the key's place in order; its value comes later
                stack.append((v, partial(mapping.__setitem__, key)))
            value = mapping
        elif isinstance(current, yaml.SequenceNode):
            items: list[object] = [None] * len(current.value)
            stack.extend((v, partial(items.__setitem__, i)) for i, v in enumerate(current.value))
            value = items
        else:
            value = scalar_value(current)  # type: ignore[arg-type]
        put(value)
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
    assert tree is not None  # the spec passed `check`, so it is not empty
    chain = " <- ".join(merged.chain) if merged is not None else args.spec
    print(f"# Resolved from {chain} by statechart resolve.")
    print(yaml.safe_dump(plain(tree), sort_keys=False, allow_unicode=True, width=100), end="")
    return 0
