"""The runtime is laid out by layer (README, Layout): `chart/`, `run/`, `psm/`, `testing/`, and
the store. Only `psm/` imports python-statemachine (`statemachine`); everything else names the
library through `statechart_runtime.psm`. The module paths written before the layout still
import, as the same module objects."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parent.parent / "runtime" / "statechart_runtime"


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an `import` or `from ... import` names, anywhere in the module (functions
    included), with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
    return found


def statemachine_imports_outside_psm(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "psm":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend(f"{relative}:{line} imports {name}" for line, name in imported_modules(tree)
                     if name.split(".")[0] == "statemachine")
    return found


def test_only_psm_imports_python_statemachine() -> None:
    assert statemachine_imports_outside_psm(RUNTIME) == []


def test_the_scan_finds_an_import_outside_psm(tmp_path: Path) -> None:
    """The check can fail: a module outside `psm/` that imports the library, even inside a
    function, is named."""
    (tmp_path / "psm").mkdir()
    (tmp_path / "psm" / "machine.py").write_text("from statemachine import StateMachine\n")
    (tmp_path / "chart").mkdir()
    (tmp_path / "chart" / "leak.py").write_text(
        "def f():\n    import statemachine.transition\n")
    assert statemachine_imports_outside_psm(tmp_path) == [
        "chart/leak.py:2 imports statemachine.transition"]


MOVED = {
    "semantics": "chart.chart", "events": "chart.events", "timers": "chart.timers",
    "spec": "chart.spec", "kernel": "chart.kernel", "values": "chart.values",
    "machine": "psm.machine", "library": "psm.library", "explore": "testing.explore",
    "coverage": "testing.coverage", "coverage_report": "testing.coverage_report",
    "pytest_plugin": "testing.pytest_plugin", "record": "run.record", "replay": "run.replay",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_path_written_before_the_layout_is_the_same_module(old: str, new: str) -> None:
    """The old path gives the moved module itself (by its name: a test elsewhere that drops the
    runtime from sys.modules and imports it again makes a second copy of both)."""
    moved = importlib.import_module(f"statechart_runtime.{old}")
    assert moved.__name__ == f"statechart_runtime.{new}"


def test_the_run_and_testing_packages_keep_their_modules_names() -> None:
    from statechart_runtime import testing
    from statechart_runtime.run import EventNotAccepted, Run
    from statechart_runtime.run import run as run_module

    assert (Run, EventNotAccepted) == (run_module.Run, run_module.EventNotAccepted)
    assert testing.paths.__module__ == "statechart_runtime.testing.spec_paths"
    assert testing.Space.__module__ == "statechart_runtime.testing.explore"


# The store's module paths from before it was a package (statechart_runtime.store.*).
STORE_PATHS = ("store_checks", "store_connection", "store_pages", "store_postgres",
               "store_queries", "store_read", "store_restore", "store_schema", "store_sqlite",
               "store_versions", "store_writes")
OLD_PATHS = frozenset(MOVED) | frozenset(STORE_PATHS)
COMPILER = RUNTIME.parent.parent / "compiler" / "statechart"
BENCH = RUNTIME.parent.parent / "bench"


def old_path_imports(root: Path) -> list[str]:
    """The imports of a path kept only for code written before (`MOVED`, `STORE_PATHS`) by
    the code under `root`, but for those paths' own modules: the project imports each module
    from its home."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.parent == RUNTIME and path.stem in OLD_PATHS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            found.extend(f"{path.relative_to(root)}:{node.lineno} imports {name}"
                         for name in names if name.removeprefix("statechart_runtime.")
                         in OLD_PATHS and name.startswith("statechart_runtime."))
    return found


@pytest.mark.parametrize("root", [RUNTIME, COMPILER, BENCH], ids=["runtime", "compiler", "bench"])
def test_the_project_imports_modules_from_their_homes(root: Path) -> None:
    assert old_path_imports(root) == []


def test_the_old_path_scan_finds_one(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from statechart_runtime import store_pages, run\n"
                                   "def f():\n    from statechart_runtime.values import now\n")
    assert old_path_imports(tmp_path) == [
        "a.py:1 imports statechart_runtime.store_pages",
        "a.py:3 imports statechart_runtime.values"]
