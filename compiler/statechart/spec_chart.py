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
from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import pairwise
from typing import TypeVar

from statechart.model import Spec, State, Transition
from statechart.model_index import index
from statechart_runtime.chart import events
from statechart_runtime.chart.chart import Chart, StateRow

T = TypeVar("T")

_charts: dict[int, Chart] = {}
# Per model: `may_fire` per state; the sent events and descriptors; the limited states.
_fired: dict[int, dict[str, tuple[Transition, ...]]] = {}
_sent: dict[int, dict[str, tuple[list[str], dict[str, list[str]]]]] = {}
_limits: dict[int, dict[str, frozenset[str]]] = {}
_taking: dict[int, dict[str, dict[str, list[Transition]]]] = {}  # state -> event -> takers
_known: dict[int, dict[str, bool]] = {}  # the events `_taking` has


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


def _per_spec(spec: Spec, store: dict[int, dict[str, T]]) -> dict[str, T]:
    """The cache of one model in `store` (dropped with the model)."""
    key = id(spec)
    found = store.get(key)
    if found is None:
        found = store[key] = {}
        weakref.finalize(spec, store.pop, key, None)
    return found


def chart(spec: Spec) -> Chart:
    """The spec's `Chart`, built once per model."""
    key = id(spec)
    found = _charts.get(key)
    if found is None:
        top = spec.initial if spec.initial in spec.states else next(iter(spec.states), "")
        indexed = index(spec)
        found = _charts[key] = Chart(
            rows(spec), top,
            completes={t.source for t in indexed.by_trigger["done"]},
            remembers={t.target for t in indexed.history if t.target in spec.states},
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
    sent, family = _sent_events(spec)
    keys = {t.event for t in spec.transitions() if t.trigger == "event"}
    if "*" not in keys and keys.isdisjoint(family):
        return spec
    states = {}
    for name, state in spec.states.items():
        lists: dict[str, list[Transition]] = {}
        for t in state.transitions:
            if t.trigger == "event":
                for event in taken_events(spec, t):
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
            if default in spec.states and default != s.name and s.name in spec.ancestors(default)}


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


def takers(state: State, event: str) -> list[Transition]:
    """`state`'s own alternatives that take `event`, in the order a run tries them (as
    `per_event` lists them for the runtime's tables): `on:` keys by descriptor (`matches`)
    for an event a caller sends; the run's own events (`done`, timers, `always`) by name
    only, no `on:` key takes them."""
    sent = events.parse(event) is None and event != events.ALWAYS
    return [t for t in state.transitions if t.event == event
            or (sent and t.trigger == "event" and matches(t.event, event))]


def _takers(spec: Spec, name: str, event: str) -> list[Transition]:
    """`takers(spec.states[name], event)`, from a table made once per model (every event
    the spec names, and each `on:` key as written)."""
    cache = _per_spec(spec, _taking)
    known = _per_spec(spec, _known)
    if not known:
        for state in spec.states.values():
            table = cache[state.name] = {}
            for t in state.transitions:
                for e in dict.fromkeys((*taken_events(spec, t), t.event)):
                    table.setdefault(e, []).append(t)
                    known[e] = True
        known[""] = False  # made, even for a spec without transitions
    if not known.get(event):
        return takers(spec.states[name], event)
    return cache[name].get(event, [])


def surely_enabled(spec: Spec, t: Transition, active: Iterable[str]) -> bool:
    """Whether nothing can keep alternative `t` from being taken when its event comes while
    the states `active` are (and maybe others): no guard, every `in:` state among `active`,
    and no state with a `limit:` that it may enter (the limit refuses it once reached)."""
    if t.guard is not None or (t.in_states and not set(t.in_states) <= set(active)):
        return False
    limited = _limited(spec)
    return not limited or limited.isdisjoint(entry_set(spec, t))


