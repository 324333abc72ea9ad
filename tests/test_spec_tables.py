"""`statechart.codegen.spec_tables`: the spec's tables built from the model are the generated
module's `_SPEC`, bound as its machine class binds it (what `statechart paths` explores
instead of the compiled class).

Compared on every spec file of the repository that checks without errors, the generated
benchmark specs, and the conformance traces' specs (history, multi-target, `in:`, `always`,
timers, descriptors): every table the runtime reads, and the bound alternatives in order.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, traced_spec
from conformance_traces import trace_files

from statechart import paths_output
from statechart.codegen.in_memory import run_class
from statechart.codegen.spec_tables import spec_tables
from statechart.linter import check_file
from statechart.model import Spec
from statechart_runtime import testing
from statechart_runtime.chart.spec import SpecTables
from statechart_runtime.run.run import spec_of

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from genspec import generate as generated_spec  # noqa: E402


def _files() -> list[Path]:
    found = [p for folder in ("specs", "tests") for p in sorted((ROOT / folder).rglob("*.yaml"))
             if "node_modules" not in p.parts]
    return [p for p in found if (r := check_file(p)).spec is not None and not r.errors]


def _plain(value: Any) -> Any:
    """A table as comparable data: an enum class as its members' names and values."""
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return tuple((m.name, m.value) for m in value)
    if isinstance(value, enum.Enum):
        return (type(value).__name__, value.name, value.value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return sorted(map(repr, value))
    return value


def _tables(tables: SpecTables) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SpecTables.__slots__:
        value = getattr(tables, name)
        if name in ("invalid", "limit", "missing"):  # the module's own error subclasses
            continue
        if name == "codec":
            value = (value.types, _plain(value.enums))
        elif name == "alternatives":
            value = (value.declared, list(value.on), value.sources, value.eventless,
                     value.fields,
                     [(a.position, a.in_states, a.given, a.clears, dict(a.assigns), a.sets)
                      for found in value.on.values() for a in found])
        elif name == "chart":
            value = (value.order, value.initial_configuration())
        elif name == "timers":
            value = vars(value) if hasattr(value, "__dict__") else \
                {s: getattr(value, s) for s in type(value).__slots__}
        elif name == "compiler":
            continue  # the module's says which compiler wrote it: the same string
        out[name] = _plain(value)
    return out


def _same(spec: Spec) -> None:
    direct = spec_tables(spec)
    compiled = spec_of(run_class(spec))
    assert _tables(direct) == _tables(compiled), spec.name
    # The paths as the command prints them (an enum field's placeholder is a member of each
    # source's own enum class, so the `Paths` themselves differ in that only).
    for cover in testing.COVERS:
        found = testing.paths(direct, cover, max_configurations=300)
        expected = testing.paths(run_class(spec), cover, max_configurations=300)
        assert paths_output.as_json(spec, found) == paths_output.as_json(spec, expected), \
            (spec.name, cover)
        assert paths_output.text(spec, found) == paths_output.text(spec, expected)


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_spec_files(path: Path) -> None:
    spec = check_file(path).spec
    assert spec is not None
    _same(spec)


@pytest.mark.parametrize("nested", [False, True])
def test_generated_specs(nested: bool) -> None:
    spec = checked_text(generated_spec(30, nested), "gen.yaml")
    assert spec is not None
    _same(spec)


# Every family, a third of its specs (the rest: the same code); of those, every eighth in the
# default run (about a second each), the others `slow` (`pytest -m slow`, a CI step).
TRACED = [trace for _, _, part in trace_files() for trace in part[::3]]


@pytest.mark.parametrize("trace", [
    trace if index % 8 == 0 else pytest.param(trace, marks=pytest.mark.slow)
    for index, trace in enumerate(TRACED)], ids=[trace["name"] for trace in TRACED])
def test_conformance_specs(trace: dict[str, Any]) -> None:
    spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
    assert spec is not None
    _same(spec)
