"""The pytest plugin for spec coverage (docs/testing-coverage.md), registered by the runtime's
distribution (the `pytest11` entry point `statechart_cov`) and off unless asked for:

    pytest --statechart-cov [--statechart-cov-fail-under=PCT]
           [--statechart-cov-report=json:PATH|lcov:PATH|cobertura:PATH ...]

Either of the two last options turns it on too. It records (statechart_runtime.coverage) what
the session's live runs of every generated Run class cover, prints a table per spec and the
items not covered at the end, writes the reports, and fails the session (exit code 1) when the
total is below the threshold. Under pytest-xdist each worker records its own runs and hands
its data to the controller (`workeroutput`), which merges them and reports once.

Off, this module costs a pytest session only its options: it imports none of the runtime's
modules until asked.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

_OUTPUT_KEY = "statechart_cov"  # in a pytest-xdist worker's `workeroutput`


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("statechart-cov", "spec coverage (statechart-runtime)")
    group.addoption("--statechart-cov", action="store_true", default=False,
                    help="record the states, transitions and guard outcomes of each spec that "
                         "the tests' runs of generated Run classes cover, and report them")
    group.addoption("--statechart-cov-fail-under", metavar="PCT", type=_percent, default=None,
                    help="fail the session when less than PCT percent of all items (states, "
                         "transitions, guard outcomes) are covered; implies --statechart-cov")
    group.addoption("--statechart-cov-report", metavar="FORMAT:PATH", action="append",
                    default=[],
                    help="also write a report whose lines are spec lines: json:PATH, "
                         "lcov:PATH or cobertura:PATH (repeatable); implies --statechart-cov")


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise pytest.UsageError(f"--statechart-cov-fail-under={text}: expected a percentage "
                                "from 0 to 100")
    return value


def pytest_configure(config: pytest.Config) -> None:
    reports = config.getoption("statechart_cov_report")
    fail_under = config.getoption("statechart_cov_fail_under")
    if not (config.getoption("statechart_cov") or reports or fail_under is not None):
        return
    from statechart_runtime.errors import CoverageError
    from statechart_runtime.testing import coverage_report

    try:
        targets = [coverage_report.parse_target(text) for text in reports]
    except CoverageError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(_SpecCoverage(config, targets, fail_under),
                                  "statechart-cov-session")


class _SpecCoverage:
    """The plugin while it is on: one per pytest process (controller or worker)."""

    def __init__(self, config: pytest.Config, targets: list[tuple[str, Any]],
                 fail_under: float | None) -> None:
        from statechart_runtime.testing import coverage

        self.config = config
        self.targets = targets
        self.fail_under = fail_under
        self.recorder, self.previous = coverage.start()
        self.parts: list[list[dict[str, Any]]] = []  # what the workers sent
        self.lines: list[str] = []  # the terminal summary
        self.failed = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """A pytest-xdist worker finished: keep what it recorded."""
        output = getattr(node, "workeroutput", None) or {}
        if _OUTPUT_KEY in output:
            self.parts.append(output[_OUTPUT_KEY])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if hasattr(self.config, "workeroutput"):  # a pytest-xdist worker: the controller reports
            self.config.workeroutput[_OUTPUT_KEY] = self.recorder.data()
        elif not self.config.option.collectonly:
            self._report(session)
        return result

    def _report(self, session: pytest.Session) -> None:
        from statechart_runtime.errors import CoverageError
        from statechart_runtime.testing import coverage, coverage_report

        specs = coverage.merge([self.recorder.data(), *self.parts])
        if not specs:
            self.lines = ["no run of a generated Run class was created or restored"]
        else:
            self.lines = coverage_report.table(specs)
        for kind, path in self.targets:
            try:
                coverage_report.write(path, coverage_report.render(
                    kind, specs, str(self.config.rootpath)))
            except CoverageError as exc:
                self.lines.append(f"error: {exc}")
                self.failed = True
            else:
                self.lines.append(f"wrote {kind} report {path}")
        covered, count = coverage_report.total(specs)
        reached = coverage_report.percent(covered, count)
        if self.fail_under is not None:
            if reached < self.fail_under:
                self.lines.append(f"FAIL: spec coverage {reached:.2f}% ({covered}/{count}) is "
                                  f"below --statechart-cov-fail-under={self.fail_under:g}")
                self.failed = True
            else:
                self.lines.append(f"spec coverage {reached:.2f}% reaches "
                                  f"--statechart-cov-fail-under={self.fail_under:g}")
        if self.failed:
            session.testsfailed += 1  # exit code 1, as a failing test gives

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.lines:
            return
        terminalreporter.write_sep("-", "statechart spec coverage")
        for line in self.lines:
            terminalreporter.write_line(line)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        from statechart_runtime.testing import coverage

        coverage.stop(self.previous)
