"""Base specs from installed packages: `extends: pkg:PACKAGE/PATH` names a spec a Python
package ships as package data (versioned with the package); statechart-compiler ships the
agent run (`pkg:statechart/bases/agent_run.yaml`). check, resolve, diff --base, build (code,
docs, coverage tables) work with it, and generated files name the base by its reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "compiler" / "statechart" / "bases" / "agent_run.yaml"
OVERLAY = """\
extends: pkg:statechart/bases/agent_run.yaml
statechart: platform_run
states:
  waiting_for_approval:
    description: Waiting for the platform team's approval.
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_shipped_agent_run_is_the_repositorys_without_its_editor_line() -> None:
    """One definition: specs/agent_run.yaml, copied as package data without its first line
    (the editor's schema path is relative to specs/, and wrong anywhere else)."""
    mine = (ROOT / "specs" / "agent_run.yaml").read_text().splitlines(keepends=True)
    assert mine[0].startswith("# yaml-language-server:")
    assert SHIPPED.read_text() == "".join(mine[1:])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "platform_run.yaml").write_text(OVERLAY)
    (tmp_path / "statechart.toml").write_text("build = ['code', 'schema', 'docs']\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_resolve_diff_and_build_work_with_a_package_base(
        capsys: pytest.CaptureFixture[str], project: Path) -> None:
    assert _run(capsys, "check", "specs/platform_run.yaml")[0] == 0
    code, out, _ = _run(capsys, "resolve", "specs/platform_run.yaml")
    assert code == 0 and "statechart: platform_run" in out and "waiting_for_approval" in out
    code, out, _ = _run(capsys, "diff", "--base", "specs/platform_run.yaml")
    assert code == 0
    code, _, err = _run(capsys, "build")
    assert code == 0, err
    module = (project / "generated" / "platform_run.py").read_text()
    assert "'pkg:statechart/bases/agent_run.yaml'" in module  # coverage names the base so
    assert str(ROOT) not in module
    page = (project / "docs" / "specs" / "platform_run.md").read_text()
    assert "This spec extends `pkg:statechart/bases/agent_run.yaml`" in page
    assert "](agent_run.md)" not in page  # no page of this project to link to


@pytest.mark.parametrize(("ref", "says"), [
    ("pkg:no_such_package_here/x.yaml", "no installed Python package `no_such_package_here`"),
    ("pkg:statechart/bases/agent_rn.yaml", "has no `bases/agent_rn.yaml`"),
    ("pkg:statechart", "is not `pkg:PACKAGE/PATH`"),
    ("pkg:statechart/../specs/x.yaml", "is not `pkg:PACKAGE/PATH`"),
])
def test_a_bad_package_reference_is_an_overlay_error(
        capsys: pytest.CaptureFixture[str], project: Path, ref: str, says: str) -> None:
    (project / "specs" / "platform_run.yaml").write_text(
        OVERLAY.replace("pkg:statechart/bases/agent_run.yaml", ref))
    code, out, _ = _run(capsys, "check", "specs/platform_run.yaml", "--format", "concise")
    assert code == 1 and "error[overlay]" in out and says in out, out
