"""Generated code is clean under a user's own tools at their defaults, wherever it is
generated: `ruff check --isolated` (ruff's default rules, no project settings) and
`mypy --strict .` from the project root, next to the application that imports it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).resolve().parent.parent

APP = '''from generated.agent_run import AgentRun, AgentRunStatus
from generated.order import Order, OrderState


def paid() -> bool:
    run = Order()
    run.pay(paymentId="p-1")
    return run.status is OrderState.paid and AgentRun().status is AgentRunStatus.created
'''


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str | None = None) -> Path:
    """A new project (`statechart init`) with this repository's specs too, built; `code`: the
    configuration's `output.code`."""
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    for spec in ("agent_run.yaml", "support_run.yaml"):
        shutil.copy(ROOT / "specs" / spec, tmp_path / "specs" / spec)
    if code is not None:
        with (tmp_path / "pyproject.toml").open("a") as f:
            f.write(f'output.code = "{code}"\n')
    assert main(["build"]) == 0
    (tmp_path / "app.py").write_text(APP.replace("generated.", f"{code or 'generated'}."
                                                 .replace("/", ".")))
    return tmp_path / (code or "generated")


def _ruff_isolated(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache",
                           "."], cwd=folder, capture_output=True, text=True, timeout=60)


def test_generated_code_passes_ruff_defaults_and_is_a_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = _project(tmp_path, monkeypatch)
    capsys.readouterr()
    assert sorted(p.name for p in code.glob("*.py")) == [
        "__init__.py", "agent_run.py", "order.py", "support_run.py"]
    assert (code / "__init__.py").read_text().startswith(
        "# Generated from the specs by statechart-compiler. DO NOT EDIT.\n")
    done = _ruff_isolated(tmp_path)
    assert (done.returncode, done.stdout) == (0, "All checks passed!\n")


def test_the_projects_own_init_py_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    mine = '"""My application."""\n'
    (tmp_path / "src" / "shop").mkdir(parents=True)
    (tmp_path / "src" / "shop" / "__init__.py").write_text(mine)
    code = _project(tmp_path, monkeypatch, code="src/shop")
    assert (code / "__init__.py").read_text() == mine
    assert main(["build", "--check"]) == 0
    assert "__init__.py" not in capsys.readouterr().out


@pytest.mark.slow  # mypy --strict from a cold cache: several seconds
def test_mypy_strict_passes_in_a_new_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path, monkeypatch)
    # An editable install's import hook is invisible to mypy (pyproject.toml's mypy_path says
    # the same); an installed wheel is found without this.
    env = {**os.environ, "MYPYPATH": str(ROOT / "runtime")}
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "."],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in 5 source files")
