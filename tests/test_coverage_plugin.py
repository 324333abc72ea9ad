"""Spec coverage, `pytest --statechart-cov` (statechart_runtime.pytest_plugin): a user's test
suite run with pytester against the generated module of tests/coverage/order.yaml, and what the
session reports: the table, the lines not covered, the threshold's exit code, the three report
formats read back, pytest-xdist workers merged, and runs restored from a SQLite store."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from statechart.codegen import python_module
from statechart.config import Config
from statechart.linter import check_file
from statechart.outputs import using
from statechart_runtime import coverage

pytest_plugins = ["pytester"]

SPEC = Path(__file__).parent / "coverage" / "order.yaml"
SPEC_LINES = SPEC.read_text().splitlines()

# What the two tests of SUITE cover: the order paid with stock and shipped, and one paid
# without stock (the guard's no) and backordered.
SUITE = '''
from order import Order


class NoStock:
    def in_stock(self):
        return False


def test_paid_and_shipped():
    run = Order()
    run.pay(paymentId="p1")
    run.paid()
    run.picked()
    run.invoiced()
    assert run.is_terminated


def test_backordered():
    run = Order(model=NoStock())
    run.pay(paymentId="p2")
    run.paid()
    assert run.status.value == "backordered"
'''
# Every other item of the spec: with SUITE, everything is covered.
REST = '''
import datetime as dt

from order import Order


def test_cancelled():
    Order().cancel()


def test_expired():
    run = Order()
    run.pay(paymentId="p3")
    run.fire_due(run.record.lastTransitionAt + dt.timedelta(minutes=16))
    assert run.status.value == "expired"


def test_restocked_held_and_released():
    class NoStock:
        def in_stock(self):
            return False

    run = Order(model=NoStock())
    run.pay(paymentId="p4")
    run.paid()
    run.restock()
    run.picked()
    run.hold()
    run.release()
    assert {s.value for s in run.configuration} >= {"packed", "drafting"}
'''


def line_of(text: str) -> int:
    """The line of order.yaml that holds `text` (once)."""
    found = [n for n, line in enumerate(SPEC_LINES, 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with specs/order.yaml and its generated module `order.py`, built as
    `statechart build` builds it (positions relative to the project root)."""
    (pytester.path / "specs").mkdir()
    spec_path = pytester.path / "specs" / "order.yaml"
    shutil.copy(SPEC, spec_path)
    with using(Config(pytester.path)):
        result = check_file(spec_path)
        assert result.spec is not None and not result.errors
        source = python_module.outputs(result.spec)["generated/order.py"]
    (pytester.path / "order.py").write_bytes(source)
    return pytester


# The user's sessions run in this process, without the plugins they do not need (xdist: its
# own test below; hypothesis and the cache: time).
QUIET = ("-p", "no:xdist", "-p", "no:hypothesispytest", "-p", "no:cacheprovider")


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_inprocess(*args, *QUIET)


def row(output: str, name: str) -> list[str]:
    """A row of the coverage table, split into its cells."""
    for line in output.splitlines():
        if line.startswith(name + " "):
            return re.split(r"\s{2,}", line.strip())
    raise AssertionError(f"no row {name!r} in:\n{output}")


def test_table_and_lines_not_covered(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=SUITE)
    result = run(project, "--statechart-cov")
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert "statechart spec coverage" in out
    # 11 transition alternatives (the two of `paid` separately), 14 states, the guard's
    # yes and no: 6 + 11 + 2 of 27 covered.
    assert row(out, "order") == ["order", "6/11 55%", "11/14 79%", "2/2 100%", "19/27 70%"]
    missing = out.split("Not covered:")[1]
    expected = [
        (line_of("cancel: cancelled"), "transition `placed` --cancel--> `cancelled`"),
        (line_of("15m: expired"), "transition `paying` --after.delay1.paying--> `expired`"),
        (line_of("restock: fulfilling"),
         "transition `backordered` --restock--> `fulfilling`"),
        (line_of("hold: on_hold"), "transition `fulfilling` --hold--> `on_hold`"),
        (line_of("  on_hold:"), "state `on_hold`"),
        (line_of("release:"), "transition `on_hold` --release--> `fulfilling` (history: deep)"),
        (line_of("expired: {final"), "state `expired`"),
        (line_of("cancelled: {final"), "state `cancelled`"),
    ]
    lines = [line for line in missing.splitlines() if line.startswith("specs/")]
    assert lines == [f"specs/order.yaml:{n}: order: {text}" for n, text in expected]


