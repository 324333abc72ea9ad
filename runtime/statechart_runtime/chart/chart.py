"""Statechart semantics, defined once: the compiler and generated modules both use this module.

The semantics is SCXML's (W3C SCXML 1.0, appendix D) for external transitions, which is also
XState's with `reenter: true`. `docs/semantics.md` states it in words with examples. In short:

- *Document order* is the order states are written in, parents before children.
- *Default entry* of a state: the state, then for a compound state its `initial` child's
  default entry, for a parallel state the default entry of every region.
- A transition's *domain* is the nearest proper ancestor of its source that is a compound
  state and contains the target; `None` means the root (every state is under it).
- Taking a transition *exits* every active state under its domain (children first) and
  *enters* the states on the path from the domain down to the target, the target's default
  entry, and the default entry of every region of a parallel state on that path that the
  path does not go through (entry in document order).
- *Selection*: for each active atomic state in document order, the first transition for the
  event whose guard passes, looking at the state and then its ancestors (a descendant's
  transition beats an ancestor's), guarded alternatives of one state in document order. Two
  selected transitions *conflict* when their exit sets intersect: the one whose source is a
  descendant of the other's wins, otherwise the one selected first (document order).
- A compound state is *done* when its active child is final; a parallel state when every
  region is done. Entering a final state raises `done.state.P` for its parent P, and for P's
  parent G too when G is parallel and now done (SCXML enterStates); the run takes the raised
  events one microstep each, in that order, before the next event (`done:` transitions).
- A *multi-target* transition (`target: [a2, b2]`, states of different regions of one
  parallel state) has as domain the nearest compound ancestor of its source that contains
  every target, and enters the path to each target (a region one of them goes through is
  not entered by default).
- A *targetless* transition exits and enters nothing (its exit set is empty, so it conflicts
  with no other transition). An *internal* transition (compound source, target a proper
  descendant of it) has the source as its domain: the source stays active, only what is
  active inside it is exited (SCXML `type="internal"`, XState's `reenter: false`).
- A *history* transition (`history: shallow|deep`) to compound or parallel P enters P where it
  was when P was last exited: deep, every state that was active under P; shallow, the children
  of P that were active, each by default entry. Never exited yet: the history's default (a
  state inside P the spec names, SCXML's history default transition), else P's default
  entry. Its domain is that of a transition to a child of P (SCXML's history pseudo-state).
- The run *ends* when a top-level final state is active, or when a top-level parallel state
  without a `done:` transition is done.

Everything here is iterative and works on plain names, so it needs nothing but the standard
library: a generated module builds a `Chart` from its tables at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

Kind = Literal["atomic", "compound", "parallel", "final"]
# (name, parent or None, kind, initial child or None), in document order.
StateRow = tuple[str, str | None, str, str | None]
# A transition as the algorithms see it: (source, target), or (source, target, KIND) with KIND
# a history kind (`shallow`, `deep`), `internal`, `targetless` (its target is its source) or
# `multi` (its target is several states, separated by spaces).
Move = tuple[str, str] | tuple[str, str, str]
# The move kinds that are not history kinds. A multi-target transition's target is its
# targets separated by spaces (SCXML's `target="a2 b2"`); a step records the first.
INTERNAL, TARGETLESS, MULTI = "internal", "targetless", "multi"



def step_target(move: Move) -> str:
    """The target a step of the run record names for `move`: a multi-target one's first
    target (the spec has the others), else the move's."""
    return move[1].split(" ", 1)[0] if move[2:] == (MULTI,) else move[1]


# Compound/parallel state -> the states active under it when it was last exited.
Remembered = dict[str, tuple[str, ...]]
_MEMO_LIMIT = 4096


