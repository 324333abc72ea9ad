"""`statechart build`: check first, write atomically and only what changed, --check, orphans."""

from __future__ import annotations

import ast
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from statechart import build, outputs, writes
from statechart.cli import main

ROOT = Path(__file__).resolve().parents[1]
AGENT_RUN = ROOT / "specs" / "agent_run.yaml"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with one spec, as the working directory; docs generators left out
    (they have their own tests and are slow)."""
    (tmp_path / "specs").mkdir()
    shutil.copy(AGENT_RUN, tmp_path / "specs" / "agent_run.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(outputs, "PER_SPEC", {
        k: v for k, v in outputs.PER_SPEC.items() if k in ("python", "record-schema")})
    monkeypatch.setattr(outputs, "ALL_SPECS", {})
    return tmp_path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["build", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_build_writes_then_reports_unchanged(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys)
    assert code == 0
    assert out.splitlines() == ["created   generated/agent_run.py",
                                "created   generated/agent_run.schema.json"]
    code, out, _ = run_cli(capsys)
    assert code == 0 and out.split() == ["unchanged", "generated/agent_run.py",
                                         "unchanged", "generated/agent_run.schema.json"]
    assert run_cli(capsys, "--check")[0] == 0


def test_generated_files_match_the_committed_ones(project: Path) -> None:
    plan = build.plan(["specs"])
    assert plan.ok
    for rel, data in plan.files.items():
        assert (ROOT / rel).read_bytes() == data, f"{rel} is stale: run `statechart build`"


def test_files_are_readable_by_others(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = os.umask(0o022)
    try:
        run_cli(capsys)
    finally:
        os.umask(old)
    mode = stat.S_IMODE((project / "generated" / "agent_run.py").stat().st_mode)
    assert mode == 0o644


def test_check_reports_missing_stale_and_orphaned_with_the_command(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "--check", "--full-diff")
    assert code == 1 and "missing   generated/agent_run.py" in out and err == ""
    assert "run `statechart build`" in out and "+++ b/generated/agent_run.py" in out
    assert not (project / "generated").exists()  # --check writes nothing
    run_cli(capsys)
    spec = project / "specs" / "agent_run.yaml"
    spec.write_text(spec.read_text().replace("The agent is working.", "Working."))
    code, out, err = run_cli(capsys, "--check", "--full-diff")
    assert code == 1 and "stale     generated/agent_run.py" in out
    assert "-    STATE_DESCRIPTIONS" not in out and "+    AgentRunState.running: 'Working.'," in out
    spec.unlink()
    (project / "specs" / "other.yaml").write_text(
        AGENT_RUN.read_text().replace("statechart: agent_run", "statechart: other"))
    code, out, err = run_cli(capsys, "--check")
    assert code == 1 and "orphaned  generated/agent_run.py" in out


def test_check_output_is_bounded_unless_full_diff_is_asked(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fresh project misses every output: --check names them, without their content."""
    code, out, _ = run_cli(capsys, "--check")
    assert code == 1
    assert out.splitlines() == [
        "missing   generated/agent_run.py",
        "missing   generated/agent_run.schema.json",
        "statechart build --check: 2 output(s) out of date (2 missing); run `statechart build` "
        "and commit the result",
        "statechart build --check: diffs shortened; add --full-diff to see them in full"]
    assert len(run_cli(capsys, "--check", "--full-diff")[1].splitlines()) > 200
    run_cli(capsys)
    spec = project / "specs" / "agent_run.yaml"
    spec.write_text(spec.read_text().replace("The agent is working.", "Working."))
    code, out, _ = run_cli(capsys, "--check")
    lines = out.splitlines()
    assert code == 1 and lines[0] == "stale     generated/agent_run.py"
    stale_py = lines[1:lines.index("stale     generated/agent_run.schema.json")]
    # what changed in the spec's terms (test_build_summary.py), then 20 lines, then the rest
    assert stale_py[0] == ("  same states, transitions and fields: only other text changed "
                           "(descriptions, header, layout)")
    assert len(stale_py) == 22 and stale_py[-1].startswith("... ")
    assert stale_py[-1].endswith(" more line(s) of this diff")
    assert "(2 stale)" in out and "add --full-diff" in out
    code, out, _ = run_cli(capsys, "--check", "--full-diff")
    assert "more line(s)" not in out and "diffs shortened" not in out


