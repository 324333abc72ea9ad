"""The compiler stays fully typed (`mypy --strict`) and lint-clean (`ruff check`).

Both tools run with the project's own configuration in pyproject.toml, from the repo root.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_mypy_strict_passes() -> None:
    result = _run("mypy", "--config-file", "pyproject.toml", "--strict", "compiler/statechart",
                  "runtime/statechart_runtime")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_passes() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr
