"""No module reads another object's private attributes (issue 28): a count, whose goal is 0.

The rule, on the AST of every module of the runtime (`runtime/statechart_runtime`) and of the
compiler (`compiler/statechart`): an attribute read (`x._name`, load context) counts when
- the name starts with one underscore and is not a dunder (`__init__`, `__dict__`);
- `x` is not `self` or `cls`, nor `super()` (the object's own attributes, and its class's);
- the name is not a named tuple's public API (`_replace`, `_asdict`, `_fields`, `_make`).
A module's own private names (`_helper(...)`, `_CACHE`) are names, not attribute reads, and do not
count. Writes (`x._name = ...`) are not counted: the reads are what tie a module to another's
insides.

What is left is listed below, by module and attribute, with the number of reads and a one-line
reason; the run store's modules have their own list, owned by the store rewrite (issue 26),
which empties it. A read added anywhere fails the test; a read removed fails it too until the
list is updated, so the count only goes down.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (ROOT / "runtime" / "statechart_runtime", ROOT / "compiler" / "statechart")
NAMED_TUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make"})

# (module, attribute): (reads, why it stays for now).
KEPT: dict[tuple[str, str], tuple[int, str]] = {
    ("statechart/cli/__init__.py", "_actions"): (1, "argparse has no public way to list a "
                                                  "parser's subcommands"),
    ("statechart/cli/__init__.py", "_SubParsersAction"): (1, "the same: the subcommands' type"),
    ("statechart_runtime/psm/machine.py", "_specs"): (2, "python-statemachine's callback specs "
                                                      "(library.INTERNALS)"),
    ("statechart_runtime/run/run.py", "_conditions_match"): (1, "python-statemachine's engine "
                                                             "asks a transition's guards, a "
                                                             "model= listener's too "
                                                             "(library.INTERNALS)"),
}

# The run store's modules (store*.py, worker.py) read none since the store rewrite (issue 26):
# kept empty, so that a new read fails here.
STORE_KEPT: dict[tuple[str, str], int] = {}


def private_reads(source: str) -> Counter[str]:
    """The attributes of the rule above that `source` reads, with how often."""
    found: Counter[str] = Counter()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
            continue
        name, owner = node.attr, node.value
        if not name.startswith("_") or name.endswith("__") or name in NAMED_TUPLE_API:
            continue
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                and owner.func.id == "super"):
            continue
        found[name] += 1
    return found


def counted() -> Counter[tuple[str, str]]:
    found: Counter[tuple[str, str]] = Counter()
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            module = path.relative_to(package.parent).as_posix()
            for name, reads in private_reads(path.read_text(encoding="utf-8")).items():
                found[module, name] += reads
    return found


def is_store(module: str) -> bool:
    name = module.removeprefix("statechart_runtime/")
    return name.startswith(("store", "worker"))


def test_the_private_reads_left_are_the_listed_ones() -> None:
    found = counted()
    ours = {key: reads for key, reads in found.items() if not is_store(key[0])}
    assert ours == {key: reads for key, (reads, _why) in KEPT.items()}


def test_the_store_reads_are_no_more_than_its_list() -> None:
    """The store rewrite removes these; a new one fails here."""
    found = counted()
    store = {key: reads for key, reads in found.items() if is_store(key[0])}
    assert {key: reads for key, reads in store.items()
            if reads > STORE_KEPT.get(key, 0)} == {}


def test_the_benches_read_no_private_attributes() -> None:
    """A bench measures through the public API (a store's, a run's), or a connection of its
    own to the database: what it times is what users can call."""
    found = {path.name: dict(reads) for path in sorted((ROOT / "bench").rglob("*.py"))
             if (reads := private_reads(path.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_rule_counts_what_it_says() -> None:
    source = """
import argparse
_CACHE = {}
class A:
    def f(self, other):
        self._mine + cls._also + super()._base + other.__dict__ + _helper(_CACHE)
        point._replace(x=1)
        other._theirs = 1
        return other._theirs + other._theirs + argparse._SubParsersAction
"""
    assert private_reads(source) == Counter({"_theirs": 2, "_SubParsersAction": 1})
