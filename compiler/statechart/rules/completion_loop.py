"""Completion or eventless transitions that take each other forever.

What: taking a state's `done:` transition enters a final state that completes that state
again, directly or through other states' `done:` transitions; or a state's eventless
transition (`always:`) leads, directly or through other eventless or `done:` transitions,
back to a state whose eventless transition is taken again; and nothing can stop it: each
transition of the loop is its state's first alternative and has no guard (nor an `in:`
state other than its own state or an ancestor), and enters its states whatever the run
remembers. An eventless transition counts only when no other one can be taken before it
(none on a state inside its own, nor in another region alongside) and it enters no state
with a `limit:` (the limit stops it). A targetless or internal eventless transition leaves
its state active: unguarded, it loops on its own.

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

from statechart import semantics
from statechart.diagnostics import Severity
from statechart.model import Transition
from statechart.rules._base import Check, Diagnostic, Graph, Spec, problem

ID = "completion-loop"
SEVERITY: Severity = "error"
PHASE = "graph"

# A node of the loop graph: ("done", STATE) for a state's completion, ("always", STATE) for
# its eventless transitions.
Node = tuple[str, str]


def _surely_taken(spec: Spec) -> dict[Node, Transition]:
    """Node -> the transition it surely takes: a state's first `done:` alternative when
    nothing can stop it; a state's first eventless alternative when nothing can stop it and
    nothing else can be taken before it (see the module docstring)."""
    out: dict[Node, Transition] = {}
    eventless = {t.source for t in spec.transitions() if t.trigger == "always"}
    for state in spec.states.values():
        for trigger in ("done", "always"):
            first = next((t for t in state.transitions if t.trigger == trigger), None)
            if first is None or not spec.always_enabled(first) or \
                    first.target not in spec.states:
                continue
            if trigger == "always" and (
                    any(s in eventless for s in spec.subtree(state.name)[1:])
                    or any(s in eventless for s in semantics.alongside(spec, [state.name]))
                    or any(spec.states[s].limit for s in semantics.sure_entry_set(spec, first))):
                continue
            out[(trigger, state.name)] = first
    return out


def _next(spec: Spec, t: Transition, taken: dict[Node, Transition],
          completing: set[str]) -> list[Node]:
    """The nodes whose transition surely comes after `t`: the eventless one of a state it
    leaves active, and the completions it surely raises (a final state it surely enters
    completes its parent)."""
    out: list[Node] = []
    after = list(semantics.sure_entry_set(spec, t))
    if t.kind != "external":  # targetless or internal: the source stays active
        after.append(t.source)
    for name in after:
        if ("always", name) in taken and ("always", name) not in out:
            out.append(("always", name))
    for name in semantics.sure_entry_set(spec, t):
        parent = spec.states[name].parent
        if spec.states[name].is_final and parent in completing and ("done", parent) not in out:
            out.append(("done", parent))
    return out


def check(spec: Spec, graph: Graph) -> Check:
    taken = _surely_taken(spec)
    completing = {t.source for t in spec.transitions() if t.trigger == "done"}
    edges = {node: _next(spec, t, taken, completing) for node, t in taken.items()}
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


def _problem(spec: Spec, taken: dict[Node, Transition], loop: list[Node]) -> Diagnostic:
    order = list(spec.states)
    first = min(loop, key=lambda node: (order.index(node[1]), node[0]))
    turn = loop[loop.index(first):] + loop[:loop.index(first)]
    t = taken[first]
    if all(kind == "done" for kind, _ in loop):
        steps = ", then ".join(f"`{s}` done -> `{taken[(k, s)].target}`" for k, s in turn)
        return problem(ID, SEVERITY, t.span,
                       f"completion of `{first[1]}` loops forever: {steps} completes "
                       f"`{first[1]}` again",
                       "target a state outside the completed state, or guard the `done:` "
                       "transition so that it stops")
    steps = ", then ".join(f"`{s}` {k} -> `{taken[(k, s)].shown_target}`" for k, s in turn)
    return problem(ID, SEVERITY, t.span,
                   f"eventless transitions loop forever: {steps}, and so on",
                   "guard a transition of the loop so that it stops, or target a state "
                   "outside the loop")
