"""The graph breaks one of the spec's own rules (`rules:`).

What: a rule under `rules:` does not hold. The three kinds:

- `never: {from: A, to: B}`: no transition that can fire while in A enters B;
- `only: {from: A, to: [B, C]}`: every transition that leaves A enters B or C (or stays in A);
- `unreachable: {from: A, to: B}`: no path at all, however long, leads from A to B, and B
  cannot be active alongside A (in another region of a parallel state A is in).

A state name means that state and everything nested in it (being "in running" includes being in
`running.reasoning`); `{tag: t}` means every state tagged `t`, with everything nested in it.
Transitions declared on a parent state count for its children, and so do the transitions of the
other regions of a parallel state A is in (they fire while A is active), as a run selects them:
a transition of the state itself (or of a state between it and the parent) for the same event
comes first, and one that nothing can refuse (no guard) hides the parent's; guards may answer
either way. A transition "enters"
every state of its entry set: its target, the target's default children, and the default states
of the other regions of a parallel state it enters (see docs/semantics.md). A history
transition may enter any state under its target that was active before: `never` and
`unreachable` count them all, `only` none of them (the rule must hold wherever the target was
left). The message shows
a counter-example: for `never` and `only` the shortest path from `initial` through the
offending transition (one that no path from `initial` reaches while in A does not count), for
`unreachable` the shortest path from A to B.

Why: these are the invariants a team relies on ("a completed run never runs again"), checked
on every change of the spec instead of discovered in production.

Example:

    rules:
      - unreachable: {from: cancelled, to: resumed}
    # rule-violation: `resumed` is reachable from `cancelled`:
    #   cancelled -reopen-> created -resume-> resumed

Fix: remove or redirect the transition on the counter-example path, or change the rule if the
team's intent changed.
"""

import os

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.graph import Step, format_path
from statechart.model import Selector, SpecRule, Transition
from statechart.rules._base import Check, Graph, Span, Spec, problem

ID = "rule-violation"
SEVERITY: Severity = "error"
PHASE = "graph"


def states(spec: Spec, selectors: tuple[Selector, ...]) -> list[str]:
    picked: dict[str, None] = {}
    for kind, name, _ in selectors:
        roots = [name] if kind == "state" else [s.name for s in spec.states.values()
                                                  if name in s.tags]
        for root in roots:
            if root in spec.states:
                for sub in spec.subtree(root):
                    picked.setdefault(sub, None)
    return list(picked)


def _describe(selectors: tuple[Selector, ...]) -> str:
    parts = [n if k == "state" else f"tag:{n}" for k, n, _ in selectors]
    return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"


def _label(rule: SpecRule) -> str:
    sentence = f"{rule.kind} from {_describe(rule.sources)} to {_describe(rule.targets)}"
    return f'rule "{rule.id}" ({sentence})' if rule.id else f'rule "{sentence}"'


def firing_while(spec: Spec, sources: list[str]) -> list[tuple[Transition, list[str]]]:
    """The transitions that may fire while a state of `sources` is active, each with the
    atomic states it may fire from then: those under a state of `sources` or in another
    region of a parallel state one of them is in (`spec_chart.co_active`), whose line does
    not shadow it (`spec_chart.may_fire`: the run's selection, whatever the guards answer).
    Approximation (a "may" answer): a run is assumed able to be in any such atomic state
    while `sources` are active; a transition of another region may in fact always be
    preempted by one of this region's. In the order the spec declares them."""
    chart = spec_chart.chart(spec)
    around = spec_chart.co_active(spec, sources)
    found: dict[int, tuple[Transition, list[str]]] = {}
    for leaf in around:
        if chart.is_atomic(leaf):
            for t in spec_chart.may_fire(spec, leaf):
                found.setdefault(id(t), (t, []))[1].append(leaf)
    rank = {name: i for i, name in enumerate(around)}
    return sorted(found.values(), key=lambda item: (
        rank[item[0].source], spec.states[item[0].source].transitions.index(item[0])))


def counter_example(spec: Spec, graph: Graph, t: Transition, leaves: list[str],
                    sources: set[str]) -> list[Step] | None:
    """A counter-example that ends with transition `t`: how a run gets from `initial` to one
    of the atomic states `leaves` it fires from while a state of `sources` is active (the
    nearest one under `sources`; else, for one in another region of a parallel state, the
    nearest state of `sources` it is alongside, then the nearest of `leaves` from there),
    then `t`. None when the graph has no such path: then no run has one either (the graph
    has every step a run can take)."""
    if spec.initial not in spec.states:
        return None
    inside = {x for x in leaves if x in sources}
    prefix = graph.shortest_path([spec.initial], inside) if inside else None
    if prefix is None:
        beside = {a for a in sources if not set(leaves).isdisjoint(spec_chart.alongside(spec, [a]))}
        prefix = graph.shortest_path([spec.initial], beside) if beside else None
        if prefix is not None:
            rest = graph.shortest_path([prefix[-1].target if prefix else spec.initial],
                                       set(leaves))
            prefix = None if rest is None else [*prefix, *rest]
    if prefix is None:
        return None
    leaf = prefix[-1].target if prefix else spec.initial
    up = [Step(leaf, None, t.source)] if leaf != t.source else []
    return [*prefix, *up, Step(t.source, t, t.target)]


