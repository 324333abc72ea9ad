"""Completion or eventless transitions that take each other forever.

What: a state's `done:` or eventless (`always:`) transitions lead, directly or through other
states' `done:` and eventless transitions, back to a state whose transitions are taken again,
and nothing can stop it: one of the state's alternatives has no guard (nor an `in:` state
other than its own state or an ancestor), and every alternative before it, should its guard
say yes, leads back into the loop too; each enters its states whatever the run remembers. A
`done:` transition leads to the completion it raises (a final state it enters completes its
parent), an eventless one to the eventless transitions of the states it enters. An
eventless transition counts only when no other one can be taken before it (none on a state
inside its own, nor in another region alongside that comes first in document order) and its
unguarded alternative enters no state with a `limit:` (the limit stops it). A targetless or
internal eventless transition leaves its state active: unguarded, it loops on its own.

Why: the run takes completion events and eventless transitions by itself, as part of the
event that started them. A loop of them never gives control back: the `send` would not
return (the run stops it after `kernel.MAX_MICROSTEPS` microsteps with `MacrostepLoop`, and
the event is refused).

Example:

    states:
      job:
        initial: working
        done: finished          # completion-loop: entering `finished` completes `job` again
        states:
          working: {on: {finish: finished}}
          finished: {final: true}
      ping: {always: pong}      # completion-loop: `ping` always -> `pong`, `pong` always ->
      pong: {always: ping}      # `ping`, ...

Fix: target a state outside the loop (`done:` usually leaves the completed state), or guard
a transition of the loop so that it stops.
"""

from statechart import spec_chart
from statechart.diagnostics import Severity
from statechart.model import Transition
from statechart.model_index import index
from statechart.rules._base import Check, Diagnostic, Graph, Spec, problem

ID = "completion-loop"
SEVERITY: Severity = "error"
PHASE = "graph"

# A node of the loop graph: ("done", STATE) for a state's completion, ("always", STATE) for
# its eventless transitions.
Node = tuple[str, str]


def _surely_taken(spec: Spec) -> dict[Node, list[Transition]]:
    """Node -> the alternatives it may take, the last one nothing can stop (see the module
    docstring); a node is left out when it may take none."""
    out: dict[Node, list[Transition]] = {}
    by_trigger = index(spec).by_trigger
    eventless = {t.source for t in by_trigger["always"]}
    order = {name: i for i, name in enumerate(spec.states)}
    own: dict[Node, list[Transition]] = {}  # each state's, in order
    for trigger in ("done", "always"):
        for t in by_trigger[trigger]:
            own.setdefault((trigger, t.source), []).append(t)
    # In the states' order, a state's `done` before its `always`.
    for trigger, name in sorted(own, key=lambda node: (order[node[1]], node[0] != "done")):
        alternatives = own[(trigger, name)]
        last = next((i for i, t in enumerate(alternatives) if spec.always_enabled(t)), None)
        if last is None or any(t.target not in spec.states for t in alternatives[:last + 1]):
            continue
        if trigger == "always" and (
                any(s in eventless for s in spec.subtree(name)[1:])
                or any(s in eventless and order[s] < order[name]
                       for s in spec_chart.alongside(spec, [name]))
                or any(spec.states[s].limit
                       for s in spec_chart.sure_entry_set(spec, alternatives[last]))):
            continue
        out[(trigger, name)] = alternatives[:last + 1]
    return out


def _next(spec: Spec, t: Transition, taken: dict[Node, list[Transition]],
          completing: set[str]) -> list[Node]:
    """The nodes whose transitions surely come after `t`: the eventless ones of a state it
    leaves active, and the completions it surely raises (a final state it surely enters
    completes its parent)."""
    out: list[Node] = []
    after = list(spec_chart.sure_entry_set(spec, t))
    if t.kind != "external":  # targetless or internal: the source stays active
        after.append(t.source)
    for name in after:
        if ("always", name) in taken and ("always", name) not in out:
            out.append(("always", name))
    for name in spec_chart.sure_entry_set(spec, t):
        parent = spec.states[name].parent
        if spec.states[name].is_final and parent in completing and ("done", parent) not in out:
            out.append(("done", parent))
    return out


def _after(spec: Spec, alternatives: list[Transition], taken: dict[Node, list[Transition]],
           completing: set[str]) -> list[Node]:
    """The nodes that surely come next whichever of `alternatives` is taken."""
    first, *others = [_next(spec, t, taken, completing) for t in alternatives]
    return [n for n in first if all(n in o for o in others)]


def check(spec: Spec, graph: Graph) -> Check:
    taken = _surely_taken(spec)
    completing = {t.source for t in index(spec).by_trigger["done"]}
    edges = {node: _after(spec, alts, taken, completing) for node, alts in taken.items()}
    reported: set[Node] = set()
    for start in taken:
        if start in reported:
            continue
        # A path from `start` along transitions that are surely taken; a loop when it comes
        # back to a node already on it.
        path, stack = [start], [iter(edges[start])]
        on_path = {start}
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                on_path.discard(path.pop())
                stack.pop()
                continue
            if nxt in on_path:
                loop = path[path.index(nxt):]
                if reported.isdisjoint(loop):
                    reported.update(loop)
                    yield _problem(spec, taken, loop)
                continue
            if nxt in taken and nxt not in reported:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(iter(edges.get(nxt, ())))


def _problem(spec: Spec, taken: dict[Node, list[Transition]], loop: list[Node]) -> Diagnostic:
    order = list(spec.states)
    first = min(loop, key=lambda node: (order.index(node[1]), node[0]))
    turn = loop[loop.index(first):] + loop[:loop.index(first)]
    t = taken[first][0]

    def targets(node: Node) -> str:
        return " or ".join(dict.fromkeys(f"`{a.shown_target}`" for a in taken[node]))

    if all(kind == "done" for kind, _ in loop):
        steps = ", then ".join(f"`{s}` done -> {targets((k, s))}" for k, s in turn)
        return problem(ID, SEVERITY, t.span,
                       f"completion of `{first[1]}` loops forever: {steps} completes "
                       f"`{first[1]}` again",
                       "target a state outside the completed state, or guard the `done:` "
                       "transition so that it stops")
    steps = ", then ".join(f"`{s}` {k} -> {targets((k, s))}" for k, s in turn)
    return problem(ID, SEVERITY, t.span,
                   f"eventless transitions loop forever: {steps}, and so on",
                   "guard a transition of the loop so that it stops, or target a state "
                   "outside the loop")
