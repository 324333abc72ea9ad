"""What a new team meets using check, build, diff and render on a project of its own: the order
project of tests/projects/order (a base spec, an overlay of another team extending it, the
`[tool.statechart]` section), copied into a temporary folder and changed as a user would."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from statechart.cli import main

PROJECT = Path(__file__).parent / "projects" / "order"

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "order"
    shutil.copytree(PROJECT, root)
    monkeypatch.chdir(root)
    for name in ("STATECHART_OUTPUT_FORMAT", "GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return root


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def go(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err
    return go


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_the_project_is_clean(project: Path, run: Run) -> None:
    assert run("check") == (0, "2 specs checked: no problems.\n", "")


# -- 1: checking a base checks the overlays that extend it ---------------------------------

def test_check_of_a_base_also_checks_the_overlay_it_breaks(project: Path, run: Run) -> None:
    base = project / "specs" / "order.yaml"
    edit(base, "  awaiting_payment:\n", "  payment_pending:\n")
    base.write_text(base.read_text().replace("target: awaiting_payment", "target: "
                                             "payment_pending"))
    code, out, err = run("check", "specs/order.yaml")
    assert (code, err) == (1, "")
    assert out.startswith("statechart check: also checked specs/b2b_order.yaml: it extends "
                          "specs/order.yaml\n")
    assert "error[unknown-state]: target `awaiting_payment` is not a state of this spec\n" \
           "  --> specs/b2b_order.yaml:" in out
    assert out.endswith("Found 1 error and 0 warnings.\n")


def test_check_of_a_clean_base_counts_the_overlay(project: Path, run: Run) -> None:
    assert run("check", "specs/order.yaml") == (0, (
        "statechart check: also checked specs/b2b_order.yaml: it extends specs/order.yaml\n"
        "2 specs checked: no problems.\n"), "")
    # A machine format carries findings only; an overlay named on its own checks no base.
    assert run("check", "--format", "json", "specs/order.yaml") == (0, "[]\n", "")
    assert run("check", "specs/b2b_order.yaml") == (0, "1 spec checked: no problems.\n", "")


# -- 2, 3: each finding once, the consequences of a typo folded into it -----------------------

def test_build_prints_a_base_problem_once_and_counts_it_once(project: Path, run: Run) -> None:
    base = project / "specs" / "order.yaml"
    edit(base, "deliver: delivered", "deliver: deliverd")
    for argv in (["build"], ["build", "--check"]):
        code, out, _ = run(*argv)
        assert code == 1
        assert out.count("error[unknown-state]") == 1
        assert "unreachable" not in out.split("= help:")[0]
        assert out.endswith("statechart build: 1 error(s) in 1 file(s); nothing written\n")


def test_a_typo_in_a_target_folds_the_states_it_makes_unreachable(project: Path,
                                                                 run: Run) -> None:
    base = project / "specs" / "order.yaml"
    edit(base, "    done: shipped", "    done: {target: shiped}")
    code, out, _ = run("check", "--format", "concise", "specs/order.yaml")
    assert code == 1
    lines = out.splitlines()
    at = line_of(base, "target: shiped")
    assert lines[1:] == [
        f"specs/order.yaml:{at}:20: error[unknown-state]: target `shiped` is not a state of "
        "this spec", "Found 1 error and 0 warnings."]
    code, out, _ = run("check", "specs/order.yaml")
    shipped, delivered = line_of(base, "  shipped:"), line_of(base, "  delivered:")
    assert "= help: did you mean `shipped`? Fixing this also clears what it causes: " \
           f"[unreachable-state] state `shipped` is unreachable from `cart` (line {shipped}); " \
           f"[unreachable-state] state `delivered` is unreachable from `cart` (line " \
           f"{delivered}); " in out


def test_an_overlays_typo_names_what_it_breaks_in_the_base(project: Path, run: Run) -> None:
    overlay = project / "specs" / "b2b_order.yaml"
    edit(overlay, "target: awaiting_payment", "target: awaiting_paymnt")
    code, out, _ = run("check", "specs/b2b_order.yaml")
    assert code == 1
    assert out.count("error[") == 1
    assert "= help: did you mean `awaiting_payment`? Fixing this also clears what it causes: " \
           "[unreachable-state] state `awaiting_payment` is unreachable from `cart` " \
           f"(specs/order.yaml:{line_of(project / 'specs' / 'order.yaml', '  awaiting_payment:')})" \
           in out


# -- 13: hints ------------------------------------------------------------------------------

def test_an_unknown_state_in_a_rule_suggests_by_word(project: Path, run: Run) -> None:
    base = project / "specs" / "order.yaml"
    edit(base, "only: {from: on_hold,", "only: {from: held,")
    code, out, _ = run("check", "specs/order.yaml")
    assert code == 1
    assert "error[unknown-state]: rule state `held` is not a state of this spec" in out
    assert "= help: did you mean `on_hold`?" in out


def test_an_unknown_state_with_nothing_close_lists_states_with_an_ellipsis(
        project: Path, run: Run) -> None:
    base = project / "specs" / "order.yaml"
    edit(base, "only: {from: on_hold,", "only: {from: xyzzy,")
    code, out, _ = run("check", "specs/order.yaml")
    assert code == 1
    assert "= help: states: cart, awaiting_payment, fulfilment, packing, picking, packed, " \
           "invoicing, drafting, invoiced, on_hold, shipped, delivered, ... (2 more)\n" in out


def test_an_overlay_patching_a_misspelt_state_suggests_its_own_new_state(
        project: Path, run: Run) -> None:
    overlay = project / "specs" / "b2b_order.yaml"
    text = overlay.read_text()
    overlay.write_text(text.replace("\nadd:\n", "\n  waiting_for_aproval:\n"
                                    "    on: {skip: shipped}\n\nadd:\n"), encoding="utf-8")
    code, out, _ = run("check", "specs/b2b_order.yaml")
    assert code == 1
    assert "error[overlay]: the base has no state `waiting_for_aproval` to change" in out
    assert "= help: did you mean `waiting_for_approval`? To add a new state, declare it under " \
           "`add: {states: {waiting_for_aproval: ...}}`\n" in out


# -- 14: concise lists by file and line, with a summary ------------------------------------

def test_concise_is_sorted_by_file_and_line_and_counts(project: Path, run: Run) -> None:
    edit(project / "specs" / "order.yaml", "lose: {target: lost, set: [trackingNumber]}",
         "lose: lost")  # `trackingNumber` is now never set: a warning, in both specs
    edit(project / "specs" / "b2b_order.yaml", "reject: {target: cancelled",
         "reject: {target: canceled")
    code, out, _ = run("check", "--format", "concise", "specs/order.yaml",
                       "specs/b2b_order.yaml")
    assert code == 1
    tracking = line_of(project / "specs" / "order.yaml", "trackingNumber:")
    reject = line_of(project / "specs" / "b2b_order.yaml", "reject:")
    assert out == (
        f"specs/b2b_order.yaml:{reject}:26: error[unknown-state]: target `canceled` is not a "
        "state of this spec\n"
        f"specs/order.yaml:{tracking}:3: warning[unused-field]: record field `trackingNumber` is "
        "never set by an event or required by a state\n"
        "Found 1 error and 1 warning.\n")


# -- 7: diff --base of an overlay, a new spec --------------------------------------------------

def test_diff_base_of_a_valid_overlay_breaks_no_stored_runs(project: Path, run: Run) -> None:
    overlay = project / "specs" / "b2b_order.yaml"
    overlay.write_text(overlay.read_text() + "remove:\n  transitions: "
                       "[awaiting_payment.after.paymentDeadline]\n", encoding="utf-8")
    assert run("check", "specs/b2b_order.yaml")[0] == 0
    code, out, err = run("diff", "--base", "specs/b2b_order.yaml", "--format", "concise")
    assert (code, err) == (0, "")
    assert "breaks" not in out and "migrated" not in out and "error[" not in out
    timer = line_of(project / "specs" / "order.yaml", "  awaiting_payment:")
    assert f"specs/order.yaml:{timer}:3: warning[timer-removed]: `awaiting_payment` no longer " \
           "has timer `paymentDeadline` (after paymentDeadline) (safe: the overlay is a new " \
           "spec, with no stored runs of the base)\n" in out
    assert "warning[set-added]: `cart` on `checkout` now needs `purchaseOrder` (callers " \
           "written for the base must change)\n" in out
    assert out.endswith("Found 0 errors and 8 warnings.\n")


def test_a_new_timer_is_not_called_migrated_without_a_migration(project: Path, tmp_path: Path,
                                                                run: Run) -> None:
    old = tmp_path / "old" / "order.yaml"
    old.parent.mkdir()
    shutil.copy(project / "specs" / "order.yaml", old)
    edit(project / "specs" / "order.yaml", "  on_hold:\n", "  on_hold:\n    after:\n"
         "      7d: {target: cancelled, assign: {cancelReason: customer}}\n")
    edit(project / "specs" / "order.yaml", "version: 1", "version: 2")
    code, out, _ = run("diff", str(old), "specs/order.yaml", "--format", "concise")
    assert code == 0
    assert "warning[timer-added]: `on_hold` has a new timer `delay1` (after 7d) (safe once " \
           "`version` is raised: stored runs are upgraded)\n" in out
    assert "migrated" not in out


# -- 10: a configuration error points at the key's own line ----------------------------------

@pytest.mark.parametrize(("old", "new", "message"), [
    ("[tool.statechart.severity]", "[tool.statechart.sevrity]",
     "unknown key `tool.statechart.sevrity`; did you mean `severity`?"),
    ('unused-field = "warning"', 'unused-feild = "warning"',
     "`tool.statechart.severity.unused-feild`: no rule `unused-feild`; did you mean "
     "`unused-field`?"),
    ('code = "src/orders/generated"', 'cod = "src/orders/generated"',
     "unknown key `tool.statechart.output.cod`; did you mean `code`?"),
])
def test_a_configuration_error_points_at_the_keys_line(project: Path, run: Run, old: str,
                                                      new: str, message: str) -> None:
    edit(project / "pyproject.toml", old, new)
    line = line_of(project / "pyproject.toml", new)
    code, out, err = run("check")
    assert (code, out) == (2, "")
    assert err == f"statechart check: {project / 'pyproject.toml'}:{line}: {message}\n"


# -- 8: render draws a work in progress ------------------------------------------------------

def test_render_draws_a_spec_with_errors_as_a_work_in_progress(project: Path,
                                                              run: Run) -> None:
    base = project / "specs" / "order.yaml"
    edit(base, "    done: shipped", "    done: {target: shiped}")
    at = line_of(base, "target: shiped")
    warning = (f"specs/order.yaml:{at}:20: error[unknown-state]: target `shiped` is not a "
               "state of this spec\nstatechart render: specs/order.yaml has 1 error; drawn as "
               "a work in progress (`statechart check` explains each)\n")
    code, out, err = run("render", "specs/order.yaml", "--format", "mermaid")
    assert (code, err) == (0, warning)
    assert out.startswith('---\ntitle: "order: work in progress (1 error; `statechart check` '
                          'explains each)"\n---\nstateDiagram-v2\n')
    assert '"shipped"' in out  # the state the typo meant is drawn, unreachable
    code, out, err = run("render", "specs/order.yaml", "-o", "order.svg")
    assert (code, err) == (0, warning + "wrote order.svg\n")
    svg = (project / "order.svg").read_text()
    assert ">work in progress</text>" in svg and "1 error; `statechart check` explains" in svg


def test_render_of_a_clean_spec_says_nothing_of_progress(project: Path, run: Run) -> None:
    code, out, err = run("render", "specs/order.yaml", "--format", "dot")
    assert (code, err) == (0, "")
    assert "work in progress" not in out


@pytest.mark.parametrize(("text", "count"), [
    ("statechart: order\nversion: [\n", "1 error"),       # not YAML: no model
    ("statechart: order\nversion: 1\n", "2 errors"),       # no states: nothing to draw
])
def test_render_refuses_what_has_no_model_to_draw(project: Path, run: Run, text: str,
                                                  count: str) -> None:
    (project / "specs" / "draft.yaml").write_text(text, encoding="utf-8")
    code, out, err = run("render", "specs/draft.yaml", "--format", "dot")
    assert (code, out) == (1, "")
    assert err.endswith(f"statechart render: specs/draft.yaml has {count} and cannot be drawn; "
                        "fix them first (`statechart check` explains each)\n")


TESTS = Path(__file__).parent
BROKEN_CASES = sorted([*(TESTS / "cases").glob("*/*.yaml"), *(TESTS / "hostile").glob("*.yaml"),
                       *(TESTS / "render_cases").glob("*.yaml")])


@pytest.mark.parametrize("case", BROKEN_CASES, ids=lambda c: f"{c.parent.name}/{c.name}")
def test_every_broken_case_with_a_model_can_be_drawn(case: Path) -> None:
    """What `render` draws as a work in progress: every spec of the tests with a model."""
    from statechart.linter import check_file
    from statechart.render.dot import dot_source
    from statechart.render.mermaid import mermaid_source

    result = check_file(case)
    if result.spec is None or not result.spec.states:
        return
    draft = "1 error" if result.errors else None
    assert dot_source(result.spec, draft=draft).startswith("//")
    assert "stateDiagram-v2" in mermaid_source(result.spec, draft=draft)


# -- 17: what build says it did --------------------------------------------------------------

def test_a_first_build_says_created_then_updated(project: Path, run: Run) -> None:
    code, out, err = run("build")
    assert (code, err) == (0, "")
    assert out.splitlines() == [f"created   {rel}" for rel in (
        "docs/specs/b2b_order.md", "docs/specs/b2b_order.svg", "docs/specs/index.md",
        "docs/specs/order.md", "docs/specs/order.svg", "src/orders/generated/__init__.py",
        "src/orders/generated/b2b_order.py",
        "src/orders/generated/b2b_order.schema.json", "src/orders/generated/order.py",
        "src/orders/generated/order.schema.json")]
    edit(project / "specs" / "order.yaml", "version: 1", "version: 2")
    code, out, _ = run("build", "-q")
    assert code == 0
    assert "updated   src/orders/generated/order.py\n" in out and "created" not in out


def test_a_skipped_diagram_is_said_on_stdout(project: Path, run: Run) -> None:
    code, out, err = run("build", "--layout-max-transitions", "15")
    assert (code, err) == (0, "")
    assert out.startswith("statechart build: no diagram for specs/b2b_order.yaml: 17 "
                          "transitions exceed the layout bound of 15 (its page says so; "
                          "`layout-max-transitions` raises the bound)\n")
    assert "no diagram for specs/order.yaml" not in out
    assert "created   docs/specs/order.svg\n" in out
    assert "docs/specs/b2b_order.svg" not in out


# -- 15: command-line conventions --------------------------------------------------------------

def test_dash_v_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    from statechart import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["-V"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"statechart {__version__}\n"


def test_a_mistyped_command_gets_a_suggestion(run: Run) -> None:
    code, out, err = run("chek", "specs/")
    assert (code, out) == (2, "")
    assert err.endswith("statechart: error: unknown command `chek`; did you mean `check`?\n")
    assert err.startswith("usage: statechart ")
    code, _, err = run("frobnicate")
    assert code == 2 and "unknown command `frobnicate` (commands: check, build," in err


@pytest.mark.parametrize(("argv", "usage"), [
    (["check", "--bogus"], "usage: statechart check "),
    (["diff", "--bogus", "a", "b"], "usage: statechart diff "),
    (["runs", "list", "--store", "x.db", "--bogus"], "usage: statechart runs list "),
])
def test_an_unknown_option_shows_its_commands_usage(project: Path, run: Run,
                                                    capsys: pytest.CaptureFixture[str],
                                                    argv: list[str], usage: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith(usage)
    assert err.endswith(f"{usage.split('usage: ')[1].strip()}: error: unrecognized arguments: "
                        "--bogus\n")


def test_output_file_and_exit_zero(project: Path, run: Run) -> None:
    edit(project / "specs" / "order.yaml", "deliver: delivered", "deliver: deliverd")
    code, out, err = run("check", "--format", "concise", "-o", "report.txt", "--exit-zero",
                         "specs/order.yaml")
    assert (code, out, err) == (0, "", "")
    report = (project / "report.txt").read_text()
    assert "error[unknown-state]: target `deliverd`" in report
    assert report.endswith("Found 1 error and 0 warnings.\n")
    assert run("check", "--output-file", "report.txt", "specs/order.yaml")[:2] == (1, "")
    # A usage error checked nothing: the last report stays.
    assert run("check", "-o", "report.txt", "no/such.yaml")[0] == 2
    assert (project / "report.txt").read_text().endswith("Found 1 error and 0 warnings.\n")
    edit(project / "specs" / "order.yaml", "deliver: deliverd", "deliver: delivered")
    code, out, _ = run("diff", "--base", "specs/b2b_order.yaml", "--exit-zero",
                       "--output-file", "diff.json", "--format", "json")
    assert (code, out) == (0, "")
    assert '"rule": "set-added"' in (project / "diff.json").read_text()


def test_a_bogus_output_format_in_the_environment_is_a_usage_error(
        project: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATECHART_OUTPUT_FORMAT", "bogus")
    for command in ("check", "build", "diff"):
        argv = [command] + (["--base", "specs/b2b_order.yaml"] if command == "diff" else [])
        code, out, err = run(*argv)
        assert (code, out) == (2, ""), command
        assert err == (f"statechart {command}: STATECHART_OUTPUT_FORMAT='bogus' is not an output "
                       "format (one of: full, concise, json, github, sarif); set one, or unset "
                       "it\n")
    assert run("check", "--format", "concise")[0] == 0  # an explicit format wins


def test_build_check_reports_in_a_format(project: Path, run: Run) -> None:
    assert run("build", "-q")[0] == 0
    edit(project / "specs" / "order.yaml", "version: 1", "version: 2")
    code, out, err = run("build", "--check", "--format", "github")
    assert code == 1
    assert "::error title=build,file=src/orders/generated/order.py,line=1,col=1,endLine=1," \
           "endColumn=2::src/orders/generated/order.py is out of date: it differs from what " \
           "its spec generates%0Ahelp: run `statechart build` and commit the result\n" in out
    assert "stale     src/orders/generated/order.py\n" in out  # the diffs stay in the log
    code, out, err = run("build", "--check", "--format", "json")
    assert code == 1
    import json

    found = json.loads(out)  # stdout is the document only; the diffs went to stderr
    assert {(f["file"], f["rule"]) for f in found} >= {("src/orders/generated/order.py",
                                                        "build")}
    assert "statechart build --check: " in err
    edit(project / "specs" / "order.yaml", "deliver: delivered", "deliver: deliverd")
    code, out, err = run("build", "--check", "--format", "json")
    assert code == 1
    assert [f["rule"] for f in json.loads(out)] == ["unknown-state"]
    assert err == "statechart build: 1 error(s) in 1 file(s); nothing written\n"


def test_runs_list_and_show_take_the_same_formats(project: Path, run: Run,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from statechart_runtime.store import open_store

    open_store(str(project / "runs.db")).close()
    for fmt, shown in (("text", "no stored runs\n"), ("json", "[]\n"),
                       ("table", "no stored runs\n")):
        assert run("runs", "list", "--store", "runs.db", "--format", fmt) == (0, shown, "")
    with pytest.raises(SystemExit):
        main(["runs", "list", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "a SQLite file (a path, or sqlite:///PATH) or a PostgreSQL database " \
           "(postgresql://USER@HOST:PORT/DB; needs the `postgres` extra)" in help_text


def test_a_libpq_error_is_printed_on_one_readable_line(project: Path, run: Run) -> None:
    pytest.importorskip("psycopg")
    code, out, err = run("runs", "list", "--store", "postgresql://nobody@127.0.0.1:1/db")
    assert code != 0 and out == ""
    assert "<U+" not in err and err.count("\n") == 1
    assert "Connection refused" in err and "is the server running?" in err


def test_full_puts_a_root_cause_before_the_files_other_findings(project: Path,
                                                                run: Run) -> None:
    base = project / "specs" / "order.yaml"
    edit(base, "lose: {target: lost, set: [trackingNumber]}", "lose: lost")
    edit(base, "deliver: delivered", "deliver: deliverd")
    code, out, _ = run("check", "specs/order.yaml")
    assert code == 1
    headers = [line for line in out.splitlines() if line.startswith(("error[", "warning["))]
    assert headers == [
        "error[unknown-state]: target `deliverd` is not a state of this spec",
        "warning[unused-field]: record field `trackingNumber` is never set by an event or "
        "required by a state"]


def test_runs_verify_takes_the_report_options_of_check(project: Path, run: Run) -> None:
    from statechart_runtime.store import open_store

    open_store(str(project / "runs.db")).close()
    edit(project / "specs" / "order.yaml", "deliver: delivered", "deliver: deliverd")
    code, out, _ = run("runs", "verify", "--store", "runs.db", "--spec", "specs/order.yaml",
                       "--format", "concise", "--exit-zero", "-o", "verify.txt")
    assert (code, out) == (0, "")
    assert "error[unknown-state]" in (project / "verify.txt").read_text()
    assert run("runs", "verify", "--store", "runs.db", "--spec", "specs/order.yaml")[0] == 1
