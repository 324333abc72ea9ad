"""What a transition does to the active configuration, computed once at build time.

The generated module keeps the run record in step with python-statemachine without asking the
library (which would cost time on every event): for every transition it carries the
transition's domain and the states it enters, computed here with the SCXML algorithm that
python-statemachine follows. At run time the new configuration is "the active states outside
the domain, plus the entered ones"; the same tables replay a stored history on restore.
"""

from __future__ import annotations

from dataclasses import dataclass

from statechart.model import Spec, Transition


@dataclass(frozen=True)
class Effect:
    """One transition as the generated code sees it (keyed by source, event, target)."""

    source: str
    event: str
    target: str
    domain: str | None  # active states under it are exited; None: every state is
    entered: tuple[str, ...]  # document order
    sets: tuple[str, ...]  # fields the transition sets (union over same-key alternatives)


def document_order(spec: Spec) -> dict[str, int]:
    return {name: i for i, name in enumerate(spec.states)}


def default_entry(spec: Spec, name: str) -> list[str]:
    """`name` and the descendants entered with it by default."""
    out, stack = [], [name]
    while stack:
        state = spec.states[stack.pop()]
        out.append(state.name)
        if state.kind == "compound" and state.initial:
            stack.append(state.initial)
        elif state.kind == "parallel":
            stack.extend(reversed(state.children))
    return out


def initial_configuration(spec: Spec) -> tuple[str, ...]:
    order = document_order(spec)
    return tuple(sorted(default_entry(spec, spec.initial), key=order.__getitem__))


def domain(spec: Spec, t: Transition) -> str | None:
    """SCXML's transition domain for an external transition: the nearest proper ancestor of
    the source that is a compound (not parallel) state and contains the target."""
    target_line = set(spec.ancestors(t.target))
    for anc in spec.ancestors(t.source):
        if spec.states[anc].kind == "compound" and anc in target_line:
            return anc
    return None


def entered(spec: Spec, t: Transition, dom: str | None) -> tuple[str, ...]:
    """SCXML's entry set: the path from the domain down to the target, the target's default
    descendants, and the default content of sibling regions of parallel states on the path."""
    path = [t.target]
    for anc in spec.ancestors(t.target):
        if anc == dom:
            break
        path.append(anc)
    out: set[str] = set(path)
    out.update(default_entry(spec, t.target))
    for anc in path[1:]:
        if spec.states[anc].kind == "parallel":
            for region in spec.states[anc].children:
                if region not in out:
                    out.update(default_entry(spec, region))
    order = document_order(spec)
    return tuple(sorted(out, key=order.__getitem__))


def effects(spec: Spec) -> list[Effect]:
    """One Effect per distinct (source, event, target), in document order."""
    by_key: dict[tuple[str, str, str], Effect] = {}
    for t in spec.transitions():
        key = (t.source, t.event, t.target)
        old = by_key.get(key)
        if old is not None:
            sets = old.sets + tuple(f for f in t.sets if f not in old.sets)
            by_key[key] = Effect(*key, old.domain, old.entered, sets)
            continue
        dom = domain(spec, t)
        by_key[key] = Effect(*key, dom, entered(spec, t, dom), tuple(dict.fromkeys(t.sets)))
    return list(by_key.values())


def is_flat(spec: Spec) -> bool:
    return all(s.parent is None for s in spec.states.values())