def may_take(spec: Spec, state: str, event: str) -> list[Transition]:
    """The alternatives `event` may take while `state` is the deepest active state of its
    line (an atomic state; its ancestors are active too), in the order they are tried,
    whatever the guards answer.

    This is the runtime's selection, `Chart.first_enabled` (what `Chart.select` takes for
    each active atomic state: the state's alternatives for the event in document order, then
    its parent's, and so on up), asked once for each way the unknown conditions can answer:
    an alternative that is `surely_enabled` is taken when it is reached, and hides every one
    after it, on its state and above (a descendant's transition shadows its ancestor's); one
    with a guard, an `in:` state off the line or a limit may be taken or passed over, so both
    branches stay possible. Approximation: the other active atomic states (parallel regions)
    are not looked at; their transitions can only take this one's place (conflicts), never
    add one here."""
    line = [state, *spec.ancestors(state)]
    return _selected(spec, state, line, event,
                     [t for name in line for t in _takers(spec, name, event)])


def _selected(spec: Spec, state: str, line: list[str], event: str,
              found: list[Transition]) -> list[Transition]:
    """`may_take`, given `found`: the alternatives that take `event` on `line` (`state` and
    its ancestors), in the order they are tried."""
    if len(found) < 2:
        return found  # the one alternative is reached whatever the conditions answer
    own: dict[str, list[Transition]] = {}  # each state's, in order
    for t in found:
        own.setdefault(t.source, []).append(t)
    if len(own) == 1:
        # All declared on one state (most events of most specs): no shadowing between levels
        # to ask the chart about; the branches take them in document order, up to the first
        # that is surely taken. The same answer as the loop below, without a chart walk and a
        # generator per branch (40,000 selections at 10,000 states).
        prefix: list[Transition] = []
        for t in found:
            prefix.append(t)
            if surely_enabled(spec, t, line):
                break
        return prefix
    c = chart(spec)
    out: list[Transition] = []
    chosen: dict[str, Transition] = {}
    refusing = 0  # this branch: the first `refusing` uncertain alternatives say no
    seen = 0  # uncertain alternatives reached so far in this branch

    def enabled(name: str) -> Iterator[str | tuple[str, str]]:
        nonlocal seen
        for t in own.get(name, ()):
            if not surely_enabled(spec, t, line):
                seen += 1
                if seen <= refusing:
                    continue
            chosen[name] = t
            yield t.move_target if t.move_kind is None else (t.move_target, t.move_kind)

    while True:
        seen = 0
        move = c.first_enabled(state, enabled)
        if move is None:
            return out
        taken = chosen[move[0]]
        out.append(taken)
        if surely_enabled(spec, taken, line):
            return out
        refusing += 1


def may_fire(spec: Spec, leaf: str) -> tuple[Transition, ...]:
    """Every alternative some event (sent, raised or a timer's) may take while atomic `leaf`
    is active (`may_take`), in the order of its line, the leaf's own first; none once the
    run has ended (a top-level final state). Computed once per state and model."""
    cache = _per_spec(spec, _fired)
    found = cache.get(leaf)
    if found is None:
        line = [leaf, *spec.ancestors(leaf)]
        picked: dict[int, Transition] = {}
        direct = _line_selection(spec, line)
        if direct is not None:
            found = cache[leaf] = () if chart(spec).ended(line) else direct
            return found
        if not chart(spec).ended(line):
            # Each event's alternatives along the line, in the order they are tried (what
            # `may_take` starts from), made in one pass: an event only one alternative takes
            # needs no selection, and most events of most specs are such.
            alternatives_of: dict[str, list[Transition]] = {}
            sent, family = _sent_events(spec)  # `taken_events`, inlined: once per alternative
            for name in line:
                for t in spec.states[name].transitions:
                    if t.trigger != "event":
                        alternatives_of.setdefault(t.event, []).append(t)
                        continue
                    for e in (sent if t.event == "*" else (t.event, *family.get(t.event, ()))):
                        alternatives_of.setdefault(e, []).append(t)
            for event, alternatives in alternatives_of.items():
                if len(alternatives) == 1:
                    picked.setdefault(id(alternatives[0]), alternatives[0])
                    continue
                for t in _selected(spec, leaf, line, event, alternatives):
                    picked.setdefault(id(t), t)
        if len(line) == 1:  # a top-level state: every alternative is its own
            found = cache[leaf] = tuple(picked.values())
        else:
            depth = {name: i for i, name in enumerate(line)}
            found = cache[leaf] = tuple(sorted(picked.values(), key=lambda t: depth[t.source]))
    return found


