"""The test tooling: explore a spec's runs, paths that cover it, spec coverage.

- `spec_paths`: `paths`, `follow`, `event_sequences` (what `statechart_runtime.testing` was
  before the runtime was laid out by layer; its names, and the explorer's it used, are
  re-exported here);
- `explore`: the state space of a run class, explored with the step a live run uses;
- `coverage`, `coverage_report`: spec coverage and its reports;
- `pytest_plugin`: `pytest --statechart-cov`.
"""

from __future__ import annotations

from statechart_runtime.testing.explore import START, Micro, Move, Snapshot, Space
from statechart_runtime.testing.spec_paths import (
    COVERS,
    MAX_CONFIGURATIONS,
    Cover,
    Item,
    Path,
    Paths,
    Step,
    Transition,
    answers_model,
    covered_by,
    event_sequences,
    follow,
    guard_names,
    items,
    paths,
)

__all__ = ["COVERS", "MAX_CONFIGURATIONS", "START", "Cover", "Item", "Micro", "Move", "Path",
           "Paths", "Snapshot", "Space", "Step", "Transition", "answers_model", "covered_by",
           "event_sequences", "follow", "guard_names", "items", "paths"]
