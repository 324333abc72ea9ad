"""A state that is not final has no way out.

What: an atomic (leaf) state that is not `final: true` has no transition that leaves it, and
neither has any of its ancestors, or only ones that its own transitions for the same events
hide (a targetless `complete: {set: [...]}` on the state is taken before its parent's
`complete`). Once a run enters it, it stays there forever without being finished.

Why: a run stuck in a non-final state looks alive to every dashboard and never ends. Usually a
transition was forgotten, or the state should be final.

Example:

    waiting: {}            # trap-state: no transition leaves `waiting`

Fix: add a transition out of the state (a timeout or cancel event is common), or mark it
`final: true`.
"""

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "trap-state"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for state in spec.states.values():
        if not spec_chart.is_trap(spec, state.name):
            continue
        yield problem(ID, SEVERITY, state.span,
                      f"state `{state.name}` is not final and has no transition out",
                      f"add a transition to `{state.name}` (for example a cancel or timeout), "
                      "or mark it `final: true`")