def test_build_deletes_orphans_but_not_files_without_our_header(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys)
    handwritten = project / "generated" / "notes.py"
    handwritten.write_text("# mine, no header\n")
    other = project / "specs" / "other.yaml"
    other.write_text(AGENT_RUN.read_text().replace("statechart: agent_run", "statechart: other"))
    (project / "specs" / "agent_run.yaml").unlink()
    code, out, _ = run_cli(capsys)
    assert code == 0
    assert "deleted   generated/agent_run.py" in out
    assert "deleted   generated/agent_run.schema.json" in out
    assert handwritten.exists() and (project / "generated" / "other.py").exists()


def test_a_spec_with_errors_builds_nothing_and_keeps_old_outputs(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys)
    before = {p: p.read_bytes() for p in (project / "generated").iterdir()}
    spec = project / "specs" / "agent_run.yaml"
    spec.write_text(spec.read_text().replace("start: running", "start: runnning")
                    .replace("The agent is working.", "changed"))
    (project / "specs" / "new.yaml").write_text(
        AGENT_RUN.read_text().replace("statechart: agent_run", "statechart: new"))
    code, out, err = run_cli(capsys)
    assert code == 1
    assert "error[unknown-state]: " in out and "--> specs/agent_run.yaml:" in out
    assert "= help: did you mean `running`?" in out
    assert "nothing written" in out and err == ""
    assert {p: p.read_bytes() for p in (project / "generated").iterdir()} == before


