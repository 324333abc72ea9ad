"""The python-statemachine internals the runtime relies on are all in the installed release.

`statechart_runtime.library` lists them (`INTERNALS`) and the range of releases the tests
passed on (`SUPPORTED`); a release that moves one of them breaks every generated module, so
this test names what moved and what to do. CI runs the suite on the newest release of the
range and the conformance traces and the runtime's tests on the oldest too (`.ci/run`).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from statechart_runtime import library
from statechart_runtime.library import INTERNALS, SUPPORTED, Internal

ROOT = Path(__file__).resolve().parent.parent
INSTALLED = metadata.version("python-statemachine")


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3])


def _admits(specifier: str, version: str) -> bool:
    """Whether `version` satisfies a specifier of `>=` and `<` clauses (packaging's answer
    when it is installed)."""
    try:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version
    except ImportError:
        have = _release(version)
        for clause in specifier.split(","):
            op, bound = re.fullmatch(r"\s*(>=|<)\s*([\d.]+)\s*", clause).groups()  # type: ignore[union-attr]
            if (have >= _release(bound)) != (op == ">="):
                return False
        return True
    return Version(version) in SpecifierSet(specifier)


def test_the_installed_release_has_every_internal_the_runtime_relies_on() -> None:
    found = library.problems()
    if found:
        series = ".".join(INSTALLED.split(".")[:2])
        lowest = SUPPORTED.split(",")[0].removeprefix(">=")
        keep = (f"keep the dependency at {lowest} or above" if _admits(f"<{lowest}", INSTALLED)
                else f"keep the dependency below {series}")
        pytest.fail("\n".join(
            f"python-statemachine {series} moved `{internal.path}` ({problem}): the runtime "
            f"relies on it ({internal.use} in {internal.where}: {internal.why}; "
            f"statechart_runtime/library.py); {keep} or adapt"
            for internal, problem in found), pytrace=False)


def test_the_installed_release_is_in_the_supported_range() -> None:
    assert _admits(SUPPORTED, INSTALLED), (
        f"python-statemachine {INSTALLED} is installed, outside the range the runtime was "
        f"tested on ({SUPPORTED}, statechart_runtime/library.py)")


@pytest.mark.parametrize("pyproject", ["pyproject.toml", "runtime/pyproject.toml"])
def test_both_distributions_require_the_supported_range(pyproject: str) -> None:
    dependencies = tomllib.loads((ROOT / pyproject).read_text())["project"]["dependencies"]
    required = [d for d in dependencies if re.match(r"python-statemachine\b", d)]
    assert required == [f"python-statemachine{SUPPORTED}"], (
        f"{pyproject} must require python-statemachine{SUPPORTED}, as "
        "statechart_runtime/library.py's SUPPORTED says (one source of truth)")


def test_a_moved_internal_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    from statemachine.engines.sync import SyncEngine

    def microstep(self: object, steps: object, trigger: object) -> None: ...

    # The sample instances are built once, before the library is broken below (alone, or
    # first in a pytest-xdist worker, this test would otherwise build them broken).
    library._samples()
    defined = next(k for k in SyncEngine.__mro__ if "_select_transitions" in vars(k))
    monkeypatch.delattr(defined, "_select_transitions")
    monkeypatch.setattr(SyncEngine, "microstep", microstep)
    monkeypatch.setattr(library, "INTERNALS", (
        *INTERNALS, Internal("statemachine.StateMachine._no_such", "read", "nowhere", "test")))
    assert library.missing() == [
        "statemachine.engines.sync.SyncEngine._select_transitions "
        "(`statemachine.engines.sync.SyncEngine` has no `_select_transitions`)",
        "statemachine.engines.sync.SyncEngine.microstep "
        "(no parameter `transitions`, `trigger_data`)",
        "statemachine.StateMachine._no_such (`statemachine.StateMachine` has no `_no_such`)",
    ]


def test_the_list_is_unique_and_names_places_that_exist() -> None:
    """Each entry's `where` (`module:Class.function, function; module:...`) names a module of
    the runtime and functions or classes defined there: an entry whose place was renamed or
    removed must be updated (or dropped) with it."""
    keys = [(i.path, i.use) for i in INTERNALS]
    assert len(keys) == len(set(keys))
    runtime = ROOT / "runtime" / "statechart_runtime"
    for internal in INTERNALS:
        assert internal.path.split(".")[0] == "statemachine", internal
        for group in internal.where.split(";"):
            module, _, names = group.strip().partition(":")
            if module == "generated":
                continue
            source = (runtime / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8")
            for name in filter(None, (n.strip() for n in names.split(","))):
                last = name.split(".")[-1]
                assert re.search(rf"^\s*(def|class) {re.escape(last)}\b", source, re.M), (
                    f"{internal.path}: `{name}` is not in {module}.py; update "
                    "statechart_runtime/library.py")


def test_importing_the_list_builds_nothing_and_needs_no_compiler() -> None:
    code = ("import sys, statechart_runtime.library as l; "
            "print(l._samples.cache_info().currsize, "
            "sorted(m for m in sys.modules if m.split('.')[0] in ('statechart', 'statemachine')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "[]"]
