"""States from OLD to NEW: which were renamed (by a migration, or by their shape), removed or
added, and what changed in each that still exists (parent, kind, initial child, history
defaults, `requires`, `limit`, `clear`, `status`, `counter`)."""

from __future__ import annotations

from statechart.diagnostics import Span
from statechart.diff.base import DiffBase
from statechart.model import State


class StateDiff(DiffBase):
    def match_states(self) -> None:
        old, new = self.old.states, self.new.states
        for o, n in self.state_renames.items():
            if o in old and o not in new and n in new:
                self.smap[o] = n
                if n in old:
                    self.merged.add(o)
                kind = "state-removed" if n in old else "state-renamed"
                how = f"merged into `{n}`" if n in old else f"renamed to `{n}`"
                self.add(kind, f"state `{o}` {how} by a migration", new[n].span, migrated=True)
        removed = [s for s in old if s not in self.smap]
        added = [s for s in new if s not in old and s not in self.smap.values()]
        # A rename: the only added state whose shape equals a removed one's, both ways.
        # Repeated until nothing pairs: a pair found can make its neighbours' shapes agree
        # (`finish: done` in a renamed state matches only once `done` is known renamed).
        shapes = {a: self.shape(new[a], {}) for a in added}
        found = True
        while found:
            found = False
            for r in [r for r in removed if r not in self.smap]:
                hits = [a for a in added if shapes[a] == self.shape(old[r], {r: a})]
                rivals = [x for x in removed if x not in self.smap and hits
                          and shapes[hits[0]] == self.shape(old[x], {x: hits[0]})]
                if len(hits) == 1 and rivals == [r]:
                    a = hits[0]
                    self.smap[r] = a
                    added.remove(a)
                    found = True
                    self.add("state-renamed", f"state `{r}` looks renamed to `{a}`",
                             new[a].span, runs=True, callers=True,
                             help=f"stored runs in `{r}` cannot be loaded; add a migration "
                                  f"`states: {{{r}: {a}}}` and raise `version`")
        for r in removed:
            if r not in self.smap:
                self.add("state-removed", f"state `{r}` was removed", old[r].span,
                         runs=True, callers=True,
                         help=f"stored runs in `{r}` cannot be loaded; add a migration "
                              f"`states: {{{r}: NEW_STATE}}` and raise `version`")
        for a in added:
            self.add("state-added", f"new state `{a}`", new[a].span)

    def shape(self, s: State, rename: dict[str, str]) -> tuple[object, ...]:
        """Everything about a state except its name, with state names passed through
        `rename` and then the known old->new mapping (identity for NEW's own states)."""
        def m(name: str | None) -> str | None:
            if name is None:
                return None
            return rename.get(name) or (self.smap.get(name, name) if rename else name)
        transitions = tuple((t.key, m(t.target), t.guard, t.sets) for t in s.transitions)
        return (m(s.parent), s.kind, m(s.initial), tuple(m(c) for c in s.children),
                transitions, s.tags, s.entry, s.exit, s.requires, s.limit)

    def compare_state(self, o: State, n: State) -> None:
        name = n.name
        parent = self.smap.get(o.parent) if o.parent else None
        if parent != n.parent:
            self.add("state-moved", f"state `{name}` moved from "
                     f"`{o.parent or 'the top level'}` to `{n.parent or 'the top level'}`",
                     n.span, runs=True,
                     help="a stored run's `configuration` lists the old ancestors")
        if o.is_final != n.is_final:
            if n.is_final:
                self.add("final-added", f"state `{name}` is now terminal", n.span,
                         runs=True, callers=True,
                         help="stored runs in it can no longer move; events sent to them fail")
            else:
                self.add("final-removed", f"state `{name}` is no longer terminal", n.span,
                         runs=True, help="stored runs in it were finished and are now open "
                                         "again; whatever treats them as done is wrong")
        elif o.kind != n.kind:
            self.add("state-kind-changed", f"state `{name}` is now {n.kind} (was {o.kind})",
                     n.span, runs=True,
                     help="a stored run's `status` and `configuration` no longer fit the tree")
        if o.initial and n.initial and self.smap.get(o.initial) != n.initial:
            self.add("initial-changed", f"entering `{name}` now enters `{n.initial}` "
                     f"(was `{o.initial}`)", n.initial_span or n.span)
        for kind in ("shallow", "deep"):
            was, now = o.history_default(kind), n.history_default(kind)
            if (self.smap.get(was, was) if was else None) != now:
                span = next((s for k, _, s in n.history_defaults if k == kind), n.span)
                self.add("history-default-changed", f"`{name}` {kind} history now enters "
                         f"`{now or 'its default entry'}` when nothing is remembered (was "
                         f"`{was or 'its default entry'}`)", span, runs=True,
                         help="a stored run's history replays to other states: raise "
                              "`version` so stored records are re-read through their history")
        old_requires = {self.fmap.get(f, f) for f in o.requires}
        for f in n.requires:
            if f not in old_requires and f in self.fills:
                self.add("requires-added", f"state `{name}` now requires `{f}`, filled with "
                         "its default by a migration", _name_span(n, "requires", f),
                         migrated=True)
            elif f not in old_requires:
                self.add("requires-added", f"state `{name}` now requires `{f}`",
                         _name_span(n, "requires", f), runs=True,
                         help=f"stored runs in `{name}` may lack `{f}`; give it a `default` "
                              f"and a migration `fill: [{f}]`")
        for f in sorted(old_requires - set(n.requires)):
            self.add("requires-removed", f"state `{name}` no longer requires `{f}`", n.span)
        if n.limit is not None and (o.limit is None or n.limit < o.limit):
            self.add("limit-lowered", f"state `{name}` may now be entered {n.limit} times "
                     f"(was {o.limit or 'unlimited'})", n.span, runs=True,
                     help="stored runs that already used more entries are refused the next")
        elif o.limit is not None and (n.limit is None or n.limit > o.limit):
            self.add("limit-raised", f"state `{name}` may now be entered "
                     f"{n.limit or 'any number of'} times (was {o.limit})", n.span)
        self.compare_status(o, n)

    def compare_status(self, o: State, n: State) -> None:
        """A state's `clear:`, `status:` and `counter:`."""
        name = n.name
        self.compare_clears(f"leaving `{name}`", o.clear, n.clear, n.span)
        if o.status != n.status:
            self.add("status-changed", f"state `{name}` now reports status "
                     f"`{n.status or 'its top-level state'}` (was "
                     f"`{o.status or 'its top-level state'}`)", n.status_span or n.span,
                     runs=True, callers=True,
                     help="stored records carry the old status (raise `version`: an upgrade "
                          "recomputes it); readers of `status` see other values")
        if o.counter != n.counter:
            self.add("counter-changed", f"state `{name}` now reports its entries as "
                     f"`{n.counter or 'nothing'}` (was `{o.counter or 'nothing'}`)",
                     n.counter_span or n.span, runs=True, callers=o.counter is not None,
                     help="stored records have the old key (raise `version`: an upgrade "
                          "writes the new one)")


def _name_span(state: State, key: str, name: str) -> Span:
    return next((s for k, n, s in state.name_spans if k == key and n == name), state.span)

