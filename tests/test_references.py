"""Docstrings, comments and docs name only files and modules that exist in this repository.

A reference a reader cannot open is worse than none: the fact it stands for must be stated
where it is used, or point at a file of the repo (docs/performance.md, tests/hostile/, ...).
"""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A relative path with a folder and a suffix, not part of a URL or of a longer path.
PATH = re.compile(r"(?<![\w.:/-])(?:\.\./)*[\w-]+(?:/[\w.*-]+)+\.[a-z0-9]+\b")
# A placeholder (`generated/NAME.py`) or a glob (`templates/docs_*.j2`) names no one file.
PLACEHOLDER = re.compile(r"(?:^|/)[A-Z]+\.|\*")
# `statechart.toml` and `tool.statechart.KEY` are the configuration's file and keys
# (docs/configuration.md), not modules.
MODULE = re.compile(r"(?<!tool\.)\bstatechart(?:_runtime)?(?!\.toml\b)(?:\.\w+)+")
# Citations of material that lives outside the repository.
OUTSIDE = re.compile(r"shared[/ ]research|hazard report", re.IGNORECASE)


def _texts() -> dict[str, str]:
    listed = subprocess.run(["git", "ls-files", "compiler", "runtime", "docs", "README.md"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    return {f: (ROOT / f).read_text(encoding="utf-8") for f in listed
            if not f.endswith((".png", ".svg", ".json"))}


def _where(text: str, match: re.Match[str]) -> int:
    return text.count("\n", 0, match.start()) + 1


def _telemetry_names() -> frozenset[str]:
    """The OpenTelemetry names the runtime defines in its `statechart` namespace (span
    attributes, instruments): names, not modules."""
    from statechart_runtime import metrics, otel

    return otel.ATTRIBUTES | metrics.INSTRUMENTS


def _resolves(dotted: str) -> bool:
    """`statechart.a.b` is a module, or an attribute of the longest module prefix, or an
    OpenTelemetry name of the runtime's."""
    if dotted in _telemetry_names():
        return True
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_every_path_named_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    # The README's quick start and the scaffold name the files of a new project (`init`, `new
    # payment`, `build`): they must exist there, in a project made the same way.
    monkeypatch.chdir(tmp_path)
    from statechart.cli import main

    assert main(["init"]) == 0
    assert main(["new", "payment"]) == 0
    assert main(["build"]) == 0
    capsys.readouterr()
    broken = []
    for file, text in _texts().items():
        bases = (ROOT, (ROOT / file).parent, ROOT / "compiler" / "statechart",
                 ROOT / "runtime" / "statechart_runtime", tmp_path)
        for m in PATH.finditer(text):
            if PLACEHOLDER.search(m.group()) or m.group().startswith("dist/"):
                continue  # dist/: the wheels the README builds (tests/test_install.py)
            if not any((base / m.group()).exists() for base in bases):
                broken.append(f"{file}:{_where(text, m)}: {m.group()}")
    assert broken == []


def test_every_module_named_exists() -> None:
    broken = [f"{file}:{_where(text, m)}: {m.group()}"
              for file, text in _texts().items() for m in MODULE.finditer(text)
              if not _resolves(m.group())]
    assert broken == []


def test_nothing_cites_material_outside_the_repository() -> None:
    found = [f"{file}:{_where(text, m)}: {m.group()}"
             for file, text in _texts().items() for m in OUTSIDE.finditer(text)]
    assert found == []
