"""`library.INTERNALS` is checked mechanically (issue 28): an AST scan of the runtime's uses of
python-statemachine, compared with the list; an unlisted use fails here.

What the scan sees, in every module of the runtime:
- every name imported from `statemachine` or one of its modules (`from statemachine.callbacks
  import CallbackGroup` is `statemachine.callbacks.CallbackGroup`): listed when an entry's path
  is that name or starts with it;
- every method a class of the runtime defines over a base imported from the library, which the
  base has too (an override): listed as `BASE.method` (the base's path as the entry writes it);
- every private attribute read or written (`x._name`, `self` included) that the runtime does not
  define itself (as a function, a class attribute, or an attribute it assigns): listed when an
  entry's path has it as one of its parts.
Public attributes read on the library's objects are not found statically (their types are not
known without running): the list keeps naming those by hand, and its own test checks they exist.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from statechart_runtime.psm.library import INTERNALS

RUNTIME = Path(__file__).resolve().parent.parent / "runtime" / "statechart_runtime"
PATHS = [internal.path for internal in INTERNALS]


def modules() -> list[tuple[str, ast.Module]]:
    return [(path.relative_to(RUNTIME).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted(RUNTIME.rglob("*.py"))]


def library_imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted path of what it names in the library."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and node.module.split(".")[0] == "statemachine":
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "statemachine":
                    names[alias.asname or alias.name] = alias.name
    return names


def resolve(path: str) -> object:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise LookupError(path)


def listed_path(path: str) -> bool:
    return any(p == path or p.startswith(path + ".") for p in PATHS)


def listed_part(name: str) -> bool:
    return any(name in p.split(".") for p in PATHS)


def overrides_listed(base: type, method: str) -> bool:
    """Whether an entry names `method` on `base` or on a class `base` inherits it from."""
    return any(path.endswith("." + method) and resolve(path.rsplit(".", 1)[0]) in base.__mro__
               for path in PATHS)


def private_attributes(tree: ast.Module) -> list[tuple[int, str, str]]:
    """(line, name, code) of every `x._name` (not a dunder; `_sc_*` are the runtime's own), and
    every `getattr`/`hasattr`/`setattr` of such a name written as a string."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr, ast.unparse(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) > 1 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            found.append((node.lineno, node.args[1].value, ast.unparse(node)))
    return [(line, name, text) for line, name, text in found
            if name.startswith("_") and not name.endswith("__") and not name.startswith("_sc_")]


def defined_by_runtime(trees: list[tuple[str, ast.Module]]) -> set[str]:
    """Private names the runtime gives things itself (not counting overrides, checked apart)."""
    names: set[str] = set()
    for _module, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


def unlisted() -> list[str]:
    trees = modules()
    own = defined_by_runtime(trees)
    missing: list[str] = []
    for module, tree in trees:
        imported = library_imports(tree)
        missing += [f"{module}: imports {path}" for path in imported.values()
                    if not listed_path(path)]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                if not (isinstance(base, ast.Name) and base.id in imported):
                    continue
                base_object = resolve(imported[base.id])
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                            and hasattr(base_object, item.name) and not overrides_listed(
                                base_object, item.name):
                        missing.append(f"{module}: {node.name}.{item.name} overrides "
                                       f"{imported[base.id]}.{item.name}")
        missing += [f"{module}:{line}: {text}" for line, name, text in private_attributes(tree)
                    if name not in own and not listed_part(name)]
    return sorted(set(missing))


def test_every_use_the_scan_finds_is_listed() -> None:
    assert unlisted() == []


def test_an_entry_taken_out_is_found_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan can fail: without the entries of `_class_listeners`, `CallbackGroup` and
    `SyncEngine.microstep`, it names their uses."""
    gone = ("statemachine.StateMachine._class_listeners",
            *(f"statemachine.callbacks.CallbackGroup.{g}" for g in ("COND", "ENTER", "EXIT", "ON")),
            "statemachine.engines.sync.SyncEngine.microstep")
    monkeypatch.setattr(sys.modules[__name__], "PATHS", [p for p in PATHS if p not in gone])
    found = unlisted()
    assert "psm/machine.py: imports statemachine.callbacks.CallbackGroup" in found
    assert "psm/machine.py: _Engine.microstep overrides statemachine.engines.sync.SyncEngine.microstep" in found
    assert any("getattr(machine_class, '_class_listeners', None)" in f for f in found), found
