"""A PATH that does not exist: the same usage error in every command and output format.

`statechart COMMAND: no such file or folder: PATH` on stderr, nothing on stdout, exit 2, and
nothing done (no diagnostic in the output format, no exit 1, no file written). `rule` and
`schema` take no path; `rule`'s unknown id is already a usage error (tests/test_cli_check.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).resolve().parent.parent
AGENT_RUN = ROOT / "specs" / "agent_run.yaml"
MISSING = "no/such.yaml"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with one committed spec, as the working directory."""
    (tmp_path / "specs").mkdir()
    shutil.copy(AGENT_RUN, tmp_path / "specs" / "agent_run.yaml")
    for argv in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "1"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True, capture_output=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


SPEC = "specs/agent_run.yaml"
COMMANDS = [
    *[["check", "--format", fmt, MISSING] for fmt in
      ("full", "concise", "json", "github", "sarif")],
    ["check", SPEC, MISSING],  # one good path does not make a missing one a finding
    ["build", MISSING],
    ["build", "--check", MISSING],
    ["build", "--check", SPEC, MISSING],
    *[["render", MISSING, "--format", fmt] for fmt in ("svg", "png", "dot", "mermaid",
                                                        "scxml")],
    ["import", MISSING],
    ["import", MISSING, "-o", "specs/imported.yaml"],
    ["render", SPEC, "--record", MISSING],
    ["resolve", MISSING],
    *[["paths", MISSING, "--format", fmt] for fmt in ("text", "json")],
    ["diff", MISSING, SPEC],
    ["diff", SPEC, MISSING],
    *[["diff", "--against", "HEAD", "--format", fmt, MISSING] for fmt in
      ("full", "concise", "json", "github", "sarif")],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_missing_path_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str],
                                         argv: list[str]) -> None:
    before = sorted(p.relative_to(project) for p in project.rglob("*") if ".git" not in p.parts)
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"statechart {argv[0]}: no such file or folder: {MISSING}\n")
    after = sorted(p.relative_to(project) for p in project.rglob("*") if ".git" not in p.parts)
    assert after == before  # nothing written


@pytest.mark.parametrize("argv", [["render", "specs"], ["resolve", "specs"], ["paths", "specs"],
                                  ["diff", SPEC, "specs"], ["import", "specs"]], ids=" ".join)
def test_a_folder_where_a_spec_file_is_needed_is_a_usage_error(
        project: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"statechart {argv[0]}: a folder, not a spec file: specs\n")


def test_diff_against_a_ref_still_reports_a_spec_deleted_since(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Missing here but present at the ref is not a mistake: it is the change to report."""
    (project / SPEC).unlink()
    code = main(["diff", "--against", "HEAD", "--format", "concise", SPEC])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""
    assert out.startswith("HEAD:specs/agent_run.yaml:1:1: error[spec-removed]: ")