def test_everything_covered(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=SUITE, test_rest=REST)
    result = run(project, "--statechart-cov")
    result.assert_outcomes(passed=5)
    out = result.stdout.str()
    assert row(out, "order") == ["order", "11/11 100%", "14/14 100%", "2/2 100%",
                                 "27/27 100%"]
    assert "Not covered" not in out


def test_off_unless_asked(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=SUITE)
    result = run(project)
    result.assert_outcomes(passed=2)
    assert "spec coverage" not in result.stdout.str()
    assert coverage.RECORDER is None


@pytest.mark.parametrize("threshold, code, message", [
    ("71", pytest.ExitCode.TESTS_FAILED,
     "FAIL: spec coverage 70.37% (19/27) is below --statechart-cov-fail-under=71"),
    ("70", pytest.ExitCode.OK, "spec coverage 70.37% reaches --statechart-cov-fail-under=70"),
])
def test_fail_under(project: pytest.Pytester, threshold: str, code: pytest.ExitCode,
                    message: str) -> None:
    project.makepyfile(test_suite=SUITE)
    result = run(project, f"--statechart-cov-fail-under={threshold}")
    result.assert_outcomes(passed=2)  # every test passed: the threshold sets the exit code
    assert result.ret == code
    assert message in result.stdout.str()