def _line_selection(spec: Spec, line: list[str]) -> tuple[Transition, ...] | None:
    """`may_fire` of the leaf of `line` (it and its ancestors) in one walk, when no key on
    the line is a descriptor (`*`, or the prefix of a sent event): then each event's
    alternatives are tried in the order of the line (the leaf's first, each state's in
    document order) up to the first that is surely taken, which is what the chart's
    selection gives (`_selected`); the result in `may_fire`'s order (by state along the
    line, then by the event's first place on the line). None otherwise: `may_fire` then
    selects event by event."""
    family = _sent_events(spec)[1]
    place: dict[str, int] = {}  # event -> its first place on the line
    closed: set[str] = set()  # events whose alternatives after this are never tried
    last: dict[str, Transition] = {}  # event -> its last alternative taken, if unguarded
    out: list[Transition] = []
    for name in line:
        level: list[tuple[int, int, Transition]] = []
        for i, t in enumerate(spec.states[name].transitions):
            event = t.event
            if event == "*" or event in family:
                return None
            at = place.setdefault(event, len(place))
            if event in closed:
                continue
            before = last.get(event)
            if before is not None and surely_enabled(spec, before, line):
                closed.add(event)  # asked only when another alternative comes after it
                continue
            level.append((at, i, t))
            if t.guard is None:
                last[event] = t
            else:
                last.pop(event, None)
        level.sort(key=lambda entry: (entry[0], entry[1]))
        out.extend(t for _, _, t in level)
    return tuple(out)


def is_trap(spec: Spec, name: str) -> bool:
    """An atomic state with no way out: no transition may fire while it is active that
    leaves (a targetless one stays; one that a transition below it hides does not count)."""
    return spec.states[name].kind == "atomic" and all(
        t.targetless for t in may_fire(spec, name))


def taken_events(spec: Spec, t: Transition) -> tuple[str, ...]:
    """The events alternative `t` takes: its own; for an `on:` key, also the sent events it
    is a descriptor of (`error` takes `error.tool.timeout`, `*` every sent event)."""
    if t.trigger != "event":
        return (t.event,)
    sent, family = _sent_events(spec)
    if t.event == "*":
        return tuple(sent)
    return (t.event, *family.get(t.event, ()))


def _sent_events(spec: Spec) -> tuple[list[str], dict[str, list[str]]]:
    """The events callers send (every event name but the run's own), and for each key that
    is a proper token prefix of some of them, those events (SCXML event descriptors)."""
    cache = _per_spec(spec, _sent)
    if "" not in cache:
        cache[""] = _sent_and_family(spec)
    return cache[""]


def _sent_and_family(spec: Spec) -> tuple[list[str], dict[str, list[str]]]:
    raised = index(spec).raised  # the events the run raises itself
    sent = [e for e in spec.events() if e not in raised]
    family: dict[str, list[str]] = {}
    for event in sent:
        tokens = event.split(".")
        for end in range(1, len(tokens)):
            family.setdefault(".".join(tokens[:end]), []).append(event)
    return sent, family


def _limited(spec: Spec) -> frozenset[str]:
    """The states with a `limit:`."""
    cache = _per_spec(spec, _limits)
    if "" not in cache:
        cache[""] = frozenset(s.name for s in spec.states.values() if s.limit)
    return cache[""]


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


def exits(spec: Spec, t: Transition, name: str) -> bool:
    """Whether taking `t` exits `name` when `name` is active (it lies under t's domain)."""
    if not known(spec, t) or t.targetless:
        return False
    return chart(spec).is_descendant(name, effect(spec, t)[0])  # domain, computed once
