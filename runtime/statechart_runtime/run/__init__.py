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
They are imported when first asked for: the path explorer needs `driver` only, and `run`
imports python-statemachine (a third of `statechart paths`' start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name in __all__:
        from statechart_runtime.run import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
