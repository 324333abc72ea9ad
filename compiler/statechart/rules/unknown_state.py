"""A name refers to a state (or tag) that does not exist.

What: a transition `target` or `in:` state, the spec's or a state's `initial` or
`history_default`, or a state in
a rule names no state of the spec; a rule's `{tag: ...}` names a tag no state carries; a
compound state's `initial` names a state that is not one of its children; the spec's
`initial` is a nested state.

Why: a typo in a target would make the transition fail only at run time, on the path that
takes it, which may be rare (python-statemachine reports `KeyError: 'complted'`).

These errors come first in a file, after the schema errors (`full`; `concise` lists by line).
A finding that only exists because of one (the state the typo meant, left unreachable; a
state that leads nowhere, so no path leaves it to a final state) is not reported on its own:
this error's help names it ("fixing this also clears what it causes"), with its line.

Example:

    running:
      on:
        finish: complted   # unknown-state: did you mean `completed`?

Fix: correct the name; the hint suggests the closest existing state (by spelling, or by a
word of its name: `held` for `on_hold`), else lists the states.
"""

from statechart.build_model import did_you_mean, listing
from statechart.diagnostics import Severity
from statechart.model_index import index
from statechart.rules._base import Check, Graph, Span, Spec, problem

ID = "unknown-state"
SEVERITY: Severity = "error"
PHASE = "model"


def _unknown(spec: Spec, name: str, span: Span, what: str) -> Check:
    hint = did_you_mean(name, spec.states, words=True) or listing("states", spec.states)
    yield problem(ID, SEVERITY, span, f"{what} `{name}` is not a state of this spec", hint)


def check(spec: Spec, graph: Graph) -> Check:
    states = spec.states
    # Whether some transition names a state that does not exist: else their walk is skipped.
    named = index(spec)
    unknown_names = not (named.targets <= states.keys() and named.in_states <= states.keys())
    if spec.initial:
        if spec.initial not in states:
            yield from _unknown(spec, spec.initial, spec.span, "initial state")
        elif states[spec.initial].parent is not None:
            yield problem(ID, SEVERITY, spec.span,
                          f"initial state `{spec.initial}` is nested inside "
                          f"`{states[spec.initial].parent}`",
                          "the spec's `initial` names a top-level state")
    for state in states.values():
        if state.initial is not None and state.initial_span is not None:
            if state.initial not in states:
                yield from _unknown(spec, state.initial, state.initial_span, "initial state")
            elif state.initial not in state.children and state.initial not in spec.duplicates:
                yield problem(ID, SEVERITY, state.initial_span,
                              f"initial state `{state.initial}` is not a child of `{state.name}`",
                              "children: " + ", ".join(state.children))
        # `history_default: NAME` is both kinds' default: one finding per place written.
        for span, default in {span: d for _, d, span in state.history_defaults}.items():
            if default not in states:
                yield from _unknown(spec, default, span, "history default")
        for t in state.transitions if unknown_names else ():
            if t.targets:
                for target, span in zip(t.targets, t.target_spans, strict=True):
                    if target not in states:
                        yield from _unknown(spec, target, span, "target")
            elif t.target not in states:
                yield from _unknown(spec, t.target, t.target_span, "target")
            if not t.in_states:
                continue
            for name, span in zip(t.in_states, t.in_spans, strict=True):
                if name not in states:
                    yield from _unknown(spec, name, span, "`in:` state")
    tags = {tag for s in states.values() for tag in s.tags}
    for rule in spec.rules:
        for kind, name, span in (*rule.sources, *rule.targets):
            if kind == "state" and name not in states:
                yield from _unknown(spec, name, span, "rule state")
            elif kind == "tag" and name not in tags:
                yield problem(ID, SEVERITY, span, f"no state has the tag `{name}`",
                              did_you_mean(name, tags) or "tags in use: "
                              + (", ".join(sorted(tags)) or "none"))