def violations(spec: Spec, graph: Graph, rule: SpecRule) -> list[tuple[Transition, list[Step]]]:
    """How a `never` or `only` rule is broken: each transition that breaks it (`broken_by`)
    with a counter-example from `initial` (`counter_example`; one with none is left out)."""
    sources = set(states(spec, rule.sources))
    out = []
    for t, leaves in broken_by(spec, rule):
        steps = counter_example(spec, graph, t, leaves, sources)
        if steps is not None:
            out.append((t, steps))
    return out


def broken_by(spec: Spec, rule: SpecRule) -> list[tuple[Transition, list[str]]]:
    """The transitions that break a `never` or `only` rule, each with the atomic states it
    may fire from while a state of the rule's `from` is active (`firing_while`)."""
    sources = states(spec, rule.sources)
    targets = set(states(spec, rule.targets))
    if not sources or not targets or rule.kind == "unreachable":
        return []  # unknown names: reported by unknown-state
    source_set = set(sources)
    out = []
    for t, leaves in firing_while(spec, sources):
        if not spec_chart.known(spec, t):
            continue  # reported by unknown-state; it says nothing about this rule
        if rule.kind == "only" and not any(spec_chart.exits(spec, t, s) for s in sources):
            continue  # a transition of another region that leaves A alone
        # `never`: what t may enter; `only`: what it surely enters (a history transition
        # may or may not re-enter A or a state of B).
        entered = spec_chart.entry_set(spec, t) if rule.kind == "never" \
            else spec_chart.sure_entry_set(spec, t)
        hits = [s for s in entered if s in targets]
        if (rule.kind == "never" and hits) or (
                rule.kind == "only" and source_set.isdisjoint(entered) and not hits):
            out.append((t, leaves))
    return out


def _unreachable(spec: Spec, graph: Graph, rule: SpecRule, sources: list[str],
                 targets: set[str]) -> Check:
    """B must never be active once A has been: not later on a path from A, and not at the
    same time, in another region of a parallel state A is in (any state of such a region that
    a run can reach may be the active one there)."""
    overlap = [s for s in sources if s in targets]
    if overlap:
        yield problem(ID, SEVERITY, rule.span,
                      f"{_label(rule)}: `{overlap[0]}` is on both sides of the rule",
                      "a state is always reachable from itself; fix `from` or `to`")
        return
    reached = graph.reachable([spec.initial]) if spec.initial in spec.states else set()
    alongside = [s for s in spec_chart.alongside(spec, sources) if s in reached]
    path = graph.shortest_path([*sources, *alongside], targets)
    if path is None:
        return
    start = path[0].source if path else next(s for s in alongside if s in targets)
    end = path[-1].target if path else start
    if start in alongside:
        beside = next(a for a in sources if start in spec_chart.alongside(spec, [a]))
        how = f"`{start}` can be active alongside `{beside}` (another region of a parallel " \
              "state)" + (f", then {format_path(start, path)}" if path else "")
    else:
        how = format_path(start, path)
    yield problem(ID, SEVERITY, rule.span,
                  f"{_label(rule)} is broken: `{end}` is reachable from `{start}`: {how}"
                  if path else f"{_label(rule)} is broken: {how}",
                  "remove or redirect a transition on this path, or move the states out of "
                  "the parallel state" if start in alongside else
                  "remove or redirect a transition on this path")


def check(spec: Spec, graph: Graph) -> Check:
    for rule in spec.rules:
        sources = states(spec, rule.sources)
        targets = set(states(spec, rule.targets))
        if not sources or not targets:
            continue  # unknown names: reported by unknown-state
        if rule.kind == "unreachable":
            yield from _unreachable(spec, graph, rule, sources, targets)
            continue
        for t, steps in violations(spec, graph, rule):
            fix = "remove this transition or change its target" if rule.kind == "never" \
                else f"target one of {_describe(rule.targets)} instead"
            message = (f"{_label(rule)} is broken by `{t.source}` -{t.shown}-> `{t.shown_target}`: "
                       f"{format_path(spec.initial, steps)}")
            own = spec.overlay.chain[0] if spec.overlay is not None else None
            if own is not None and rule.span.file == own and t.target_span.file != own:
                # The overlay's own rule, broken by a transition of the base it does not own:
                # the overlay is what has to change, at its rule.
                yield problem(ID, SEVERITY, rule.span,
                              f"{message} (the transition is at {_at(t.target_span)})",
                              "this overlay's rule does not hold for its base: change the rule, "
                              f"or in this overlay redirect the transition (`states: "
                              f"{{{t.source}: {{{_redirect(t)}: ...}}}}}}`) or remove it "
                              f"(`remove: {{transitions: [{t.source}.{t.key}]}}`)")
                continue
            where = f"line {rule.span.line}" if rule.span.file == t.target_span.file \
                else _at(rule.span)
            yield problem(ID, SEVERITY, t.target_span, message, f"{fix} (rule at {where})")


def _at(span: Span) -> str:
    """`file.yaml:LINE`, for a position in another file than the one reported."""
    return f"{os.path.basename(span.file)}:{span.line}"


def _redirect(t: Transition) -> str:
    """Where an overlay redirects `t`: `on: {EVENT` or, for a timer, `after: {15m`."""
    if t.trigger == "after":
        return "after: {" + str(t.after_key)
    return "on: {" + t.event
