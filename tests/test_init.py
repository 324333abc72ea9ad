"""`statechart init` and `statechart new`: a new project from an empty folder, as the README's
quick start runs it, and what they refuse; `check` in a folder with no project; the editor
schema that `build` and `schema --write` keep current."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # `statechart` and `python` of this environment


def _quick_start() -> list[str]:
    """The command lines of the README's quick start, without their comments."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- quick-start:.*?-->\n```sh\n(.*?)```", text, re.DOTALL)
    assert block is not None, "the README has no quick-start block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_quick_start_works_in_an_empty_folder(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    outputs = []
    for line in _quick_start():
        done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        outputs.append(done.stdout)
    assert "created specs/order.yaml" in outputs[0]
    assert outputs[1] == "1 spec checked: no problems.\n"
    assert "created   generated/order.py" in outputs[2]
    assert outputs[3] == "OrderState.paid\n"
    assert outputs[4] == "created specs/payment.yaml\n"
    assert "missing   generated/payment.py" in outputs[5]
    for rel in ("generated/payment.py", "docs/specs/order.md", "specs/spec.schema.json",
                ".pre-commit-config.yaml"):
        assert (tmp_path / rel).is_file(), rel
    again = subprocess.run([BIN / "statechart", "build", "--check"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_init_refuses_to_overwrite_and_names_each_file(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "order.yaml").write_text("mine\n")
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    code, out, err = _run(capsys, "init", str(tmp_path))
    assert (code, out) == (1, "")
    assert err == (f"statechart init: {tmp_path} already has specs/order.yaml, "
                   ".pre-commit-config.yaml; nothing written (move them away, or run "
                   "`statechart init` in a new folder)\n")
    assert (tmp_path / "specs" / "order.yaml").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == [
        ".pre-commit-config.yaml", "order.yaml", "specs"]


def test_init_refuses_a_folder_that_is_a_project_already(capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path) -> None:
    (tmp_path / "statechart.toml").write_text('specs = ["specs"]\n')
    code, _, err = _run(capsys, "init", str(tmp_path))
    assert code == 1
    assert "already has statechart.toml; nothing written" in err


def test_init_adds_its_section_to_an_existing_pyproject(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:
    mine = '[project]\nname = "shop"\nversion = "1"\n\n[tool.ruff]\nline-length = 88'
    (tmp_path / "pyproject.toml").write_text(mine)
    code, out, err = _run(capsys, "init", str(tmp_path / "."))
    assert (code, err) == (0, "")
    assert "added [tool.statechart] to pyproject.toml\n" in out
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith(mine + "\n\n[tool.statechart]\n")
    data = tomllib.loads(text)
    assert data["tool"]["ruff"] == {"line-length": 88}
    assert data["tool"]["statechart"] == {"specs": ["specs"],
                                          "editor-schema": "specs/spec.schema.json"}


def test_init_refuses_a_pyproject_that_is_not_toml(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\n")
    code, _, err = _run(capsys, "init", str(tmp_path))
    assert code == 1
    assert "pyproject.toml is not valid TOML" in err and "nothing written" in err
    assert not (tmp_path / "specs").exists()


def test_new_adds_a_spec_that_checks_clean(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, "init")[0] == 0
    assert _run(capsys, "new", "payment") == (0, "created specs/payment.yaml\n", "")
    spec = (tmp_path / "specs" / "payment.yaml").read_text()
    assert spec.startswith("# yaml-language-server: $schema=spec.schema.json\n")
    assert _run(capsys, "check") == (0, "2 specs checked: no problems.\n", "")
    assert _run(capsys, "new", "payment") == (
        1, "", "statechart new: specs/payment.yaml already exists; nothing written\n")
    code, _, err = _run(capsys, "new", "Payment-2")
    assert code == 2
    assert "`Payment-2` is not a spec name" in err


def test_check_in_an_empty_folder_says_to_run_init(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for command in ("check", "build"):
        assert _run(capsys, command) == (
            2, "", f"statechart {command}: no such file or folder: specs (no project here: "
                   "`statechart init` starts one; or name the spec files: "
                   f"`statechart {command} PATH`)\n")
    # A path the user named is a plain usage error: they know where they are.
    assert _run(capsys, "check", "nope")[2] == "statechart check: no such file or folder: nope\n"


def test_build_check_reports_a_stale_editor_schema_and_schema_write_renews_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _run(capsys, "init")
    schema = tmp_path / "specs" / "spec.schema.json"
    assert json.loads(schema.read_text())["$comment"].startswith(
        "Generated by statechart-compiler")
    _run(capsys, "build")
    assert _run(capsys, "build", "--check")[0] == 0
    schema.write_text(schema.read_text().replace('"title"', '"titel"'))
    code, out, _ = _run(capsys, "build", "--check")
    assert code == 1
    assert "stale     specs/spec.schema.json\n" in out
    assert _run(capsys, "schema", "--write") == (0, "", "wrote specs/spec.schema.json\n")
    assert _run(capsys, "build", "--check")[0] == 0
    assert _run(capsys, "schema", "--write") == (0, "", "unchanged specs/spec.schema.json\n")


def test_schema_write_without_a_configured_file_says_what_to_set(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "schema", "--write")
    assert (code, out) == (2, "")
    assert 'set `editor-schema = "specs/spec.schema.json"` in pyproject.toml' in err


def test_editor_schema_must_be_a_path_inside_the_project(capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "statechart.toml").write_text('editor-schema = "../schema.json"\n')
    code, _, err = _run(capsys, "schema", "--write")
    assert code == 2
    assert err == (f"statechart schema: {tmp_path / 'statechart.toml'}:1: `editor-schema`: "
                   "`../schema.json` must be a path inside the project (relative, without "
                   "`..`)\n")