class Chart:
    """The state tree of one spec and the SCXML algorithms over it."""

    __slots__ = ("_effects", "_internal", "_next", "_steps", "children", "completes",
                 "history_defaults", "initial", "kind", "names", "order", "parent",
                 "remembers", "top", "top_initial")

    def __init__(self, rows: Sequence[StateRow], top_initial: str, *,
                 completes: Iterable[str] = (), remembers: Iterable[str] = (),
                 history_defaults: Mapping[tuple[str, str], str] | None = None) -> None:
        """`completes`: the states with `done:` transitions; `remembers`: the targets of
        history transitions (whose last configuration a run keeps); `history_defaults`:
        (target, history kind) -> the state a history transition enters while the target
        remembers nothing (SCXML's history default transition; else its default entry)."""
        self.names: tuple[str, ...] = tuple(row[0] for row in rows)
        self.order: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.parent: dict[str, str | None] = {row[0]: row[1] for row in rows}
        self.kind: dict[str, str] = {row[0]: row[2] for row in rows}
        self.initial: dict[str, str] = {row[0]: row[3] for row in rows if row[3] is not None}
        self.children: dict[str, list[str]] = {name: [] for name in self.names}
        self.top: list[str] = []
        for name, parent, _, _ in rows:
            (self.top if parent is None else self.children[parent]).append(name)
        self.top_initial = top_initial
        self.completes = frozenset(completes)
        self.remembers = frozenset(remembers)
        self.history_defaults = dict(history_defaults or {})
        self._effects: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {}
        self._internal: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {}
        self._next: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]],
                         tuple[str, ...]] = {}
        # (configuration, moves) -> (next configuration, entered): `step`'s memo, for a
        # chart whose steps depend on nothing else (it remembers no history).
        self._steps: dict[tuple[tuple[str, ...], tuple[Move, ...]],
                          tuple[tuple[str, ...], tuple[str, ...]]] = {}

    # -- the tree ---------------------------------------------------------------------------

    def ancestors(self, name: str) -> list[str]:
        """Proper ancestors, parent first."""
        out: list[str] = []
        parent = self.parent[name]
        while parent is not None:
            out.append(parent)
            parent = self.parent[parent]
        return out

    def is_descendant(self, name: str, ancestor: str | None) -> bool:
        """Whether `name` is strictly inside `ancestor` (everything is inside the root, None)."""
        if ancestor is None:
            return True
        parent = self.parent[name]
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self.parent[parent]
        return False

    def sort(self, names: Iterable[str]) -> tuple[str, ...]:
        """`names` in document order, each once."""
        return tuple(sorted(set(names), key=self.order.__getitem__))

    def default_initial(self, name: str) -> str | None:
        """The child a compound state enters by default (its first child when `initial` is
        missing, as `check` assumes while it reports the mistake)."""
        children = self.children[name]
        return self.initial.get(name, children[0] if children else None)

    # -- entry and exit ---------------------------------------------------------------------

    def default_entry(self, name: str) -> tuple[str, ...]:
        """`name` and the descendants entered with it by default, in document order."""
        out: list[str] = []
        stack = [name]
        while stack:
            current = stack.pop()
            out.append(current)
            kind = self.kind[current]
            if kind == "compound":
                child = self.default_initial(current)
                if child is not None:
                    stack.append(child)
            elif kind == "parallel":
                stack.extend(self.children[current])
        return self.sort(out)

    def initial_configuration(self) -> tuple[str, ...]:
        return self.default_entry(self.top_initial)

    def domain(self, source: str, target: str) -> str | None:
        """The transition domain of an external transition from `source` to `target` (a
        multi-target one's: to every state of `target`, names separated by spaces)."""
        targets = self._targets(target)
        for ancestor in self.ancestors(source):
            if self.kind[ancestor] == "compound" and all(
                    self.is_descendant(t, ancestor) for t in targets):
                return ancestor
        return None

    def _targets(self, target: str) -> tuple[str, ...] | list[str]:
        """The states `target` names: itself when the chart has a state of that name (a spec
        with a name that has a space in it is refused by `invalid-name`, but its analysis
        must not stumble on it), else its names separated by spaces (a multi-target one)."""
        return target.split(" ") if " " in target and target not in self.parent else (target,)

    def entry_set(self, source: str, target: str) -> tuple[str, ...]:
        """The states a transition from `source` to `target` enters, in document order."""
        return self.effect(source, target)[1]

    def effect(self, source: str, target: str) -> tuple[str | None, tuple[str, ...]]:
        """(domain, entry set) of a transition; computed once per (source, target)."""
        key = (source, target)
        cached = self._effects.get(key)
        if cached is not None:
            return cached
        domain = self.domain(source, target)
        paths = []
        for one in self._targets(target):
            path = [one]
            for ancestor in self.ancestors(one):
                if ancestor == domain:
                    break
                path.append(ancestor)
            paths.append(path)
        result = (domain, self._enter_path(*paths))
        self._effects[key] = result
        return result

    def configuration_of(self, name: str) -> tuple[str, ...]:
        """The configuration a run has right after `name` is entered from outside: its
        ancestors, its default entry, and the default entry of the other regions of every
        parallel ancestor (what a transition from the root to `name` enters)."""
        return self._enter_path([name, *self.ancestors(name)])

    def _enter_path(self, *paths: list[str]) -> tuple[str, ...]:
        """What entering `path` (a target, then its ancestors up to a domain) enters: the
        path, the target's default entry, and the default entry of every region of a parallel
        state on the path that the path does not go through (SCXML computeEntrySet). Several
        paths: a multi-target transition's, one per target (a region one of them goes
        through is not entered by default)."""
        entered: set[str] = set()
        for path in paths:
            entered.update(path)
        for path in paths:
            entered.update(self.default_entry(path[0]))
        for path in paths:
            for ancestor in path[1:]:
                if self.kind[ancestor] == "parallel":
                    for region in self.children[ancestor]:
                        if region not in entered:
                            entered.update(self.default_entry(region))
        return self.sort(entered)

    def exit_set(self, configuration: Iterable[str], source: str,
                 target: str) -> tuple[str, ...]:
        """The active states a transition exits, in document order (exits run in reverse)."""
        domain = self.effect(source, target)[0]
        return self.sort(s for s in configuration if self.is_descendant(s, domain))

    # -- history ----------------------------------------------------------------------------

    def history_effect(self, source: str, target: str, kind: str,
                       remembered: Sequence[str] | None) -> tuple[str | None, tuple[str, ...]]:
        """(domain, entry set) of a history transition to `target` given what `target`
        remembers (None: it was never exited, so its default entry)."""
        domain = None
        for ancestor in self.ancestors(source):
            if self.kind[ancestor] == "compound" and (
                    ancestor == target or self.is_descendant(target, ancestor)):
                domain = ancestor
                break
        content: set[str] = set()
        default = self.history_defaults.get((target, kind)) if remembered is None else None
        if default is not None:
            # The history's default transition: the path from the target down to it, and its
            # default entry (other regions of a parallel state on the way: below).
            content.update(self.default_entry(default))
            content.update(a for a in self.ancestors(default) if self.is_descendant(a, target))
        elif remembered is None:
            for child in self.default_entry(target)[1:]:
                content.add(child)
        elif kind == "deep":
            content.update(remembered)
        else:
            for child in remembered:
                if self.parent[child] == target:
                    content.update(self.default_entry(child))
        entered = set(content)
        if target != domain:  # from inside the target, the domain is the target itself
            entered.add(target)
            for ancestor in self.ancestors(target):
                if ancestor == domain:
                    break
                entered.add(ancestor)
        # A parallel state entered (or on the path) gets every region it has no state of.
        stack = [s for s in entered if self.kind[s] == "parallel"]
        while stack:
            parallel = stack.pop()
            for region in self.children[parallel]:
                if region not in entered:
                    added = self.default_entry(region)
                    entered.update(added)
                    stack.extend(a for a in added if self.kind[a] == "parallel")
        return domain, self.sort(entered)

    def remember(self, configuration: Sequence[str], exited: Iterable[str],
                 remembered: Remembered) -> Remembered:
        """`remembered` updated for the states of `remembers` that a step exits: each keeps the
        states that were active under it (SCXML records history on exit)."""
        out = remembered
        for name in exited:
            if name in self.remembers:
                if out is remembered:
                    out = dict(remembered)
                out[name] = tuple(s for s in configuration if self.is_descendant(s, name))
        return out

    def internal_effect(self, source: str, target: str) -> tuple[str | None, tuple[str, ...]]:
        """(domain, entry set) of an internal transition: the source is the domain when it is
        compound and contains the target (SCXML getTransitionDomain), else the transition is
        an external one (`check` refuses those: rule invalid-internal)."""
        found = self._internal.get((source, target))
        if found is not None:
            return found
        if self.kind[source] != "compound" or not self.is_descendant(target, source):
            return self.effect(source, target)
        path = [target]
        for ancestor in self.ancestors(target):
            if ancestor == source:
                break
            path.append(ancestor)
        found = self._internal[(source, target)] = (source, self._enter_path(path))
        return found

    def move(self, configuration: Sequence[str], move: Move,
             remembered: Remembered | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(exit set, entry set) of one transition, of any kind (history, internal,
        targetless)."""
        source, target = move[0], move[1]
        if len(move) == 3:
            kind = move[2]
            if kind == TARGETLESS:
                return (), ()
            if kind == INTERNAL:
                domain, entered = self.internal_effect(source, target)
            elif kind == MULTI:
                domain, entered = self.effect(source, target)
            else:
                domain, entered = self.history_effect(
                    source, target, kind, (remembered or {}).get(target))
        else:
            domain, entered = self.effect(source, target)
        exited = self.sort(s for s in configuration if self.is_descendant(s, domain))
        return exited, entered

    def step(self, configuration: Sequence[str], moves: Sequence[Move],
             remembered: Remembered) -> tuple[tuple[str, ...], tuple[str, ...], Remembered]:
        """(next configuration, entered states, remembered) after one microstep: the general
        form of `next_configuration`, for steps that take or record history."""
        # As SCXML's microstep: every exit first, which records history (exitStates), then the
        # entries, which read it (enterStates): a transition that leaves a history target and
        # comes back to it by history returns to where it just was. The domain of a history
        # transition does not depend on what is remembered, so the exit set is the same
        # either way.
        key = (tuple(configuration), tuple(moves))
        if not self.remembers:  # nothing remembered: the same step, the same result
            found = self._steps.get(key)
            if found is not None:
                return found[0], found[1], remembered
        exited: set[str] = set()
        for m in moves:
            exited.update(self.move(configuration, m, remembered)[0])
        after = self.remember(configuration, self.sort(exited), remembered)
        entered: set[str] = set()
        for m in moves:
            entered.update(self.move(configuration, m, after)[1])
        result = self.sort((set(configuration) - exited) | entered)
        entered_in_order = self.sort(entered)
        if not self.remembers:
            if len(self._steps) >= _MEMO_LIMIT:
                self._steps.clear()  # bounded, as `next_configuration`'s
            # Not read back: a chart is shared by the runs of every thread, one of which may
            # clear the memo in between.
            self._steps[key] = (result, entered_in_order)
        return result, entered_in_order, after

    # -- completion -------------------------------------------------------------------------

    def raised(self, entered: Iterable[str], configuration: Iterable[str]) -> list[str]:
        """The states whose `done.state` event a microstep raises that a `done:` transition
        handles, in the order SCXML raises them (entry order; see the module docstring)."""
        out: list[str] = []
        if not self.completes:
            return out
        entering = list(entered)
        # As SCXML enters them: one by one, so two regions finishing in one microstep raise
        # their parallel's event once, when the second is entered.
        active = set(configuration) - set(entering)
        for name in entering:
            active.add(name)
            if self.kind[name] != "final":
                continue
            parent = self.parent[name]
            if parent is None:
                continue
            if parent in self.completes:
                out.append(parent)
            grand = self.parent[parent]
            if grand is not None and grand in self.completes and self.kind[grand] == "parallel" \
                    and self.is_done(grand, active):
                out.append(grand)
        return out

    def next_configuration(self, configuration: Sequence[str],
                           transitions: Iterable[tuple[str, str]]) -> tuple[str, ...]:
        """The configuration after one microstep that takes the (source, target) transitions
        (a conflict-free set, as `select` returns). Remembered per (configuration, steps): a
        run takes the same few steps over and over, and this is on every event's path."""
        key = (tuple(configuration), tuple(transitions))
        found = self._next.get(key)
        if found is not None:
            return found
        exited: set[str] = set()
        entered: set[str] = set()
        for source, target in key[1]:
            exited.update(self.exit_set(key[0], source, target))
            entered.update(self.effect(source, target)[1])
        result = self.sort((set(key[0]) - exited) | entered)
        if len(self._next) >= _MEMO_LIMIT:
            self._next.clear()  # bounded: a spec with huge parallel products must not leak
        self._next[key] = result
        return result

    # -- selection --------------------------------------------------------------------------

    def select(self, configuration: Sequence[str],
               enabled: Callable[[str], Iterable[str | tuple[str, str]]]) -> list[Move]:
        """The transitions one event takes, as moves ((source, target), or (source, target,
        KIND) for a history, internal or targetless transition), in selection order.

        `enabled(state)` gives, lazily and in document order, the targets of the event's
        alternatives declared on `state` whose guards pass (a generator evaluates each guard
        only when the one before it failed); an alternative of another kind than external as
        (target, kind). For each active atomic state in document order, the first such
        alternative on the state, then on its parent, and so on up, is taken.
        """
        selected: list[Move] = []
        active = self.sort(configuration)
        for leaf in active:
            if self.is_atomic(leaf):
                move = self.first_enabled(leaf, enabled)
                if move is not None and move not in selected:
                    selected.append(move)
        return self.without_conflicts(active, selected)

    def is_atomic(self, name: str) -> bool:
        """Whether selection starts at `name` when it is active: a state without children,
        or a final one."""
        return not self.children[name] or self.kind[name] == "final"

    def first_enabled(self, leaf: str,
                      enabled: Callable[[str], Iterable[str | tuple[str, str]]]
                      ) -> Move | None:
        """What one active atomic state selects (see `select`): the first enabled alternative
        on `leaf`, then on its parent, and so on up (a descendant's transition beats an
        ancestor's); None when there is none."""
        for state in (leaf, *self.ancestors(leaf)):
            found = next(iter(enabled(state)), None)
            if found is not None:
                return (state, found) if isinstance(found, str) else \
                    (state, found[0], found[1])
        return None

    def without_conflicts(self, configuration: Sequence[str],
                          selected: list[Move]) -> list[Move]:
        """SCXML's removeConflictingTransitions: of two transitions whose exit sets
        intersect, the one whose source is a descendant of the other's source wins, otherwise
        the one selected first. A history transition's exit set is that of its own domain
        (from a child of its target: the target's children only); an internal transition's
        is what is active inside its source; a targetless one's is empty."""
        if len(selected) < 2:  # nothing to conflict with: the common case, on every event
            return selected
        kept: list[Move] = []
        for t1 in selected:
            exits1 = set(self._exits(configuration, t1))
            preempted = False
            to_remove: list[Move] = []
            for t2 in kept:
                if exits1 & set(self._exits(configuration, t2)):
                    if self.is_descendant(t1[0], t2[0]):
                        to_remove.append(t2)
                    else:
                        preempted = True
                        break
            if not preempted:
                kept = [t for t in kept if t not in to_remove]
                kept.append(t1)
        return kept

    def _exits(self, configuration: Sequence[str], move: Move) -> tuple[str, ...]:
        if len(move) == 2:
            return self.exit_set(configuration, move[0], move[1])
        return self.move(configuration, move)[0]

    # -- completion -------------------------------------------------------------------------

    def is_done(self, name: str, configuration: Iterable[str]) -> bool:
        """Whether compound or parallel `name` rests in final states (SCXML isInFinalState)."""
        active = set(configuration)
        kind = self.kind[name]
        if kind == "compound":
            return any(c in active and self.kind[c] == "final" for c in self.children[name])
        if kind == "parallel":
            # Iterative over the regions and their nesting: every region must be done.
            stack = list(self.children[name])
            while stack:
                region = stack.pop()
                region_kind = self.kind[region]
                if region_kind == "parallel":
                    stack.extend(self.children[region])
                elif region_kind == "compound":
                    if not any(c in active and self.kind[c] == "final"
                               for c in self.children[region]):
                        return False
                else:
                    return False
            return True
        return False

    def ended(self, configuration: Iterable[str]) -> bool:
        """Whether a run in `configuration` has ended (see the module's docstring)."""
        active = list(configuration)
        for name in active:
            if self.parent[name] is None:
                kind = self.kind[name]
                if kind == "final" or (kind == "parallel" and name not in self.completes
                                       and self.is_done(name, active)):
                    return True
        return False
