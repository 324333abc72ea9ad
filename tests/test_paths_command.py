"""`statechart paths` and `statechart_runtime.testing.paths`: event sequences that cover a spec.

What a user sees: the command's text and JSON, the paths each followed by the generated class
(`testing.follow`, which checks the configuration, status, transitions and timers after every
step), and what no path reaches listed as unreachable with its spec line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from codegen_support import checked_spec, generate

from statechart.cli import main
from statechart.codegen.in_memory import run_class
from statechart_runtime import testing
from statechart_runtime.errors import PathMismatch

ROOT = Path(__file__).resolve().parent.parent
AGENT_RUN = ROOT / "specs" / "agent_run.yaml"
sys.path.insert(0, str(ROOT / "generated"))
from agent_run import AgentRun  # noqa: E402

# `b -back-> a` can never be taken: `a` may be entered once, and `b` is reached only from it.
# `check` assumes a limit may allow it (its graph has no counts), so the spec is valid.
LIMITED = """\
statechart: limited
version: 1
initial: s0
states:
  s0:
    on:
      go: a
  a:
    limit: 1
    on:
      next: b
  b:
    on:
      back: a
      end: done
  done:
    final: true
"""

GUARDED = """\
statechart: guarded
version: 1
initial: s0
states:
  s0:
    on:
      go: {target: done, guard: ready}
  done:
    final: true
