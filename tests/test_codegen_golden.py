"""Golden outputs: tests/golden/<case>/spec.yaml and the files generated from it.

Run with UPDATE_GOLDEN=1 to rewrite the expected files after an intended change, then review
the diff. Every expected module must also compile, import, pass `mypy --strict` and `ruff`,
and keep its record in step with python-statemachine.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from codegen_support import (
    checked_spec,
    generate,
    import_source,
    parts,
    psm_configuration,
    validator,
    walk,
)

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "spec.yaml").is_file())
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
ROOT = Path(__file__).resolve().parents[1]


def outputs_of(case: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.chdir(GOLDEN / case)  # headers name the spec relative to where build runs
    return {Path(rel).name: data for rel, data in generate(checked_spec("spec.yaml")).items()}


@pytest.mark.parametrize("case", CASES)
def test_outputs_match_the_golden_files(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    produced = outputs_of(case, monkeypatch)
    folder = GOLDEN / case
    if UPDATE:
        for old in folder.iterdir():
            if old.name != "spec.yaml" and old.suffix in (".py", ".json"):
                old.unlink()
        for name, data in produced.items():
            (folder / name).write_bytes(data)
    expected = {p.name: p.read_bytes() for p in folder.iterdir()
                if p.name != "spec.yaml" and p.suffix in (".py", ".json")}
    assert set(produced) == set(expected), "run with UPDATE_GOLDEN=1 to add or remove files"
    for name, data in produced.items():
        assert data == expected[name], f"{case}/{name} differs; UPDATE_GOLDEN=1 rewrites it"


@pytest.mark.parametrize("case", CASES)
def test_generation_is_deterministic(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert outputs_of(case, monkeypatch) == outputs_of(case, monkeypatch)


@pytest.mark.parametrize("case", CASES)
def test_module_is_ascii_and_only_imports_stdlib_statemachine_and_the_runtime(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    produced = outputs_of(case, monkeypatch)
    source = next(data for name, data in produced.items() if name.endswith(".py"))
    text = source.decode("ascii")
    tree = ast.parse(text)
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    # python-statemachine is imported through the runtime (statechart_runtime.api).
    assert roots - {"__future__", "statechart_runtime"} <= set(sys.stdlib_module_names)
    assert "statechart_runtime" in roots


@pytest.mark.parametrize("case", CASES)
def test_module_imports_and_keeps_its_record_in_step(
        case: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    produced = outputs_of(case, monkeypatch)
    py_name = next(name for name in produced if name.endswith(".py"))
    module = import_source(produced[py_name], tmp_path, case)
    schema = validator(produced[py_name[:-3] + ".schema.json"])
    moves = sum(walk(module, schema, seed=seed) for seed in range(8))
    assert moves > 0


def test_expected_modules_pass_mypy_strict_and_ruff(tmp_path: Path) -> None:
    files = sorted(str(p) for p in GOLDEN.glob("*/*.py"))
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           *files], capture_output=True, text=True, cwd=ROOT, check=False)
    assert mypy.returncode == 0, mypy.stdout
    # The project's ruff settings leave tests/golden out; lint copies with those settings.
    for f in files:
        shutil.copy(f, tmp_path)
    # As the project lints generated/ (pyproject.toml: long lines allowed there).
    ruff = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
                           str(ROOT / "pyproject.toml"), "--extend-ignore", "E501",
                           str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert ruff.returncode == 0, ruff.stdout


def test_entry_and_exit_actions_run_once_and_not_again_on_restore(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    produced = outputs_of("actions", monkeypatch)
    module = import_source(produced["session.py"], tmp_path, "actions")
    log: list[str] = []

    def logged(name: str) -> Any:
        return lambda self: log.append(name)

    actions = ("open_socket", "start_heartbeat", "stop_heartbeat", "mark_active",
               "mark_idle", "close_socket")
    Session = type("Session", (module.Session,), {a: logged(a) for a in actions})

    run = Session(run_id="s")
    assert log == ["open_socket"]
    run.connected()
    assert log[1:] == ["start_heartbeat", "mark_active"]
    log.clear()
    again = Session.restore(module.SessionRecord.from_json(run.record.to_json()))
    assert log == [] and psm_configuration(again) == {"online", "active"}
    again.idle()
    assert log == ["mark_idle"]
    log.clear()
    again.logout()
    assert log == ["stop_heartbeat", "close_socket"]


def test_a_failing_entry_action_rolls_back_machine_and_record(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    produced = outputs_of("actions", monkeypatch)
    module = import_source(produced["session.py"], tmp_path, "actions_fail")

    class Flaky(module.Session):  # type: ignore[misc, name-defined]
        def start_heartbeat(self) -> None:
            raise ConnectionError("no heartbeat")

    run = Flaky(run_id="s")
    before = run.record.to_json()
    with pytest.raises(ConnectionError):
        run.connected()
    assert run.record.to_json() == before
    assert psm_configuration(run) == {"connecting"}


def test_parallel_regions_move_independently_and_restore_together(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    produced = outputs_of("parallel", monkeypatch)
    module = import_source(produced["deploy.py"], tmp_path, "parallel")
    facade, record_class, _ = parts(module)
    run = facade(run_id="d")
    run.begin()
    run.compiled()
    run.approve()
    expected = ["rollout", "build", "testing", "approvals", "approved"]
    assert [s.value for s in run.configuration] == expected
    again = facade.restore(record_class.from_json(run.record.to_json()))
    assert psm_configuration(again) == set(expected)
    again.revoke()
    again.tested()
    assert [s.value for s in again.configuration] == [
        "rollout", "build", "built", "approvals", "waiting"]
    again.finish()
    assert again.is_terminated


def test_a_limit_is_counted_and_enforced(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    produced = outputs_of("enums", monkeypatch)
    module = import_source(produced["ticket.py"], tmp_path, "enums")
    run = module.Ticket(run_id="t")
    due = dt.datetime(2025, 1, 2, tzinfo=dt.UTC)
    run.take(priority=module.TicketPriority.high, channel=module.TicketChannel.phone, dueAt=due)
    for attempt in (1, 2):
        run.work(estimate=1.5, urgent=False)
        assert run.record.counts == {"working": attempt}
        run.pause(attempts=attempt)
    with pytest.raises(module.TicketLimitExceeded):
        run.work(estimate=1.0, urgent=True)
    with pytest.raises(TypeError, match="urgent"):
        run.work(estimate=1.0, urgent="yes")
    run.close(note="done")
    schema = validator(produced["ticket.schema.json"])
    assert not list(schema.iter_errors(json.loads(run.record.to_json())))
    assert json.loads(run.record.to_json())["dueAt"] == "2025-01-02T00:00:00+00:00"
