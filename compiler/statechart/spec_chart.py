"""A spec's chart: the statechart semantics, as the compiler asks it about a `Spec` (one
`Chart` cached per spec, and event-descriptor matching).

The definitions live in one place, `statechart_runtime.chart.chart` (default entry, entry and
exit sets, the transition domain, selection and priority, completion), which generated modules
also run on; this module builds its `Chart` from a checked model and answers in the model's
terms. The graph rules, code generation, the renderers, `--highlight` and `diff` ask here.
`docs/semantics.md` states the semantics in words.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import replace
from itertools import pairwise

from statechart.model import Spec, State, Transition
from statechart_runtime.chart.chart import Chart, StateRow

_charts: dict[int, Chart] = {}


def rows(spec: Spec) -> list[StateRow]:
    """The state tree as the runtime's table rows, in document order. A compound state whose
    `initial` is missing or not one of its children (reported by missing-initial or
    unknown-state) enters its first child, so one mistake does not cascade."""
    out: list[StateRow] = []
    for s in spec.states.values():
        children = [c for c in s.children if c in spec.states]
        initial = None
        if s.kind == "compound" and children:
            initial = s.initial if s.initial in children else children[0]
        out.append((s.name, s.parent, s.kind, initial))
    return out


def chart(spec: Spec) -> Chart:
    """The spec's `Chart`, built once per model."""
    key = id(spec)
    found = _charts.get(key)
    if found is None:
        top = spec.initial if spec.initial in spec.states else next(iter(spec.states), "")
        transitions = spec.transitions()
        found = _charts[key] = Chart(
            rows(spec), top,
            completes={t.source for t in transitions if t.trigger == "done"},
            remembers={t.target for t in transitions if t.history and t.target in spec.states},
            history_defaults=history_defaults(spec))
        weakref.finalize(spec, _charts.pop, key, None)
    return found


def matches(descriptor: str, event: str) -> bool:
    """Whether an `on:` key takes `event` (SCXML event descriptors): `*` takes every event,
    any other key the event itself and the events it is a token prefix of (`error` takes
    `error.tool.timeout`, not `errors`)."""
    return descriptor in ("*", event) or event.startswith(descriptor + ".")


def per_event(spec: Spec) -> Spec:
    """`spec` with each state's `on:` alternatives listed under every event they take, in the
    order a run tries them (the state's `on:` keys in document order, each key's alternatives
    in order: SCXML), `order` being the position in that list: the runtime's tables (and the
    generated machine) know events, not descriptors. The spec itself when no key takes an
    event other than its own name."""
    internal = {t.event for t in spec.transitions() if t.internal}
    sent = [e for e in spec.events() if e not in internal]
    # key -> the events it takes besides itself (its proper token prefixes lead to them)
    family: dict[str, list[str]] = {}
    for event in sent:
        tokens = event.split(".")
        for end in range(1, len(tokens)):
            family.setdefault(".".join(tokens[:end]), []).append(event)
    keys = {t.event for t in spec.transitions() if t.trigger == "event"}
    if "*" not in keys and keys.isdisjoint(family):
        return spec
    states = {}
    for name, state in spec.states.items():
        lists: dict[str, list[Transition]] = {}
        for t in state.transitions:
            if t.trigger == "event":
                for event in sent if t.event == "*" else [t.event, *family.get(t.event, ())]:
                    lists.setdefault(event, []).append(t)
        listed = [replace(t, event=event, order=i) for event in sent
                  for i, t in enumerate(lists.get(event, ()))]
        states[name] = replace(state, transitions=tuple(
            listed + [t for t in state.transitions if t.trigger != "event"]))
    return replace(spec, states=states)


def history_defaults(spec: Spec) -> dict[tuple[str, str], str]:
    """(state, history kind) -> its `history_default:` state, for those inside the state
    (`invalid-history-default` reports the others; they are ignored here)."""
    return {(s.name, kind): default for s in spec.states.values()
            for kind, default, _ in s.history_defaults
            if default in spec.states and default != s.name and s.name in spec.ancestors(default)
            and (kind == "deep" or spec.states[default].parent == s.name)}


def known(spec: Spec, t: Transition) -> bool:
    """Whether every target of `t` is a state (unknown-state reports the others)."""
    return all(x in spec.states for x in t.all_targets)


def entry_set(spec: Spec, t: Transition) -> tuple[str, ...]:
    """The states transition `t` may enter (none when its target is unknown). A history
    transition may enter any state under its target that was active before: all of them."""
    if not known(spec, t) or t.targetless:
        return ()
    c = chart(spec)
    entered = effect(spec, t)[1]
    if t.history:
        return c.sort([*entered, *spec.subtree(t.target)])
    return entered


def effect(spec: Spec, t: Transition) -> tuple[str | None, tuple[str, ...]]:
    """(domain, entry set) of `t` (a known target): an internal transition's domain is its
    source; a history one's entry set here is its target's default entry."""
    c = chart(spec)
    if t.kind == "internal":
        return c.internal_effect(t.source, t.target)
    return c.effect(t.source, t.move_target)  # several targets: separated by spaces


