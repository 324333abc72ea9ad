"""A transition clears a record field that a state it leads into requires.

What: a transition's `clear:` (or the `clear:` of a state the transition always exits: its
source and the source's ancestors below the transition's domain) unsets a field that a state
active after the transition `requires`, and the transition does not `set:` it again.

Why: clearing happens before the required fields are checked, so the run would refuse the
transition every time (`MissingField`): the transition can never be taken.

Example:

    waiting:
      clear: [approvalId]             # unset when `waiting` is exited
      on:
        approve: {target: approved}   # cleared-required: `approved` requires approvalId
    approved: {requires: [approvalId], ...}

Fix: do not clear the field on this way out (move the `clear:` to the transitions that need
it), set it again on the transition (`set: [approvalId]`), or drop the `requires`.
"""

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "cleared-required"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    if not index(spec).with_clears and not any(s.clear for s in spec.states.values()):
        return
    chart = spec_chart.chart(spec)
    for state in spec.states.values():
        for t in state.transitions:
            if not spec_chart.known(spec, t):
                continue
            # A targetless transition stays in its source; an internal one's domain is it.
            domain, entered = (t.source, ()) if t.targetless else spec_chart.effect(spec, t)
            exited = [a for a in (t.source, *chart.ancestors(t.source))
                      if chart.is_descendant(a, domain)]
            cleared = {f: f"`{t.source}` on `{t.event}` clears it" for f in t.clears}
            for name in exited:
                for f in spec.states[name].clear:
                    cleared.setdefault(f, f"leaving `{name}` clears it")
            # Active after the transition: the states it enters and the ancestors it keeps.
            after = [*entered,
                     *([domain, *chart.ancestors(domain)] if domain else [])]
            for name in after:
                for f in spec.states[name].requires:
                    if f in cleared and f not in t.sets:
                        yield problem(ID, SEVERITY, t.span,
                                      f"`{t.source}` on `{t.event}` enters `{name}`, which "
                                      f"requires `{f}`, but {cleared[f]}",
                                      f"add `set: [{f}]` to the transition, or do not clear "
                                      f"`{f}` on this way out")
                        cleared.pop(f)
