"""Data-driven rule tests: every `tests/cases/<rule>/<case>.yaml` is checked and its concise
output compared with `<case>.out` next to it. Cases under `ok/` must have no findings.

Update the expected files with `UPDATE_GOLDEN=1 pytest tests/test_rule_cases.py`, then review
the diff: the expected files are the specification of what users see.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from statechart.linter import check_file
from statechart.report import concise
from statechart.rules import RULES

CASES = Path(__file__).parent / "cases"
ALL = sorted(CASES.glob("*/*.yaml"))


def _output(case: Path) -> str:
    result = check_file(case)
    text = concise(result.diagnostics, {})
    return text.replace(str(case), case.name)


@pytest.mark.parametrize("case", ALL, ids=[c.relative_to(CASES).as_posix() for c in ALL])
def test_case(case: Path) -> None:
    got = _output(case)
    expected_file = case.with_suffix(".out")
    if os.environ.get("UPDATE_GOLDEN") == "1":
        expected_file.write_text(got, encoding="utf-8")
    assert expected_file.exists(), f"missing {expected_file}; run with UPDATE_GOLDEN=1"
    assert got == expected_file.read_text(encoding="utf-8")
    folder = case.parent.name
    if folder == "ok":
        assert got == ""
    else:
        assert folder in RULES, f"case folder {folder} is not a rule id"
        assert f"[{folder}]" in got, f"case {case.name} does not trigger {folder}"


def test_every_rule_has_a_case() -> None:
    folders = {p.name for p in CASES.iterdir() if p.is_dir()}
    # yaml-syntax is covered by the hostile corpus (tests/hostile), overlay by test_overlay.py:
    # both need files that a single-file case cannot hold; scxml-import by test_scxml.py: it
    # is about SCXML files, not specs.
    untested = [r for r in RULES if r not in folders
                and r not in ("yaml-syntax", "overlay", "scxml-import")]
    assert untested == []
