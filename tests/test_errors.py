"""One exception base: every exception class the compiler defines derives from
`statechart_runtime.errors.StatechartError`, and keeps the standard base it had, so that
`except StatechartError` catches all of them and existing `except ValueError` clauses still do.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import statechart
from statechart_runtime.errors import StatechartError

# The standard base each one had before, which callers may already catch.
KEPT_BASES = {
    "statechart.codegen.CodegenError": ValueError,
    "statechart.render.layout.LayoutError": RuntimeError,
    "statechart.render.highlight.HighlightError": ValueError,
    "statechart.outputs.OutputUnavailable": RuntimeError,
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(statechart.__path__, "statechart."):
        if info.name.endswith(".__main__"):  # runs the CLI when imported
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == info.name:
                found[f"{info.name}.{cls.__qualname__}"] = cls
    return found


CLASSES = _exception_classes()


def test_the_known_classes_are_found() -> None:
    assert set(KEPT_BASES) | {"statechart.cli.diff_command._Usage"} <= set(CLASSES)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_compiler_exception_is_a_statechart_error(name: str) -> None:
    cls = CLASSES[name]
    assert issubclass(cls, StatechartError), f"{name} does not derive from StatechartError"
    if name in KEPT_BASES:
        assert issubclass(cls, KEPT_BASES[name])


def test_a_layout_failure_is_caught_as_a_statechart_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from statechart.render import layout

    monkeypatch.setitem(layout.ENGINES, "graphviz-pure", "no-such-layout-program-xyz")
    with pytest.raises(StatechartError, match="not found"):
        layout.layout("digraph { a }", "svg")
