"""An overlay that names what its base does not have is told the closest name the base has:
patching or removing a state, a transition's state or event, a field."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_overlay import BASE, write

from statechart.linter import check_file


@pytest.mark.parametrize(("overlay", "hint"), [
    ("states:\n  wroking: {on: {pause: idle}}\n", "did you mean `working`?"),
    ("remove: {states: [stoped]}\n", "did you mean `stopped`?"),
    ("remove: {transitions: [wroking.finish]}\n", "did you mean `working`?"),
    ("remove: {transitions: [working.finsh]}\n", "did you mean `finish`?"),
    ("remove: {fields: [reson]}\n", "did you mean `reason`?"),
])
def test_a_misspelt_name_gets_the_closest_one(tmp_path: Path, overlay: str,
                                              hint: str) -> None:
    specs = write(tmp_path, {"base.yaml": BASE,
                             "a.yaml": "extends: base\nstatechart: a\n" + overlay})
    problems = [d for d in check_file(specs / "a.yaml").diagnostics if d.rule == "overlay"]
    assert len(problems) == 1 and hint in problems[0].help, problems