"""


def _spec_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _all_transitions(run: type) -> set[tuple[str, str, int]]:
    return {(i.state, str(i.event), int(i.alternative or 0))
            for i in testing.items(testing.Space(run), "transitions")}


def test_text_covers_every_transition_of_the_agent_run(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert main(["paths", str(AGENT_RUN)]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("agent_run: ") and "covering 30 of 30 transitions" in first
    assert "unreachable" not in out
    # a timer is fired by running the clock to it, and a guard's answer is shown
    assert "clock to T+1:00:00: fire_due()" in out
    assert "with can_retry=no" in out and "with can_retry=yes" in out
    # each transition with its spec line: the approval deadline is at line 122
    assert ("waiting_for_approval -after.approvalDeadline.waiting_for_approval-> timed_out  "
            "specs/agent_run.yaml:151") in out
    assert "await_approval(approvalId='<approvalId>', approvalDeadline=T+1:00:00)" in out


def test_json_paths_take_every_transition_when_followed(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    assert main(["paths", str(AGENT_RUN), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["spec"], data["cover"], data["complete"]) == ("agent_run", "transitions", True)
    assert data["items"] == data["covered"] == 30 and data["unreachable"] == []
    taken = {(t["source"], t["event"], t["alternative"]) for p in data["paths"]
             for s in p["steps"] for t in s["transitions"]}
    assert taken == _all_transitions(AgentRun)
    assert data["events"] == sum(len(p["steps"]) for p in data["paths"]) <= 3 * 30
    # the same paths from the Python API, each followed by the generated class
    found = testing.paths(AgentRun)
    assert found.events == data["events"] and len(found.paths) == len(data["paths"])
    for path in found.paths:
        run = testing.follow(AgentRun, path)
        assert [s.value for s in run.configuration] == list(path.steps[-1].configuration)


def test_unreachable_transitions_are_listed_with_their_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec_file(tmp_path, LIMITED)
    assert main(["paths", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "covering 3 of 4 transitions" in out.splitlines()[0]
    tail = out.splitlines()[-2:]
    assert tail[0] == "unreachable (no path from a new run takes it, whatever the guards answer):"
    assert tail[1].startswith("  ") and tail[1].endswith("spec.yaml:14: b -back-> a")
    assert main(["paths", str(spec), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(u["text"], u["line"]) for u in data["unreachable"]] == [("b -back-> a", 14)]
    for path in testing.paths(run_class(checked_spec(spec))).paths:
        testing.follow(run_class(checked_spec(spec)), path)


def test_to_state_is_the_shortest_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paths", str(AGENT_RUN), "--to", "timed_out", "--format", "json"]) == 0
    (path,) = json.loads(capsys.readouterr().out)["paths"]
    # five steps: no shorter way ends in a timeout
    assert [s["event"] or "clock" for s in path["steps"]] == [
        "triage", "start", "interrupt", "await_approval", "clock"]
    assert path["steps"][-1]["status"] == "failed"
    assert path["steps"][-1]["configuration"] == ["timed_out"]


def test_to_a_state_of_a_new_run_is_the_empty_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paths", str(AGENT_RUN), "--to", "created", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (path,) = data["paths"]
    assert (path["steps"], path["configuration"], data["unreachable"]) == ([], ["created"], [])
    # the test module written for it asserts the start, so it can fail
    assert main(["paths", str(AGENT_RUN), "--to", "created", "--format", "pytest"]) == 0
    module = capsys.readouterr().out
    assert "def test_path_1() -> None:" in module
    assert "assert configuration(run) == ['created']" in module


def test_states_cover_counts_the_initial_configuration() -> None:
    found = testing.paths(AgentRun, "states")
    assert found.unreachable == ()
    entered = {"created"} | {s for p in found.paths for step in p.steps
                             for s in step.configuration}
    assert entered == {i.state for i in found.items}


def test_guard_that_refuses_is_a_refused_step(tmp_path: Path) -> None:
    run = run_class(checked_spec(_spec_file(tmp_path, GUARDED)))
    found = testing.paths(run, "guards")
    assert [str(i) for i in found.items] == ["ready=yes at s0 -go-> done",
                                             "ready=no at s0 -go-> done"]
    assert found.unreachable == ()
    steps = [s for p in found.paths for s in p.steps]
    refused = [s for s in steps if s.refused]
    assert refused and refused[0].configuration == ("s0",) and refused[0].guards == {
        "ready": False}
    for path in found.paths:
        testing.follow(run, path)
    # a transitions cover does not need the refusal
    assert all(not s.refused for p in testing.paths(run).paths for s in p.steps)


def test_follow_reports_a_path_the_run_does_not_take() -> None:
    path = testing.paths(AgentRun, to="running").paths[0]
    wrong = path.steps[-1].__class__(**{**{f: getattr(path.steps[-1], f) for f in (
        "kind", "event", "values", "guards", "at", "transitions", "status", "fired",
        "refused")}, "configuration": ("retrying",)})
    broken = testing.Path(path.context, path.configuration, path.status,
                          (*path.steps[:-1], wrong))
    with pytest.raises(PathMismatch, match=r"step 2: the run is in \['running', "
                                           r"'reasoning'\], not \['retrying'\]"):
        testing.follow(AgentRun, broken)


@pytest.mark.parametrize("argv, message", [
    (["--to", "nowhere"], "`nowhere` is not a state of `agent_run`"),
    (["--max-configurations", "0"], "--max-configurations must be at least 1"),
])
def test_usage_errors(argv: list[str], message: str,
                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paths", str(AGENT_RUN), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err


def test_a_spec_with_errors_is_refused(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec_file(tmp_path, LIMITED.replace("back: a", "back: nowhere"))
    assert main(["paths", str(spec)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "has errors; fix them first" in captured.err


def test_the_paths_api_needs_neither_the_compiler_nor_hypothesis() -> None:
    from test_runtime_alone import BLOCK, COMPILER_ONLY, _python

    code = BLOCK.format(blocked={*COMPILER_ONLY, "hypothesis"}) + """
sys.path.insert(0, "generated")
from agent_run import AgentRun
from statechart_runtime import testing
found = testing.paths(AgentRun)
for path in found.paths:
    testing.follow(AgentRun, path)
print(len(found.items) - len(found.unreachable), len(found.items))
"""
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["30", "30"]


def _pytest(folder: Path, *test_files: Path) -> subprocess.CompletedProcess[str]:
    """Run a written test module with pytest in its own process (the project's options off)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "--rootdir", str(folder), *map(str, test_files)],
        capture_output=True, text=True, cwd=folder, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)]),
             "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})