def sure_entry_set(spec: Spec, t: Transition) -> tuple[str, ...]:
    """The states transition `t` enters whatever the run remembers (`entry_set` is what it
    may enter). For a history transition: not the target's content (it depends on where the
    target was left), nor the target itself when its source is inside it (the domain is then
    the target: it stays active, and is not entered)."""
    if not t.history or t.target not in spec.states:
        return entry_set(spec, t)
    c = chart(spec)
    target = t.target
    return tuple(s for s in c.history_effect(t.source, target, t.history, None)[1]
                 if not c.is_descendant(s, target))


def initial_configuration(spec: Spec) -> tuple[str, ...]:
    return chart(spec).initial_configuration()


def default_entry(spec: Spec, name: str) -> tuple[str, ...]:
    return chart(spec).default_entry(name)


def configuration_of(spec: Spec, name: str) -> tuple[str, ...]:
    """The configuration of a run that has just entered `name` (see `Chart`)."""
    return chart(spec).configuration_of(name)


def is_flat(spec: Spec) -> bool:
    """No nesting: a run's configuration is one state, and its record has no
    `configuration`."""
    return all(s.parent is None for s in spec.states.values())


def ends_run(state: State) -> bool:
    """A top-level final state: entering it ends the run."""
    return state.is_final and state.parent is None


def ending_states(spec: Spec) -> list[str]:
    """The states where a run can end: top-level final states, and the final states of the
    regions of a top-level parallel state whose every region has one (the run ends when each
    region rests in one)."""
    out = [s.name for s in spec.top_level if s.is_final]
    for regions in ending_parallels(spec).values():
        out.extend(f for finals in regions.values() for f in finals)
    return out


def ending_parallels(spec: Spec) -> dict[str, dict[str, list[str]]]:
    """Top-level parallel states that end the run when every region is done (those without
    a `done:` transition): parallel state -> region -> the region's final children (every
    region has at least one)."""
    out: dict[str, dict[str, list[str]]] = {}
    for top in spec.top_level:
        if top.kind != "parallel" or top.name in chart(spec).completes:
            continue
        regions = {r: [c for c in spec.states[r].children
                       if c in spec.states and spec.states[c].is_final]
                   for r in top.children if r in spec.states}
        if regions and all(regions.values()):
            out[top.name] = regions
    return out


def initial_leaf(spec: Spec, name: str) -> str:
    """The first atomic state (document order) entered when `name` is entered by default:
    where a diagram draws an arrow that targets a compound or parallel state."""
    c = chart(spec)
    for entered in c.default_entry(name):
        if not c.children[entered]:
            return entered
    return name


def in_parallel(spec: Spec, name: str) -> bool:
    return any(spec.states[a].kind == "parallel" for a in spec.ancestors(name))


def handling(spec: Spec, state: str, event: str) -> list[Transition]:
    """The alternatives of the nearest state (the state, then its ancestors) with a key that
    takes `event` (its own name or a descriptor of it), in the order they are tried: what the
    event does while `state` is active, unless every one of them is guarded and refuses (then
    the search goes on up; `Chart.select` is the whole rule)."""
    for name in (state, *spec.ancestors(state)):
        own = takers(spec.states[name], event)
        if own:
            return own
    return []


def takers(state: State, event: str) -> list[Transition]:
    """`state`'s own alternatives that take `event`, in the order a run tries them: `on:` keys
    by descriptor (`matches`), the run's own events (`done`, timers, `always`) by name."""
    return [t for t in state.transitions if t.event == event
            or (t.trigger == "event" and matches(t.event, event))]


def co_active(spec: Spec, names: Iterable[str]) -> list[str]:
    """Every state that can be active at the same time as one of `names`: the states, their
    ancestors and descendants, and everything inside a parallel ancestor (its other regions
    run alongside)."""
    picked: dict[str, None] = {}
    names = list(names)
    for name in names:
        for sub in spec.subtree(name):
            picked.setdefault(sub, None)
        for ancestor in spec.ancestors(name):
            picked.setdefault(ancestor, None)
    for other in alongside(spec, names):
        picked.setdefault(other, None)
    return list(picked)


def alongside(spec: Spec, names: Iterable[str]) -> list[str]:
    """The states in the other regions of every parallel ancestor of `names`: while one of
    `names` is active, any of them may be active too."""
    picked: dict[str, None] = {}
    for name in names:
        line = [name, *spec.ancestors(name)]
        for child, ancestor in pairwise(line):
            if spec.states[ancestor].kind != "parallel":
                continue
            for region in spec.states[ancestor].children:
                if region != child and region in spec.states:
                    for sub in spec.subtree(region):
                        picked.setdefault(sub, None)
    return list(picked)


def can_fire_while(spec: Spec, names: Iterable[str]) -> list[Transition]:
    """The transitions that can fire while one of `names` is active: those declared on any
    state that can be active alongside (see `co_active`)."""
    return [t for s in co_active(spec, names) for t in spec.states[s].transitions]


def exits(spec: Spec, t: Transition, name: str) -> bool:
    """Whether taking `t` exits `name` when `name` is active (it lies under t's domain)."""
    if not known(spec, t) or t.targetless:
        return False
    return chart(spec).is_descendant(name, effect(spec, t)[0])  # domain, computed once