@pytest.mark.parametrize("option, message", [
    ("--statechart-cov-fail-under=101", "expected a percentage from 0 to 100"),
    ("--statechart-cov-report=html:out.html", "expected FORMAT:PATH with FORMAT one of json"),
    ("--statechart-cov-report=lcov:", "expected FORMAT:PATH"),
    ("--statechart-cov-report=lcov:missing/out.lcov", "no such folder 'missing'"),
])
def test_bad_options(project: pytest.Pytester, option: str, message: str) -> None:
    project.makepyfile(test_suite=SUITE)
    result = run(project, option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_reports(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=SUITE)
    result = run(project, "--statechart-cov-report=json:cov.json",
                 "--statechart-cov-report=lcov:cov.lcov",
                 "--statechart-cov-report=cobertura:cov.xml")
    assert result.ret == pytest.ExitCode.OK
    for kind, name in (("json", "cov.json"), ("lcov", "cov.lcov"), ("cobertura", "cov.xml")):
        assert f"wrote {kind} report {name}" in result.stdout.str()
    cancel, paid_guard, placed = (line_of("cancel: cancelled"), line_of("guard: in_stock"),
                                  line_of("  placed:"))

    report = json.loads((project.path / "cov.json").read_text())
    assert report["totals"] == {"covered": 19, "total": 27, "percent": 100 * 19 / 27}
    [spec] = report["specs"]
    assert spec["totals"] == {"transitions": {"covered": 6, "total": 11},
                              "states": {"covered": 11, "total": 14},
                              "guard outcomes": {"covered": 2, "total": 2}}
    by_id = {item["id"]: item for item in spec["items"]}
    assert by_id["state placed"] == {"kind": "state", "id": "state placed", "file":
                                     "specs/order.yaml", "line": placed,
                                     "text": "state `placed`", "hits": 2}
    assert by_id["transition placed cancel 0"]["hits"] == 0
    assert by_id["guard paying paid 0 no"]["hits"] == 1

    records = (project.path / "cov.lcov").read_text().split("end_of_record\n")
    assert records[-1] == ""
    [lcov] = records[:-1]
    fields = lcov.splitlines()
    assert fields[:2] == ["TN:order", "SF:specs/order.yaml"]
    lines = dict(f[3:].split(",") for f in fields if f.startswith("DA:"))
    assert lines[str(cancel)] == "0" and lines[str(placed)] == "2"
    assert [f for f in fields if f.startswith(f"BRDA:{paid_guard},")] == [
        f"BRDA:{paid_guard},0,0,1", f"BRDA:{paid_guard},0,1,1"]
    assert f"LF:{len(lines)}" in fields
    assert f"LH:{sum(1 for v in lines.values() if v != '0')}" in fields

    root = ElementTree.parse(project.path / "cov.xml").getroot()
    assert root.tag == "coverage" and root.find("sources/source").text == str(project.path)
    [klass] = root.iter("class")
    assert klass.get("filename") == "specs/order.yaml"
    xml_lines = {int(e.get("number")): e for e in klass.iter("line")}
    assert xml_lines[cancel].get("hits") == "0"
    assert xml_lines[paid_guard].get("condition-coverage") == "100% (2/2)"
    assert int(root.get("lines-valid")) == len(lines)
    assert int(root.get("branches-covered")) == int(root.get("branches-valid")) == 2


def test_a_report_that_cannot_be_written_fails_the_session(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=SUITE)
    (project.path / "taken").mkdir()  # a folder where the report should go
    result = run(project, "--statechart-cov-report=json:taken")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "error: cannot write the spec coverage report 'taken'" in result.stdout.str()
    assert (project.path / "taken").is_dir() and not list((project.path / "taken").iterdir())


def test_runs_restored_from_a_store_count_only_what_they_do_after(
        project: pytest.Pytester) -> None:
    # The runs' history is made outside the coverage session: paid, then held (r1), paid (r2).
    made = project.runpython(project.makepyfile(make_store='''
        from order import Order
        from statechart_runtime.store import open_store

        store = open_store("sqlite:///runs.db")
        held = Order(run_id="r1")
        held.pay(paymentId="p1"); held.paid(); held.hold()
        store.create(held)
        paid = Order(run_id="r2")
        paid.pay(paymentId="p2"); paid.paid()
        store.create(paid)
        store.close()
        '''))
    assert made.ret == 0, made.stderr.str()
    project.makepyfile(test_restored='''
        from order import Order
        from statechart_runtime.store import open_store

        def test_released():
            store = open_store("sqlite:///runs.db")
            run = store.load(Order, "r1")  # its whole history replayed and checked
            run.release()
            store.save(run)
            store.fire(Order, "r2", "picked")  # restored from its head, then fired
            store.close()
        ''')
    result = run(project, "--statechart-cov")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    # release (deep history: back to picking and drafting) and picked; none of pay, paid,
    # hold, nor the states the history went through.
    assert row(out, "order") == ["order", "2/11 18%", "6/14 43%", "0/2 0%", "8/27 30%"]
    missing = out.split("Not covered:")[1]
    for text in ("transition `placed` --pay--> `paying`", "state `placed`", "state `paying`",
                 "transition `fulfilling` --hold--> `on_hold`", "state `on_hold`"):
        assert text in missing
    for text in ("--release-->", "--picked-->", "state `packed`", "state `drafting`"):
        assert text not in missing


XDIST_ARGS = ("--statechart-cov", "-p", "xdist", "-n", "2", "--dist", "loadfile", "-v")


@pytest.mark.slow
def test_xdist_workers_merge(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=SUITE, test_rest=REST)
    result = project.runpytest_subprocess(*XDIST_ARGS)
    result.assert_outcomes(passed=5)
    out = result.stdout.str()
    # Each worker ran one of the two files (neither covers everything alone), and the
    # controller runs no test: the full counts are the workers' merged.
    workers = {m.group(2): m.group(1) for m in re.finditer(r"\[(gw\d)\].*PASSED (\w+)\.py", out)}
    assert sorted(workers) == ["test_rest", "test_suite"] and len(set(workers.values())) == 2
    assert row(out, "order") == ["order", "11/11 100%", "14/14 100%", "2/2 100%",
                                 "27/27 100%"]


def test_merge_adds_up_processes(project: pytest.Pytester) -> None:
    """The fast part of the xdist test: what two processes recorded, merged (the data as a
    worker sends it, through JSON as execnet carries plain values)."""
    project.makepyfile(test_suite=SUITE, test_rest=REST, conftest='''
        import json
        import pytest
        from statechart_runtime import coverage

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(session):
            with open("recorded.json", "w") as out:
                json.dump(coverage.RECORDER.data(), out)
        ''')
    parts = []
    for name in ("test_suite.py", "test_rest.py"):
        run(project, "--statechart-cov", name)
        parts.append(json.loads((project.path / "recorded.json").read_text()))
    [merged] = coverage.merge(parts)
    [first] = coverage.merge(parts[:1])
    assert (first.counts("transition"), merged.counts("transition")) == ((6, 11), (11, 11))
    assert merged.hits["state placed"] == 2 + 3
    assert merged.hits["guard paying paid 0 no"] == 1 + 1


def test_a_module_without_positions_still_counts(tmp_path: Path) -> None:
    """A Run class of a module generated before `_SOURCE`: its items count, without lines,
    and lcov leaves them out."""
    from codegen_support import checked_spec, generate, import_source, parts

    from statechart_runtime import coverage_report

    module = import_source(generate(checked_spec(SPEC))["generated/order.py"], tmp_path,
                           "order")
    facade = parts(module)[0]

    class Old(facade):  # type: ignore[misc, valid-type]
        _sc_source = None

    recorder, previous = coverage.start()
    try:
        Old().cancel()
    finally:
        coverage.stop(previous)
    [spec] = coverage.merge([recorder.data()])
    assert {kind: spec.counts(kind) for kind in coverage.KINDS} == {
        "transition": (1, 11), "state": (2, 14), "guard": (0, 2)}
    assert "(no position): order: state `on_hold`" in coverage_report.table([spec])
    assert coverage_report.lcov([spec]) == "\n"


def test_several_specs_have_a_total_row(tmp_path: Path) -> None:
    from codegen_support import checked_spec, generate, import_source, parts

    from statechart_runtime import coverage_report

    order = parts(import_source(generate(checked_spec(SPEC))["generated/order.py"], tmp_path,
                                "order"))[0]
    root = Path(__file__).parent.parent
    agent = parts(import_source((root / "generated" / "agent_run.py").read_bytes(), tmp_path,
                                "agent_run"))[0]
    recorder, previous = coverage.start()
    try:
        order().cancel()
        agent().triage()
    finally:
        coverage.stop(previous)
    specs = coverage.merge([recorder.data()])
    assert [s.name for s in specs] == ["agent_run", "order"]
    lines = coverage_report.table(specs)
    assert [re.split(r"\s{2,}", line.strip()) for line in lines[1:4]] == [
        ["agent_run", "1/30 3%", "2/15 13%", "0/4 0%", "3/49 6%"],
        ["order", "1/11 9%", "2/14 14%", "0/2 0%", "3/27 11%"],
        ["TOTAL", "2/41 5%", "4/29 14%", "0/6 0%", "6/76 8%"]]
    assert coverage_report.total(specs) == (6, 76)
    assert "specs/agent_run.yaml:68: agent_run: transition `created` --cancel--> `cancelled`" \
        in lines


def test_a_transition_whose_action_raises_still_counts(tmp_path: Path) -> None:
    """The event is taken back (the run stays where it was), but the step was committed and
    its actions ran: it counts, as coverage.py counts a line that raised."""
    from codegen_support import checked_spec, generate, import_source, parts

    order = parts(import_source(generate(checked_spec(SPEC))["generated/order.py"], tmp_path,
                                "order"))[0]

    class Failing:
        def on_enter_paying(self) -> None:
            raise RuntimeError("payment provider down")

    recorder, previous = coverage.start()
    try:
        run = order(model=Failing())
        with pytest.raises(RuntimeError, match="payment provider down"):
            run.pay(paymentId="p1")
    finally:
        coverage.stop(previous)
    assert [s.value for s in run.configuration] == ["placed"]
    [spec] = coverage.merge([recorder.data()])
    assert spec.hits == {"state placed": 1, "transition placed pay 0": 1, "state paying": 1}


def test_two_versions_of_a_spec_are_told_apart() -> None:
    from statechart_runtime import coverage_report

    item = coverage.Item("state", "state idle", "specs/wait.yaml", 3, "state `idle`")
    old = coverage.SpecCoverage("wait", 1, "f14f6ae3" + "0" * 56, [item], {"state idle": 1})
    new = coverage.SpecCoverage("wait", 2, "77f1d653" + "0" * 56, [item], {})
    lines = coverage_report.table(coverage.merge([[old.as_data(), new.as_data()]]))
    assert [line.split("  ")[0] for line in lines[1:3]] == ["wait (v1 f14f6ae3)",
                                                            "wait (v2 77f1d653)"]
    assert lines[-1] == "specs/wait.yaml:3: wait (v2 77f1d653): state `idle`"