def test_two_specs_with_one_name_are_refused(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(AGENT_RUN, project / "specs" / "copy.yaml")
    code, out, _ = run_cli(capsys)
    assert code == 1 and "also written for" in out
    assert not (project / "generated").exists()


def test_no_spec_files_is_a_usage_error(project: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    (project / "empty").mkdir()
    assert run_cli(capsys, "empty")[0] == 2
    assert run_cli(capsys, "does-not-exist")[0] == 2


@pytest.mark.parametrize("ref,reason", [
    ("statechart.not_written_yet:outputs", "No module named 'statechart.not_written_yet'"),
    ("broken_generator:outputs", "RuntimeError: broken on import"),
    ("json:no_such_function", "has no attribute 'no_such_function'"),
])
@pytest.mark.parametrize("check", [False, True])
def test_a_generator_that_cannot_be_loaded_fails_the_build(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        ref: str, reason: str, check: bool) -> None:
    """An output nobody can produce is never "up to date": build and --check both fail,
    naming the generator, and nothing is written."""
    (project / "broken_generator.py").write_text('raise RuntimeError("broken on import")\n')
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setitem(outputs.PER_SPEC, "future", ref)
    code, out, err = run_cli(capsys, *(["--check"] if check else []))
    assert code == 1
    assert "error[build]: generator `future`" in out and reason in out and ref in out
    assert "Traceback" not in out + err and "up to date" not in out
    assert not (project / "generated").exists()


def _engine_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from statechart.render import layout

    monkeypatch.setitem(layout.ENGINES, "graphviz-pure", "no-such-layout-program-xyz")


def _layout_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from statechart.render import docs, layout

    def slow(dot: str, fmt: str, **kwargs: object) -> bytes:
        raise layout.LayoutError("graphviz-pure took longer than 120s to lay out the diagram")

    monkeypatch.setattr(docs, "layout", slow)


@pytest.mark.parametrize("break_layout,reason", [(_engine_missing, "not found"),
                                                 (_layout_times_out, "took longer than 120s")])
def test_a_diagram_that_cannot_be_laid_out_fails_the_build_but_the_rest_is_written(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        break_layout: Callable[[pytest.MonkeyPatch], None], reason: str) -> None:
    monkeypatch.setitem(outputs.PER_SPEC, "docs", "statechart.render.docs:outputs")
    assert run_cli(capsys)[0] == 0
    svg = project / "docs" / "specs" / "agent_run.svg"
    old_svg = svg.read_bytes()
    spec = project / "specs" / "agent_run.yaml"
    spec.write_text(spec.read_text().replace("The agent is working.", "Working."))
    break_layout(monkeypatch)
    error = ("specs/agent_run.yaml: error[build]: docs: docs/specs/agent_run.svg could not be "
             "made: ")

    code, out, err = run_cli(capsys, "--check")
    assert code == 1 and "Traceback" not in out + err
    assert error in out and reason in out
    assert "stale     generated/agent_run.py" in out and "up to date" not in out

    code, out, err = run_cli(capsys)
    assert code == 1 and "Traceback" not in out + err
    assert error in out and reason in out
    assert "updated   generated/agent_run.py" in out and "updated   docs/specs/agent_run.md" in out
    assert "'Working.'" in (project / "generated" / "agent_run.py").read_text()
    assert "Working." in (project / "docs" / "specs" / "agent_run.md").read_text()
    assert svg.read_bytes() == old_svg  # the previous picture stays; not an orphan either
    assert "docs/specs/agent_run.svg" in out and "left as" in out


def test_a_failed_write_leaves_the_old_file_and_no_temp(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = project / "generated" / "x.py"
    target.parent.mkdir()
    target.write_bytes(b"old\n")

    def broken_replace(src: str, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(writes.WriteError, match="disk full"):
        writes.write_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in target.parent.iterdir()] == ["x.py"]


def test_a_symlink_at_the_output_path_is_replaced_not_followed(project: Path) -> None:
    victim = project / "victim.txt"
    victim.write_text("precious")
    (project / "generated").mkdir()
    link = project / "generated" / "agent_run.py"
    link.symlink_to(victim)
    writes.write_atomic(link, b"generated\n")
    assert victim.read_text() == "precious" and not link.is_symlink()
    assert link.read_bytes() == b"generated\n"


def test_an_output_path_outside_the_root_is_refused(project: Path) -> None:
    with pytest.raises(ValueError, match="outside"):
        build._safe(project, "../escape.py")
    with pytest.raises(ValueError, match="outside"):
        build._safe(project, "/etc/passwd")


def test_a_killed_build_never_leaves_a_truncated_file(project: Path) -> None:
    """Kill builds of 40 specs at random moments: every file is absent, old or new."""
    for i in range(40):
        (project / "specs" / f"run_{i}.yaml").write_text(
            AGENT_RUN.read_text().replace("statechart: agent_run", f"statechart: run_{i}"))
    script = ("import sys; from statechart import outputs; from statechart.cli import main;"
              "outputs.PER_SPEC.pop('docs', None); outputs.ALL_SPECS.clear();"
              "sys.exit(main(['build', '-q']))")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}
    for delay in (0.3, 0.6, 0.9, 1.2):
        shutil.rmtree(project / "generated", ignore_errors=True)
        proc = subprocess.Popen([sys.executable, "-c", script], cwd=project, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for path in (project / "generated").glob("*") if (project / "generated").exists() \
                else []:
            if path.name.endswith(writes.TMP_SUFFIX):
                continue  # a temp file, never a target: the next build removes it
            text = path.read_text()
            if path.suffix == ".py":
                ast.parse(text)
                assert text.endswith("\n") and "def provide_input" in text
            else:
                assert text.endswith("}\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=project, env=env, check=False)
    assert done.returncode == 0
    assert not list((project / "generated").glob(f"*{writes.TMP_SUFFIX}"))


def test_a_whole_set_output_naming_no_spec_file_is_never_an_orphan(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = project / "docs" / "specs" / "index.md"
    index.parent.mkdir(parents=True)
    index.write_text("<!-- Generated from the specs by statechart-compiler. DO NOT EDIT. -->\n")
    run_cli(capsys)
    assert index.exists()


def test_renaming_a_spec_makes_its_old_outputs_orphans(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys)
    spec = project / "specs" / "agent_run.yaml"
    spec.write_text(spec.read_text().replace("statechart: agent_run", "statechart: renamed"))
    code, out, _ = run_cli(capsys, "--check")
    assert code == 1
    assert "orphaned  generated/agent_run.py" in out
    assert "orphaned  generated/agent_run.schema.json" in out
    code, out, _ = run_cli(capsys)
    assert code == 0 and "deleted   generated/agent_run.py" in out
    assert sorted(p.name for p in (project / "generated").iterdir()) == [
        "renamed.py", "renamed.schema.json"]
    assert run_cli(capsys, "--check")[0] == 0


def test_a_subset_build_keeps_every_spec_of_its_folder_in_the_index(
        project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(outputs, "ALL_SPECS", {"docs-index": "statechart.render.docs:index_outputs"})
    (project / "specs" / "np.yaml").write_text(
        AGENT_RUN.read_text().replace("statechart: agent_run", "statechart: np"))
    assert run_cli(capsys)[0] == 0
    index = project / "docs" / "specs" / "index.md"
    full = index.read_text()
    assert "agent_run" in full and "np" in full
    code, out, err = run_cli(capsys, "--check", "specs/np.yaml")
    assert code == 0, out + err
    code, out, _ = run_cli(capsys, "specs/np.yaml")
    assert code == 0 and "unchanged docs/specs/index.md" in " ".join(out.split())
    assert index.read_text() == full
    # a broken sibling spec is not reported, and leaves the index as it was
    (project / "specs" / "agent_run.yaml").write_text("statechart: agent_run\nstates: [\n")
    code, out, err = run_cli(capsys, "specs/np.yaml")
    assert code == 0 and "docs/specs/index.md" not in out and "agent_run" not in out
    assert "docs-index" in out and index.read_text() == full


def _too_big_to_lay_out(path: Path) -> None:
    """15 lines: 10 compound states, 900 events each (9,010 transitions). `check` passes it in
    a fraction of a second; the diagram's layout ran 2 minutes and failed."""
    events = ", ".join(f"e{i}: c{i % 10}" for i in range(900))
    lines = ["statechart: adversarial", "version: 1", "initial: c0", "states:"]
    lines += [f"  c{c}: {{initial: a{c}, on: {{{events}, done: d}}, states: {{a{c}: {{}}}}}}"
              for c in range(10)]
    path.write_text("\n".join([*lines, "  d: {final: true}"]) + "\n")


def test_a_spec_too_big_to_lay_out_builds_without_its_picture(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    monkeypatch.setitem(outputs.PER_SPEC, "docs", "statechart.render.docs:outputs")
    _too_big_to_lay_out(project / "specs" / "adversarial.yaml")
    start = time.monotonic()
    code, out, err = run_cli(capsys)
    assert code == 0, out + err
    assert time.monotonic() - start < 30  # the layout is not even tried
    docs = project / "docs" / "specs"
    assert (project / "generated" / "adversarial.py").is_file()
    assert (project / "generated" / "adversarial.schema.json").is_file()
    assert not (docs / "adversarial.svg").exists() and (docs / "agent_run.svg").is_file()
    page = (docs / "adversarial.md").read_text()
    assert "No Graphviz drawing: 9,010 transitions exceed the layout bound of 1,000" in page
    assert "adversarial.svg" not in page
    # Decided by the spec's size, not by a clock: the same on every machine.
    assert run_cli(capsys, "--check")[0] == 0


@pytest.mark.parametrize("how", ["option", "environment"])
def test_the_layout_bound_is_configurable(project: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], how: str) -> None:
    monkeypatch.setitem(outputs.PER_SPEC, "docs", "statechart.render.docs:outputs")
    assert run_cli(capsys)[0] == 0
    svg = project / "docs" / "specs" / "agent_run.svg"
    assert svg.is_file()
    if how == "environment":
        monkeypatch.setenv("STATECHART_LAYOUT_MAX_TRANSITIONS", "20")
    code, out, err = run_cli(capsys, *(["--layout-max-transitions", "20"] if how == "option"
                                       else []))
    assert code == 0, out + err
    assert "deleted   docs/specs/agent_run.svg" in out and not svg.exists()
    page = (project / "docs" / "specs" / "agent_run.md").read_text()
    assert "No Graphviz drawing: 30 transitions exceed the layout bound of 20" in page
    if how == "option":  # the command --check asks to rerun keeps the bound
        code, out, _ = run_cli(capsys, "--check", "--layout-max-transitions", "25")
        assert code == 1 and "run `statechart build --layout-max-transitions 25`" in out


def test_a_bad_layout_setting_is_a_usage_error(project: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("STATECHART_LAYOUT_TIMEOUT", "soon")
    code, out, err = run_cli(capsys)
    assert (code, out) == (2, "")
    assert "STATECHART_LAYOUT_TIMEOUT='soon': expected a positive number" in err
    with pytest.raises(SystemExit) as exit_:
        run_cli(capsys, "--layout-timeout", "0")
    assert exit_.value.code == 2


def test_a_file_that_only_quotes_the_header_is_not_an_orphan(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = project / "generated" / "README.md"
    readme.parent.mkdir()
    readme.write_text("# Generated code\n\nEvery file here starts with a header such as\n\n"
                      "<!-- Generated from specs/example.yaml by statechart-compiler 0.2.0. "
                      "DO NOT EDIT. -->\n\nand `statechart build` rewrites it.\n")
    notes = project / "generated" / "notes.py"
    notes.write_text('"""Helpers."""\n# Generated from specs/example.yaml by '
                     "statechart-compiler 0.2.0. DO NOT EDIT.\n")
    code, out, _ = run_cli(capsys)
    assert code == 0 and "deleted" not in out
    assert readme.exists() and notes.exists()
    assert run_cli(capsys, "--check")[0] == 0


@pytest.mark.parametrize("name", ["café.yaml", "two  spaces--dash.yaml", "caf\\xe9.yaml",
                                  "bidi\u202e.yaml"])
def test_outputs_of_a_spec_with_an_escaped_name_are_kept_then_deleted_when_it_goes(
        project: Path, name: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # every output type, since each escapes the path in its header its own way
    monkeypatch.setattr(outputs, "PER_SPEC", {**outputs.PER_SPEC,
                                              "docs": "statechart.render.docs:outputs"})
    spec = project / "specs" / name
    spec.write_text(AGENT_RUN.read_text().replace("statechart: agent_run", "statechart: caf_run"))
    assert run_cli(capsys)[0] == 0
    made = ["generated/caf_run.py", "generated/caf_run.schema.json", "docs/specs/caf_run.md",
            "docs/specs/caf_run.svg"]
    assert all((project / rel).exists() for rel in made)
    code, out, _ = run_cli(capsys, "specs/agent_run.yaml")
    assert code == 0 and "deleted" not in out
    assert all((project / rel).exists() for rel in made)
    spec.unlink()
    code, out, _ = run_cli(capsys, "specs/agent_run.yaml")
    assert code == 0 and sorted(line.split()[1] for line in out.splitlines()
                                if line.startswith("deleted")) == sorted(made)


# -- concurrent builds (item: the start of one build deleted the other's temp files) -----------

BUILD_SCRIPT = ("import sys; from statechart import outputs; from statechart.cli import main;"
                "outputs.PER_SPEC.pop('docs', None); outputs.ALL_SPECS.clear();"
                "sys.exit(main(['build', '-q']))")
BUILD_ENV = {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}


# Six rounds are `slow` (`pytest -m slow`, a CI step of its own); the default run takes one.
@pytest.mark.parametrize("rounds", [pytest.param(6, marks=pytest.mark.slow, id="full"),
                                    pytest.param(1, id="smoke")])
def test_concurrent_builds_take_turns_and_all_succeed(project: Path, rounds: int) -> None:
    for i in range(12):
        (project / "specs" / f"run_{i}.yaml").write_text(
            AGENT_RUN.read_text().replace("statechart: agent_run", f"statechart: run_{i}"))
    for _ in range(rounds):
        shutil.rmtree(project / "generated", ignore_errors=True)  # every build writes
        procs = [subprocess.Popen([sys.executable, "-c", BUILD_SCRIPT], cwd=project,
                                  env=BUILD_ENV, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for _ in range(3)]
        results = [(proc.wait(timeout=300), proc.communicate()[1]) for proc in procs]
        for code, err in results:
            assert code == 0 and "Traceback" not in err, err
        assert not list((project / "generated").glob(f".*{writes.TMP_SUFFIX}"))
        assert len(list((project / "generated").glob("*.py"))) == 13


def test_a_build_says_it_waits_for_another(project: Path) -> None:
    import fcntl
    import select

    fd = os.open(project, os.O_RDONLY)  # another build, as far as the lock can tell
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc = subprocess.Popen([sys.executable, "-c", BUILD_SCRIPT], cwd=project,
                                env=BUILD_ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 120)
        assert ready, "the build neither waited nor said so"
        line = proc.stderr.readline()
        assert line.startswith("statechart build: waiting for another build in ")
        assert not (project / "generated").exists()  # it waits before writing anything
    finally:
        os.close(fd)  # the other build is done
    assert proc.wait(timeout=120) == 0
    assert (project / "generated" / "agent_run.py").exists()


# -- OS errors: a message naming the path and what to do, and no half-written set ---------------

def test_a_file_in_place_of_the_output_folder_is_an_error_and_changes_nothing(
        project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(outputs, "PER_SPEC", {**outputs.PER_SPEC,
                                              "docs": "statechart.render.docs:outputs"})
    (project / "generated").write_text("not a folder\n")
    code, out, err = run_cli(capsys)
    assert code == 1 and out == ""
    assert err == ("statechart build: cannot write generated/agent_run.py (generated): File "
                   "exists; a file is where a folder is needed: move it away and build again\n")
    # The docs come first in the order of writing, and were not left ahead of the code.
    assert not (project / "docs" / "specs").exists() or not any(
        (project / "docs" / "specs").iterdir())
    assert run_cli(capsys, "--check")[0] == 1  # missing, not a crash


def test_a_write_that_fails_midway_leaves_every_output_as_it_was(project: Path) -> None:
    """A real OS error in the middle of the writes: a file size limit (EFBIG, as a full disk
    gives ENOSPC) that lets the small spec's files through and stops agent_run's module, which
    comes after them. Written one by one, the small spec's new files would be left next to
    agent_run's old ones."""
    import resource

    small = project / "specs" / "a_small.yaml"
    small.write_text("statechart: a_small\nversion: 1\ninitial: idle\nstates:\n"
                     "  idle: {on: {go: done}}\n  done: {final: true}\n")
    done = subprocess.run([sys.executable, "-c", BUILD_SCRIPT], cwd=project, env=BUILD_ENV,
                          check=False)
    assert done.returncode == 0
    for spec in (small, project / "specs" / "agent_run.yaml"):
        spec.write_text(spec.read_text().replace("version: 1", "version: 2")
                        .replace("version: 2\n", "version: 3\n") if spec.name == "agent_run.yaml"
                        else spec.read_text().replace("version: 1", "version: 2"))
    before = {p.name: p.read_bytes() for p in (project / "generated").iterdir()}
    limit = max(len(data) for name, data in before.items() if name != "agent_run.py") + 2048
    assert limit < len(before["agent_run.py"])

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run([sys.executable, "-c", BUILD_SCRIPT], cwd=project, env=BUILD_ENV,
                          capture_output=True, text=True, preexec_fn=limit_file_size,
                          check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("statechart build: cannot write generated/agent_run.py")
    assert "File too large; free some disk space" in done.stderr
    after = {p.name: p.read_bytes() for p in (project / "generated").iterdir()}
    assert after == before  # nothing replaced, and no temp file left
