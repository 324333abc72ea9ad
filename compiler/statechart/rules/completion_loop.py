"""Completion transitions that raise each other forever.

What: taking a state's `done:` transition enters a final state that completes that state
again, directly or through other states' `done:` transitions, and nothing can stop it: each
transition of the loop is its state's first `done:` alternative and has no guard (nor an
`in:` state other than its own state or an ancestor), and enters
the final state whatever the run remembers.

Why: the run takes completion events by itself, as part of the event that started them. A
loop of them never gives control back: the `send` does not return and its history grows
without end.

Example:

    states:
      job:
        initial: working
        done: finished          # completion-loop: entering `finished` completes `job` again
        states:
          working: {on: {finish: finished}}
          finished: {final: true}

Fix: target a state outside the loop (`done:` usually leaves the completed state), or guard
the transition so that it stops.
"""

from statechart import semantics
from statechart.diagnostics import Severity
from statechart.model import Transition
from statechart.rules._base import Check, Diagnostic, Graph, Spec, problem

ID = "completion-loop"
SEVERITY: Severity = "error"
PHASE = "graph"


def _always(spec: Spec) -> dict[str, Transition]:
    """State -> the `done:` transition its completion always takes (first and unguarded)."""
    out: dict[str, Transition] = {}
    for state in spec.states.values():
        done = [t for t in state.transitions if t.trigger == "done"]
        if done and spec.always_enabled(done[0]) and done[0].target in spec.states:
            out[state.name] = done[0]
    return out


def _completes(spec: Spec, t: Transition, completing: set[str]) -> list[str]:
    """The states with `done:` whose completion taking `t` surely raises (a final state it
    surely enters completes its parent)."""
    out: list[str] = []
    for name in semantics.sure_entry_set(spec, t):
        parent = spec.states[name].parent
        if spec.states[name].is_final and parent in completing and parent not in out:
            out.append(parent)
    return out


def check(spec: Spec, graph: Graph) -> Check:
    always = _always(spec)
    completing = {t.source for t in spec.transitions() if t.trigger == "done"}
    edges = {name: _completes(spec, t, completing) for name, t in always.items()}
    reported: set[str] = set()
    for start in always:
        if start in reported:
            continue
        # A path from `start` along transitions that are always taken; a loop when it comes
        # back to a state already on it.
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
                    yield _problem(spec, always, loop)
                continue
            if nxt in always and nxt not in reported:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(iter(edges.get(nxt, ())))


def _problem(spec: Spec, always: dict[str, Transition], loop: list[str]) -> Diagnostic:
    first = min(loop, key=list(spec.states).index)
    turn = loop[loop.index(first):] + loop[:loop.index(first)]
    steps = ", then ".join(f"`{s}` done -> `{always[s].target}`" for s in turn)
    t = always[first]
    return problem(ID, SEVERITY, t.span,
                   f"completion of `{first}` loops forever: {steps} completes `{first}` "
                   "again",
                   "target a state outside the completed state, or guard the `done:` "
                   "transition so that it stops")
