"""A state handles an event family before one of its members.

What: in one state's `on:`, a key that takes the events of a key written after it: `error`
before `error.tool` (a dotted event's prefix takes it: SCXML event descriptors), or `"*"`
before any other key.

Why: a run tries a state's `on:` keys in the order they are written, as SCXML does (document
order): `error` is tried first for `error.tool`, so `error.tool`'s alternatives are taken only
when every alternative of `error` is refused (never, if one is unguarded). XState tries the
most specific key first. Written the other way round, both engines do the same, and the order
says what happens.

Example:

    running:
      on:
        error: failed
        error.tool: retrying      # descriptor-order: `error` is written before it

Fix: write the specific key first (`error.tool: retrying`, then `error: failed`), and `"*"`
last; to try `error`'s guarded alternatives first for `error.tool`, list them under
`error.tool` too.
"""

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Spec, problem

ID = "descriptor-order"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    keys = index(spec).descriptor_keys  # the only states where a key can take a later one's
    for state in spec.states.values():
        if state.name not in keys:
            continue
        seen: list[str] = []
        for t in state.transitions:
            if t.trigger != "event" or t.order != 0:
                continue
            # Only `*`, the event itself or a dotted event's prefix can take it: most events
            # of most states need no search.
            general = next((k for k in seen if spec_chart.matches(k, t.event)), None) \
                if "." in t.event or "*" in seen or t.event in seen else None
            if general is not None:
                yield problem(ID, SEVERITY, t.span,
                              f"`{state.name}` on `{t.event}`: written after `{general}`, which "
                              f"also takes `{t.event}` and is tried first (document order; "
                              "XState would try the specific one first)",
                              f"write `{t.event}` before `{general}`")
            seen.append(t.event)