def test_pytest_format_drives_the_generated_class(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    written = tmp_path / "test_agent_run_paths.py"
    assert main(["paths", str(AGENT_RUN), "--format", "pytest", "-o", str(written)]) == 0
    assert capsys.readouterr().err == f"wrote {written}\n"
    text = written.read_text(encoding="utf-8")
    assert text.startswith("# Written by `statechart paths specs/agent_run.yaml --format "
                           "pytest` (statechart-compiler ")
    assert "DO NOT EDIT" not in text  # the user's to edit: `build` must never take it for its own
    assert "from generated.agent_run import (" in text
    assert "    def can_retry(self) -> bool:" in text
    assert "    clock.now = T + dt.timedelta(hours=1)\n    assert run.fire_due() == " \
        "['after.retryAt.retrying']" in text
    found = testing.paths(AgentRun)
    assert text.count("\ndef test_path_") == len(found.paths)
    # the assertions are real: a wrong configuration fails the test that claims it
    wrong = tmp_path / "test_wrong.py"
    wrong.write_text(text.replace("assert configuration(run) == ['retrying']",
                                  "assert configuration(run) == ['running']", 1))
    result = _pytest(ROOT, written, wrong)
    assert f"1 failed, {2 * len(found.paths) - 1} passed" in result.stdout, result.stdout
    assert result.stdout.startswith("." * len(found.paths))  # the written module passes
    assert "AssertionError: assert ['retrying'] == ['running']" in result.stdout


def test_pytest_format_refused_guard_and_module_option(tmp_path: Path) -> None:
    spec = _spec_file(tmp_path, GUARDED)
    (tmp_path / "guarded_run.py").write_bytes(
        generate(checked_spec(spec))["generated/guarded.py"])
    written = tmp_path / "test_guarded.py"
    assert main(["paths", str(spec), "--cover", "guards", "--format", "pytest", "--module",
                 "guarded_run", "-o", str(written)]) == 0
    text = written.read_text(encoding="utf-8")
    assert "from guarded_run import (" in text
    assert ("    guards.answers = {'ready': False}\n    with pytest.raises(EventNotAccepted):\n"
            "        run.go()\n    assert configuration(run) == ['s0']") in text
    result = _pytest(tmp_path, written)
    assert result.returncode == 0, result.stdout + result.stderr


def test_output_that_cannot_be_written_is_an_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "test_x.py"  # a file where a folder should be
    assert main(["paths", str(AGENT_RUN), "-o", str(target)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("statechart paths: ")
    assert not target.exists()


def test_the_docs_show_real_output(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/testing.md quotes `statechart paths` on the agent run: every line it quotes is
    in the command's output, in the same order (`...` stands for what it leaves out)."""
    import re

    doc = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n\$ statechart paths specs/agent_run\.yaml\n(.*?)```", doc,
                        re.S)
    assert blocks
    assert main(["paths", str(AGENT_RUN)]) == 0
    out = capsys.readouterr().out.replace(str(AGENT_RUN), "specs/agent_run.yaml").splitlines()
    position = 0
    for line in blocks[0].splitlines():
        if line == "...":
            continue
        assert line in out[position:], line
        position = out.index(line, position) + 1


def _golden_modules_pass(tmp_path: Path, names: list[str] | None,
                         covers: tuple[testing.Cover, ...]) -> None:
    written = []
    for spec in sorted((ROOT / "tests" / "golden").glob("*/spec.yaml")):
        if names is not None and spec.parent.name not in names:
            continue
        (module,) = spec.parent.glob("*.py")
        (tmp_path / module.name).write_bytes(module.read_bytes())
        for cover in covers:
            out = tmp_path / f"test_{spec.parent.name}_{cover}.py"
            assert main(["paths", str(spec), "--cover", cover, "--format", "pytest",
                         "--module", module.stem, "-o", str(out)]) == 0
            written.append(out)
    assert len(written) == (11 if names is None else len(names)) * len(covers)
    result = _pytest(tmp_path, *written)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout and "failed" not in result.stdout


@pytest.mark.slow
def test_pytest_format_of_every_golden_spec_passes(tmp_path: Path) -> None:
    """Odd names (mapped methods, guards, fields, enum members), run context, enums, timers,
    work and json fields, parallel and nested states: each cover's module passes against the
    golden module."""
    _golden_modules_pass(tmp_path, None, testing.COVERS)


def test_pytest_format_of_odd_names_and_timers_passes(tmp_path: Path) -> None:
    _golden_modules_pass(tmp_path, ["odd_names", "timers"], ("transitions", "guards"))


def test_a_spec_path_with_a_line_break_stays_in_the_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "odd\nfolder"
    folder.mkdir()
    spec = _spec_file(folder, GUARDED)
    assert main(["paths", str(spec), "--format", "pytest", "--module", "m"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("# Written by `statechart paths ")
    assert "odd\\nfolder" in text.splitlines()[0]
    compile(text, "written.py", "exec")  # still a valid module
    assert main(["paths", str(spec)]) == 0
    assert "odd<U+000A>folder" in capsys.readouterr().out
