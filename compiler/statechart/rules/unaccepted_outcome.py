"""A work item's outcome or error event is not accepted by its state.

What: an event listed in a state's `work.outcomes`, or its `work.error`, that neither the
state nor any of its ancestors has a transition on (an `on:` key that takes it: the event,
a descriptor of it such as `error` for `error.tool`, or `*`); or one the run raises itself
(`always`, `done.state.X`, a timer's `after.ID.X`).

Why: a handler's outcome is fired as an event of the run while the state is active. An event
no active state takes is refused (`EventNotAccepted`), so the work's result could never be
applied: the handler would run, and the run would never move on.

Example:

    states:
      tool_call:
        work: {handler: call_tool, timeout: 5m, outcomes: [tool_done]}
        on: {tool_result: reasoning}   # unaccepted-outcome: nothing takes `tool_done`

Fix: name an event the state takes (`outcomes: [tool_result]`), or add a transition on it to
the state or one of its ancestors.
"""

from statechart import semantics
from statechart.build_model.spelling import did_you_mean
from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "unaccepted-outcome"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for work in spec.work():
        if spec.states[work.state].is_final:
            continue  # invalid-work says it: a final state takes no events of its own
        accepted = sorted({t.event for a in (work.state, *spec.ancestors(work.state))
                           for t in spec.states[a].transitions if t.trigger == "event"})
        for event, span in work.events:
            taken = semantics.may_take(spec, work.state, event)
            if any(t.trigger == "event" for t in taken):
                continue
            why = (f"`{event}` is an event the run raises itself (eventless, completion or "
                   "timer), never a handler's" if taken else
                   f"no transition of `{work.state}` or its ancestors takes it")
            kind = "error event" if event == work.error and event not in work.outcomes \
                else "outcome"
            hint = did_you_mean(event, accepted) or (
                "the state takes " + ", ".join(f"`{e}`" for e in accepted) if accepted
                else "the state takes no events")
            yield problem(ID, SEVERITY, span,
                          f"{kind} `{event}` of the work of `{work.state}` is not accepted "
                          f"there: {why}",
                          f"{hint}; or add a transition on `{event}`")
