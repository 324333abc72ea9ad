"""The driver: how an event, and the clock, are run to rest. One loop, whatever it drives.

A live run on either path (its python-statemachine machine, or the kernel alone:
`statechart_runtime.run.Run`) and the path explorer (`statechart_runtime.testing.explore`)
run events through these functions; they differ only in how one microstep is taken
(`Take`), which each gives:

- `microstep`: the one pure function of a microstep (sismic's `MicroStep`): what an event
  selects from a run's state (`kernel.select`) and the effect of taking it (`kernel.step`),
  computed, nothing changed. The caller applies it: a run commits it to its record
  (`kernel.commit`) before the actions run, the explorer makes the next `Snapshot` of it.
- `opens`: whether a new run takes a macrostep before its first event (as `OPENING`);
- `macrostep`: an event's own microstep, then the rest of its macrostep (`kernel.settle`:
  eventless transitions while any is enabled, then the completion events raised, in order).
- `fire_due`: the timer loop: every timer due by a time, earliest first, each one macrostep
  stamped with its due time (or the last step's, if later); a timer whose event takes no
  transition is declined.

Guards are behind one interface: the caller's `ask(alternative)` (`kernel.Ask`), for each
alternative of the spec's table that has guards: python-statemachine's callbacks on the
machine path, the methods the guards name on the direct path, a table of answers in the
explorer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from statechart_runtime.chart import events as _events
from statechart_runtime.chart import kernel
from statechart_runtime.chart import timers as _timers

# One microstep of `event` with these values, taken and applied by the caller: whether it
# took one (False: the event selected nothing). It adds the completion events the microstep
# raised to the driver's `raised` list.
Take = Callable[[str, kernel.Given], bool]
NO_VALUES: kernel.Given = {}
# The most timer steps one `fire_due` takes (a spec whose deadlines in the past send the run
# round a loop would not end otherwise); the rest wait for the next call.
MAX_TIMER_STEPS = 10_000
# What a new run's first macrostep, which has no event of its own, is taken as (`opens`).
OPENING = _events.ALWAYS


def microstep(spec: Any, state: kernel.RunState, event: str, given: kernel.Given,
              at: dt.datetime, ask: kernel.Ask
              ) -> tuple[kernel.Selection, kernel.Effect | None, kernel.Refused | None]:
    """What `event` selects from `state`, and either the effect of taking it or why the spec
    does not allow that step (both None when the event selects nothing: the selection says
    what was refused). Pure: nothing is changed."""
    selection = kernel.select(spec, state, event, ask)
    if not selection.moves:
        return selection, None, None
    try:
        return selection, kernel.step(spec, state, event, selection.moves, given, at,
                                      selection.taken), None
    except kernel.Refused as refused:
        return selection, None, refused


def opens(spec: Any) -> bool:
    """Whether a new run takes a macrostep before its first event (`macrostep` of OPENING
    with no values): its initial states may enable eventless transitions (SCXML and XState
    take them at once)."""
    return bool(spec.alternatives.eventless)


def macrostep(spec: Any, event: str, given: kernel.Given | None, take: Take,
              active: Callable[[], Sequence[str]], raised: list[str]) -> bool:
    """`event`'s microstep (`given` None: a new run's first macrostep, which has no event of
    its own), then the eventless transitions and completion events that follow
    (`kernel.settle`), each through `take`; `active()` is the configuration now. False when
    the event selected nothing (nothing was taken); raises MacrostepLoop past the bound."""
    if given is not None and not take(event, given):
        return False
    if raised or spec.alternatives.eventless:
        kernel.settle(spec, event, active, raised,
                      lambda name: take(name, NO_VALUES))
    return True


def fire_due(when: dt.datetime, *, armed: Callable[[], list[_timers.Timer[Any, Any]]],
             ended: Callable[[], bool], last: Callable[[], dt.datetime],
             fire: Callable[[str, dt.datetime], bool],
             decline: Callable[[_timers.Timer[Any, Any]], None], limit: int) -> list[str]:
    """Fire every timer of `armed()` due by `when` that has not been declined, earliest
    first (one armed meanwhile too), until the run ends or `limit` timers were tried: each
    is `fire(event, at)`, one macrostep at its due time or `last()` (the last step's time)
    if that is later; one that `fire` says took no transition is `decline`d. Returns the
    events fired, in order."""
    fired: list[str] = []
    for _ in range(limit):
        due = _timers.pending(armed(), when)
        if not due or ended():
            break
        timer = due[0]
        event = timer.event.value
        since = last()
        if fire(event, since if timer.due < since else timer.due):
            fired.append(event)
        else:
            decline(timer)
    return fired
