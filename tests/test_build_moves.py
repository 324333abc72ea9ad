"""After a change of the configuration's output folders, the files `build` wrote before (its
header at their start) and no longer writes are orphans wherever they are in the project:
`build --check` names them, `build` deletes them; a file without our header is never touched,
nor the outputs of another project inside this one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "agent_run.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _configure(root: Path, code: str | None) -> None:
    output = f'[output]\ncode = "{code}"\n' if code else ""
    (root / "statechart.toml").write_text(f'build = ["code", "schema"]\n{output}')


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "specs").mkdir()
    shutil.copy(SPEC, tmp_path / "specs" / "agent_run.yaml")
    _configure(tmp_path, None)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_outputs_left_in_the_old_code_folder_are_orphans(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "build")[0] == 0
    mine = project / "generated" / "notes.py"
    mine.write_text("# my notes: quoting the header below is not having it\n"
                    "# Generated from specs/agent_run.yaml by statechart-compiler. DO NOT EDIT.\n")
    _configure(project, "src/app/generated")
    code, out = _run(capsys, "build", "--check")
    assert code == 1
    assert "orphaned  generated/__init__.py\n" in out
    assert "orphaned  generated/agent_run.py\n" in out
    assert "missing   src/app/generated/agent_run.py\n" in out
    assert "generated/agent_run.schema.json" not in out.replace("src/app/", "")  # still built
    assert "notes.py" not in out
    code, out = _run(capsys, "build")
    assert code == 0
    assert "deleted   generated/agent_run.py\n" in out
    assert sorted(p.name for p in (project / "generated").iterdir()) == [
        "agent_run.schema.json", "notes.py"]
    assert (project / "src" / "app" / "generated" / "agent_run.py").is_file()
    assert _run(capsys, "build", "--check")[0] == 0


def test_a_second_move_finds_the_outputs_of_the_first(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _configure(project, "one")
    assert _run(capsys, "build")[0] == 0
    _configure(project, "two/deeper")
    code, out = _run(capsys, "build")
    assert code == 0
    assert "deleted   one/__init__.py\ndeleted   one/agent_run.py\n" in out
    assert list((project / "one").iterdir()) == []


def test_another_project_inside_keeps_its_outputs(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inner = project / "services" / "billing"
    (inner / "specs").mkdir(parents=True)
    shutil.copy(SPEC, inner / "specs" / "agent_run.yaml")
    _configure(inner, "lib")
    assert main(["build", "--config", str(inner / "statechart.toml")]) == 0
    assert (inner / "lib" / "agent_run.py").is_file()
    capsys.readouterr()
    # Its outputs name `specs/agent_run.yaml` too, relative to its own root: not ours.
    code, out = _run(capsys, "build")
    assert code == 0 and "services/" not in out
    assert (inner / "lib" / "agent_run.py").is_file()
