"""A state's `history_default` is not a state inside it.

What: `history_default:` (`NAME` for both kinds, `{shallow: NAME, deep: NAME}` for each) names
the state itself or a state outside it.

Why: a history transition into a state that remembers nothing yet takes the history's default
transition (SCXML `<history><transition target="..."/></history>`), which must stay inside the
state: SCXML requires its targets to be descendants of the history's parent (3.11), for either
kind; a shallow history's default may be deeper than a child (the states on the way down are
entered, as for a deep one). A state outside would make the history transition leave the
state it was meant to resume.

Example:

    running:
      initial: reasoning
      history_default: reviewing        # invalid-history-default: a sibling of `running`
      states:
        reasoning: {}
        tool_call: {states: {calling: {}, parsing: {}}, initial: calling}
    reviewing: {}

Fix: name a state inside it (`history_default: tool_call`, or a deeper one: `parsing`).
"""

from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "invalid-history-default"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for state in spec.states.values():
        reported: set[str] = set()
        for _, default, span in state.history_defaults:
            if default not in spec.states or default in reported:
                continue  # unknown-state reports it; `NAME` is both kinds: once
            if default == state.name or state.name not in spec.ancestors(default):
                reported.add(default)
                yield problem(ID, SEVERITY, span,
                              f"history default `{default}` of `{state.name}` is not inside "
                              f"`{state.name}`",
                              "name a state inside it: " + ", ".join(
                                  f"`{c}`" for c in state.children))
