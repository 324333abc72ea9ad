"""The run layer: a run of a generated class, its record, and replay.

- `driver`: the one loop that runs an event, and the clock, to rest (the run's and the
  explorer's);
- `run`: the `Run` facade (`statechart_runtime.run.Run`);
- `record`: the record a run keeps and checks;
- `replay`: rebuilding macrostep boundaries from a record;
- `record_memo`: many stored records checked, each distinct history structure replayed once
  (`statechart runs verify`).

`statechart_runtime.run` was the module of `Run` before the runtime was laid out by layer; its
names are re-exported here so that `from statechart_runtime.run import Run` keeps working.
"""

from __future__ import annotations

from statechart_runtime.run.run import (
    MAX_TIMER_STEPS,
    EventNotAccepted,
    Run,
    RunClass,
    WorkEntry,
    active_states,
    forget_work_log,
    record_class_of,
    run_class_of,
    spec_of,
    steps_without_machine,
    work_log,
)

__all__ = ["MAX_TIMER_STEPS", "EventNotAccepted", "Run", "RunClass", "WorkEntry",
           "active_states", "forget_work_log", "record_class_of", "run_class_of", "spec_of",
           "steps_without_machine", "work_log"]
