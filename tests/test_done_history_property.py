"""Save and restore are invisible with completion and history.

Examples found by the property tests of completion and history, each the smallest spec that
showed it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text, psm_configuration, record_configuration
from test_soundness import build


def same_run(original: Any, restored: Any, remembers: bool) -> None:
    assert record_configuration(restored) == record_configuration(original)
    assert psm_configuration(restored) == record_configuration(restored)
    if remembers:
        assert restored.record.remembered == original.record.remembered
    assert restored.record.to_json() == original.record.to_json()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("done_history_property")


EXITS_ITS_TARGET = """\
statechart: exits_target
version: 1
initial: t
states:
  t:
    parallel: true
    states:
      r1:
        initial: a
        states:
          a: {on: {next: b}}
          b: {on: {back: {target: t, history: deep}, again: {target: r2, history: shallow},
                   finish: end}}
      r2:
        initial: c
        states:
          c: {on: {step: d}}
          d: {on: {finish: end}}
  end: {final: true}
"""


@pytest.mark.parametrize(("event", "after"), [("back", {"b", "d"}), ("again", {"a", "d"})])
def test_a_history_transition_that_exits_its_target_reenters_what_it_left(
        event: str, after: set[str], folder: Path) -> None:
    """SCXML remembers what a step exits before it enters anything: `back` (from inside the
    parallel target) and `again` (from another region, whose domain is above the parallel
    state: r1 restarts at a) exit their target and re-enter what it held, as
    python-statemachine does; found by the property above (the run's record said c: the
    default entry)."""
    spec = checked_text(EXITS_ITS_TARGET)
    assert spec is not None
    module = build(spec, folder)
    run = module.ExitsTarget()
    run.next()
    run.step()
    getattr(run, event)()
    assert record_configuration(run) == {"t", "r1", "r2", *after} == psm_configuration(run)
    restored = module.ExitsTarget.restore(module.ExitsTargetRecord.from_json(
        run.record.to_json()))
    same_run(run, restored, remembers=True)
