"""`statechart resolve SPEC`: print a spec as checked, with its `extends` chain merged in."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from statechart.linter import check_file
from statechart.overlay import resolve
from statechart.report import concise
from statechart.yaml_source import MAP_TAG, SEQ_TAG, STR_TAG, load_bytes

HELP = "print the resolved YAML of a spec that extends another (overlay merged onto its base)"


class _Dumper(yaml.SafeDumper):
    """Writes the merged node tree back as it was read: every scalar with its own text and
    quoting. The tags resolve as the loader's do (no implicit resolution at all), so nothing
    is re-typed on the way out: `0o17` stays `0o17`, `"1e3"` stays quoted, `1.50` stays `1.50`,
    and the output reads back as the same spec under the YAML 1.2 rules of `check`."""

    def resolve(self, kind: type, value: object, implicit: object) -> str:
        if kind is yaml.ScalarNode:
            return STR_TAG
        return SEQ_TAG if kind is yaml.SequenceNode else MAP_TAG


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="a spec file")


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
    sys.stdout.write(yaml.serialize(tree, Dumper=_Dumper, allow_unicode=True, width=100))
    return 0
