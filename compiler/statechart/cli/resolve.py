"""`statechart resolve SPEC`: print a spec as checked, with its `extends` chain merged in."""

from __future__ import annotations

import argparse
import sys

import yaml

from statechart.cli import colour, missing_paths
from statechart.linter import check_file
from statechart.overlay import resolve
from statechart.report import concise, inert
from statechart.spec_file import SpecFileError, read_spec
from statechart.yaml_source import MAP_TAG, SEQ_TAG, STR_TAG, load_bytes


def _acted_on(text: str) -> bool:
    """Whether `check`'s escaping (`report.inert`) would change this text, line breaks and tabs
    aside: a terminal would act on some of its characters (ESC, C1, a bidi override)."""
    return any(inert(line) != line for line in text.replace("\t", " ").split("\n"))


class _Dumper(yaml.SafeDumper):
    """Writes the merged node tree back as it was read: every scalar with its own text and
    quoting. The tags resolve as the loader's do (no implicit resolution at all), so nothing
    is re-typed on the way out: `0o17` stays `0o17`, `"1e3"` stays quoted, `1.50` stays `1.50`,
    and the output reads back as the same spec under the YAML 1.2 rules of `check`.

    A scalar with characters a terminal would act on is the exception: it is written
    double-quoted with YAML's own escapes (`\\e`, `\\x9B`, `\\u202E`). `check` shows such text as
    `<U+202E>`, but that would change the spec that `resolve` prints; the escapes read back as
    the same text and print as plain ASCII."""

    def resolve(self, kind: type, value: object, implicit: object) -> str:
        if kind is yaml.ScalarNode:
            return STR_TAG
        return SEQ_TAG if kind is yaml.SequenceNode else MAP_TAG

    def choose_scalar_style(self) -> str:
        if isinstance(self.event, yaml.ScalarEvent) and _acted_on(self.event.value):
            return '"'  # the one YAML style with escapes
        return super().choose_scalar_style()

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if not _acted_on(text):
            super().write_double_quoted(text, split)
            return
        # With `allow_unicode`, PyYAML escapes controls but writes U+0080 and up as they are,
        # bidi overrides included: for this one scalar, every non-ASCII character is escaped.
        self.allow_unicode = False
        try:
            super().write_double_quoted(text, split)
        finally:
            self.allow_unicode = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="a spec file")
    colour.add_argument(parser)


def run(args: argparse.Namespace) -> int:
    if missing_paths("resolve", [args.spec], files=True):
        return 2
    result = check_file(args.spec)
    if result.errors:  # stdout is the resolved YAML only: the problems go to stderr
        sys.stderr.write(concise(result.errors, {},
                                 colour=colour.enabled(args.color, sys.stderr)))
        return 1
    try:  # `check` read it a moment ago; it can still have been changed or removed since
        raw = read_spec(args.spec)
    except (OSError, SpecFileError) as exc:
        print(f"statechart resolve: {inert(str(exc))}", file=sys.stderr)
        return 1
    source, _ = load_bytes(args.spec, raw)
    if source is None:
        print(f"statechart resolve: {inert(args.spec)} changed while it was read; run it again",
              file=sys.stderr)
        return 1
    merged, _ = resolve(source)
    tree = merged.source.root if merged is not None else source.root
    assert tree is not None  # the spec passed `check`, so it is not empty
    chain = " <- ".join(merged.chain) if merged is not None else args.spec
    print(f"# Resolved from {inert(chain)} by statechart resolve.")
    sys.stdout.write(yaml.serialize(tree, Dumper=_Dumper, allow_unicode=True, width=100))
    return 0
