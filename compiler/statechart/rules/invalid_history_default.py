"""A state's `history_default` is not a state inside it.

What: `history_default:` names the state itself or a state outside it, or, for shallow history
(`history_default: NAME` covers both kinds, `{shallow: NAME}` one), a state that is not one of
its children.

Why: a history transition into a state that remembers nothing yet takes the history's default
transition (SCXML `<history><transition target="..."/></history>`), which must stay inside the
state: SCXML requires the default of a shallow history to be a child of its parent, and of a
deep one a descendant. A state outside would make the history transition leave the state it
was meant to resume.

Example:

    running:
      initial: reasoning
      history_default: reviewing        # invalid-history-default: a sibling of `running`
      states:
        reasoning: {}
        tool_call: {states: {calling: {}, parsing: {}}, initial: calling}
    reviewing: {}

Fix: name a state inside it (`history_default: tool_call`); a deep descendant
(`parsing`) only for deep history: `history_default: {deep: parsing, shallow: tool_call}`.
"""

from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "invalid-history-default"
SEVERITY: Severity = "error"
PHASE = "model"


def check(spec: Spec, graph: Graph) -> Check:
    for state in spec.states.values():
        reported: set[str] = set()
        for kind, default, span in state.history_defaults:
            if default not in spec.states or default in reported:
                continue  # unknown-state reports it; `NAME` is both kinds: once
            if default == state.name or state.name not in spec.ancestors(default):
                reported.add(default)
                yield problem(ID, SEVERITY, span,
                              f"history default `{default}` of `{state.name}` is not inside "
                              f"`{state.name}`",
                              "name a state inside it: " + ", ".join(
                                  f"`{c}`" for c in state.children))
            elif kind == "shallow" and spec.states[default].parent != state.name:
                reported.add(default)
                yield problem(ID, SEVERITY, span,
                              f"shallow history default `{default}` of `{state.name}` is not "
                              f"a child of `{state.name}` (it is inside "
                              f"`{spec.states[default].parent}`)",
                              "a shallow history re-enters a child: name one, or give deep "
                              f"history its own default: `history_default: {{deep: {default}, "
                              f"shallow: {_child_on_path(spec, state.name, default)}}}`")


def _child_on_path(spec: Spec, parent: str, name: str) -> str:
    """The child of `parent` that contains `name`."""
    line = [name, *spec.ancestors(name)]
    return line[line.index(parent) - 1]
