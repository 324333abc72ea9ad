"""A transition marked `internal: true` cannot be internal.

What: `internal: true` on a transition whose source is not a compound state, whose target is
not inside its source (a proper descendant), or that also enters its target by `history`.

Why: an internal transition keeps its source active: only what is active inside the source is
exited, so its exit and entry actions do not run and its timers keep running (SCXML
`type="internal"`, XState's `reenter: false`). That means something only for a target inside
a compound source. SCXML takes any other `internal` transition as an external one (a parallel
source is exited with all its regions: XState would keep it, statelyai/xstate#4360), so the
spec would not do what it says. A history transition into a state inside its source already
keeps the source (its domain is that of a transition to a child of its target).

Example:

    running:
      initial: reasoning
      states:
        reasoning:
          on:
            call_tool: {target: tool_call, internal: true}   # invalid-internal: a sibling
        tool_call: {}

Fix: declare the transition on the state that contains the target (`running: {on: {call_tool:
{target: tool_call, internal: true}}}`), or drop `internal: true`; to change data without
leaving the state, drop the `target` (a targetless transition).
"""

from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "invalid-internal"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for t in index(spec).internal:  # in document order
        if t.target not in spec.states:
            continue
        span = t.internal_span or t.span
        where = f"`{t.source}` on `{t.shown}`"
        if t.history:
            yield problem(ID, SEVERITY, span,
                          f"{where} is internal and enters `{t.target}` by history",
                          "drop `internal: true`: a history transition into a state inside "
                          "its source does not exit the source")
        elif t.target == t.source:
            yield problem(ID, SEVERITY, span,
                          f"{where} is internal and targets its own source",
                          "drop the `target` (a targetless transition exits nothing), or "
                          "drop `internal: true` to exit and re-enter the state")
        elif t.source not in spec.ancestors(t.target):
            yield problem(ID, SEVERITY, span,
                          f"{where} is internal, but `{t.source}` does not contain its "
                          f"target `{t.target}`: the source is exited all the same",
                          "declare the transition on a compound state that contains the "
                          "target, or drop `internal: true`")
        elif spec.states[t.source].kind == "parallel":
            yield problem(ID, SEVERITY, span,
                          f"{where} is internal, but `{t.source}` is a parallel state: "
                          "SCXML exits and re-enters it, every region included",
                          "declare the transition on the region (or the compound state "
                          "inside it) that contains the target, or drop `internal: true`")
