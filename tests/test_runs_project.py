"""`statechart runs` in a project: `show` finds the run's spec through the project
configuration, `list --status` takes the spec's status vocabulary, and STATES lists the
innermost active states in the spec's order."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from codegen_support import import_source

from statechart.cli import main
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with the agent run spec, a store with a run waiting for approval and one
    reasoning, as the working directory."""
    (tmp_path / "specs").mkdir()
    shutil.copy(ROOT / "specs" / "agent_run.yaml", tmp_path / "specs")
    (tmp_path / "pyproject.toml").write_text('[tool.statechart]\nspecs = ["specs"]\n')
    ar = import_source((ROOT / "generated" / "agent_run.py").read_bytes(), tmp_path,
                       "agent_run")
    with open_store(tmp_path / "runs.db") as s:
        for run_id in ("paused", "working"):
            s.create(ar.AgentRun(run_id=run_id))
            for event in ("triage", "start"):
                s.fire(ar.AgentRun, run_id, event)
        s.fire(ar.AgentRun, "paused", "interrupt", interruptReason="approval")
        s.fire(ar.AgentRun, "paused", "await_approval", approvalId="a-1",
               approvalDeadline=dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _runs(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["runs", *argv, "--store", "runs.db"])
    out, err = capsys.readouterr()
    return code, out, err


def test_show_finds_the_spec_in_the_project(project: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _runs(capsys, "show", "paused")
    assert (code, err) == (0, "")
    assert out.startswith("run paused: agent_run version 2, revision 5\n")
    assert "  status:          waiting\n" in out
    assert "  active states:   interrupted, waiting_for_approval\n" in out
    assert _runs(capsys, "show", "paused", "--spec", "specs/agent_run.yaml")[1] == out


def test_show_without_a_spec_outside_the_project_says_what_to_do(
        project: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "specs" / "agent_run.yaml").rename(project / "agent_run.yaml")
    code, out, err = _runs(capsys, "show", "paused")
    assert (code, out) == (2, "")
    assert err == ("statechart runs show: run `paused` is a run of `agent_run`, and no spec "
                   "`agent_run` without errors is under the project's spec folders (the "
                   "configuration's `specs`); name its file: --spec FILE\n")


def test_list_status_is_the_status_vocabulary(project: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    spec = ["--spec", "specs/agent_run.yaml", "--format", "json"]
    code, out, _ = _runs(capsys, "list", "--status", "waiting", *spec)
    assert code == 0 and [r["run_id"] for r in json.loads(out)] == ["paused"]
    code, out, err = _runs(capsys, "list", "--status", "waiting_for_approval", *spec)
    assert (code, out) == (2, "")
    assert err.startswith("statechart runs list: --status: spec `agent_run` reports no status "
                          "`waiting_for_approval` (its statuses: created, triaging, running, "
                          "interrupted, waiting, resumed")
    assert err.endswith("`waiting_for_approval` is a nested state: use --state\n")
    code, _, err = _runs(capsys, "list", "--status", "waitin", *spec)
    assert code == 2 and err.endswith("; did you mean `waiting`?\n")


def test_list_states_are_the_innermost_in_the_specs_order(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _runs(capsys, "list")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert code == 0
    assert rows["paused"][3:5] == ["waiting", "waiting_for_approval"]
    assert rows["working"][3:5] == ["running", "reasoning"]
    code, out, _ = _runs(capsys, "list", "--format", "json")
    states = {r["run_id"]: r["states"] for r in json.loads(out)}
    # every active state, ancestors first, in the spec's order (not by name)
    assert states == {"paused": ["interrupted", "waiting_for_approval"],
                      "working": ["running", "reasoning"]}
