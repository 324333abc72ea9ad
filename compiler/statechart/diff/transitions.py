"""Events and transitions from OLD to NEW: renamed, removed and added events, and per state
and event the alternatives that were removed, added, or changed (target, targets, actions,
kind, history, guard, `in:`, `set`, `clear`, `assign`)."""

from __future__ import annotations

from collections.abc import Callable

from statechart import spec_chart
from statechart.diff.base import Alt, DiffBase, names_text, sent_events
from statechart.model import Spec, Transition
from statechart_runtime.chart import events

_LOST = ("stored runs that took it cannot be loaded: their history has that step, which no "
         "transition of the new version takes")


class TransitionDiff(DiffBase):
    def alts(self, spec: Spec, event: str, old: bool) -> frozenset[tuple[str, Alt]]:
        """All (source, alternative) pairs of `event`, in NEW's names."""
        out = set()
        for t in spec.transitions():
            if t.event == event:
                out.add((self.smap.get(t.source, "") if old else t.source, self.alt(t, old)))
        return frozenset(out)

    def match_events(self) -> None:
        # The run's own events (`done.state.X`) are named after their state: they follow it.
        # Timers (`after.ID.X`) are compared by their id in `compare_timers`.
        old_internal = {t.event: t for t in self.old.transitions() if t.trigger == "done"}
        new_internal = {t.event for t in self.new.transitions() if t.trigger == "done"}
        for event, t in old_internal.items():
            prefix = event[:len(event) - len(t.source)]
            mapped = prefix + self.smap.get(t.source, t.source)
            if mapped in new_internal:
                self.emap[event] = mapped
        for event, t in old_internal.items():
            if event not in self.emap:
                self.add("transition-removed", f"`{t.source}` no longer has its "
                         f"`{t.trigger}` transition to `{t.target}`", t.span,
                         runs=self.lost(t), help=_LOST if self.lost(t) else "")
        for event in new_internal - set(self.emap.values()):
            n = _first(self.new, event)
            self.add("transition-added", f"`{n.source}` now has a `{n.trigger}` transition "
                     f"to `{n.target}`", n.span)
        if any(t.trigger == "always" for spec in (self.old, self.new)
               for t in spec.transitions()):
            self.emap[events.ALWAYS] = events.ALWAYS  # eventless: compared per state
        old_events, new_events = sent_events(self.old), sent_events(self.new)
        removed = [e for e in old_events if e not in self.emap]
        added = [e for e in new_events if e not in old_events]
        new_alts = {a: self.alts(self.new, a, False) for a in added}
        for r in removed:
            mine = self.alts(self.old, r, True)
            hits = [a for a in added if new_alts[a] == mine]
            if len(hits) == 1:
                a = hits[0]
                self.emap[r] = a
                added.remove(a)
                self.add("event-renamed", f"event `{r}` looks renamed to `{a}`",
                         _first(self.new, a).span, callers=True, runs=True,
                         help=f"callers still send `{r}`, and stored runs that took it name "
                              f"`{r}` in their history, which the check refuses")
            else:
                self.add("event-removed", f"event `{r}` was removed", _first(self.old, r).span,
                         callers=True, runs=True,
                         help=f"callers that send `{r}` fail, and stored runs that took it "
                              "cannot be loaded (their history has that step)")
        for a in added:
            self.add("event-added", f"new event `{a}`", _first(self.new, a).span)

    def compare_transitions(self) -> None:
        old_groups: dict[tuple[str, str], list[Transition]] = {}
        for t in self.old.transitions():
            if t.source in self.smap and t.source not in self.merged and t.event in self.emap:
                key = (self.smap[t.source], self.emap[t.event])
                old_groups.setdefault(key, []).append(t)
        new_groups: dict[tuple[str, str], list[Transition]] = {}
        mapped_sources = set(self.smap.values())
        mapped_events = set(self.emap.values())
        for t in self.new.transitions():
            if t.source in mapped_sources and t.event in mapped_events:
                new_groups.setdefault((t.source, t.event), []).append(t)
        for key in dict.fromkeys([*old_groups, *new_groups]):
            self.compare_alternatives(key, old_groups.get(key, []), new_groups.get(key, []))

    def compare_alternatives(self, key: tuple[str, str], olds: list[Transition],
                             news: list[Transition]) -> None:
        source, event = key
        pairs: list[tuple[Transition, Transition]] = []
        # Pair alternatives by guard first (the guard names the case), then by target.
        matchers: tuple[Callable[[Transition, Transition], bool], ...] = (
            lambda o, n: o.guard == n.guard,
            lambda o, n: self.smap.get(o.target) == n.target)
        for same in matchers:
            for o in list(olds):
                match = next((n for n in news if same(o, n)), None)
                if match is not None:
                    pairs.append((o, match))
                    olds.remove(o)
                    news.remove(match)
        where = f"`{source}` on `{event}`"
        for o, n in pairs:
            self.compare_pair(where, o, n)
        if olds and self.effective(self.new, source, event) == \
                frozenset(self.alt(t, True) for t in spec_chart.may_take(
                    self.old, olds[0].source, event)):
            # Moved to an ancestor that now handles the event the same way: callers see no
            # change, but a stored step names the old source.
            for o in olds:
                if self.lost(o):
                    self.add("transition-removed", f"{where} now goes to `{o.target}` from an "
                             f"ancestor of `{source}`", o.span, runs=True, help=_LOST)
            olds = []
        for o in olds:
            lost = self.lost(o)
            self.add("transition-removed", f"{where} no longer goes to `{o.target}`"
                     + (f" (guard `{o.guard}`)" if o.guard else ""), o.span,
                     callers=not o.internal, runs=lost,
                     help="; ".join(([f"callers that send `{event}` in `{source}` fail"]
                                     if not o.internal else []) + ([_LOST] if lost else [])))
        for n in news:
            if n.trigger == "always":
                self.add("eventless-added", f"`{source}` now goes to `{n.target}` by itself "
                         f"(`always:`{n.condition_text})", n.span, callers=True,
                         help=f"a run may leave `{source}` as soon as it enters it: events "
                              "callers send there may now be refused")
            elif key not in self.shadowed:
                self.add("transition-added", f"{where} now goes to `{n.target}`", n.span)

    def compare_pair(self, where: str, o: Transition, n: Transition) -> None:
        # Nobody sends the run's own events: their changes break no caller.
        if self.smap.get(o.target) != n.target:
            lost = self.lost(o)
            self.add("transition-retargeted", f"{where} now goes to `{n.target}` "
                     f"(was `{o.target}`)", n.target_span, runs=lost,
                     help=_LOST + f"; keep an alternative (guarded, if need be) to `{o.target}`"
                     if lost else "")
        if self.smap.get(o.target) == n.target and \
                tuple(self.smap.get(x, x) for x in o.targets) != n.targets:
            # A step records the first target: the others come from the spec when replayed.
            self.add("targets-changed", f"{where} now enters {n.shown_target} (was "
                     f"{o.shown_target})", n.target_span, runs=True,
                     help="a stored run's history replays to other states (a step records "
                          "the first target): raise `version` so stored records are re-read "
                          "through their history")
        if o.actions != n.actions:
            self.add("transition-actions-changed", f"{where} now runs "
                     f"{names_text(n.actions) if n.actions else 'no action'} (was "
                     f"{names_text(o.actions) if o.actions else 'none'})", n.span)
        if o.kind != n.kind:
            lost = self.lost(o)
            self.add("transition-kind-changed", f"{where} is now {_kind_text(n)} (was "
                     f"{_kind_text(o)})", n.span, runs=lost,
                     help=("stored runs that took it cannot be loaded: their history has that "
                           "step; " if lost else "") + "exit and entry actions and timers of "
                     "its source now run differently")
        elif o.history != n.history:
            self.add("history-changed", f"{where} now enters `{n.target}` "
                     f"{_entering(n.history)} (was {_entering(o.history)})", n.span, runs=True,
                     help="a stored run's history replays to other states: raise `version` so "
                          "stored records are re-read through their history")
        if o.guard != n.guard:
            if o.guard is None:
                self.add("guard-added", f"{where} is now guarded by `{n.guard}`",
                         n.guard_span or n.span, callers=not n.internal,
                         help="callers that relied on the transition may now be refused")
            elif n.guard is None:
                self.add("guard-removed", f"{where} is no longer guarded by `{o.guard}`",
                         n.span)
            else:
                self.add("guard-changed", f"{where} is now guarded by `{n.guard}` "
                         f"(was `{o.guard}`)", n.guard_span or n.span, callers=not n.internal,
                         help="a different condition decides; callers may now be refused")
        old_in = tuple(self.smap.get(s, s) for s in o.in_states)
        if old_in != n.in_states:
            # An enabling condition, like a guard: the stored history holds what was taken,
            # not why, so stored runs stay valid; callers may be refused (or no longer).
            self.add("in-changed", f"{where} is now enabled "
                     + (f"only in {names_text(n.in_states)}" if n.in_states else "in any state")
                     + f" (was {'only in ' + names_text(old_in) if old_in else 'any state'})",
                     n.in_spans[0] if n.in_spans else n.span, callers=not n.internal,
                     help="callers that relied on the transition may now be refused")
        old_sets = {self.fmap.get(f, f) for f in o.given}
        for i, f in enumerate(n.sets):
            if f not in old_sets and f in n.given:
                span = n.set_spans[i] if i < len(n.set_spans) else n.span
                self.add("set-added", f"{where} now needs `{f}`", span, callers=not n.internal,
                         runs=True,
                         help=f"`{f}` is a required keyword argument of the event method; "
                              "stored runs that took the transition have no value for it in "
                              "that step, which the check refuses")
        for f in sorted(old_sets - set(n.given)):
            self.add("set-removed", f"{where} no longer takes `{f}`", n.span,
                     callers=not n.internal, runs=f not in self.dropped,
                     help=f"callers that pass `{f}` fail, and the record no longer gets it"
                     + ("" if f in self.dropped else "; stored runs that took the transition "
                        "have its value in that step, which the check refuses"))
        self.compare_clears(where, o.clears, n.clears, n.span)
        old_assigns = {self.fmap.get(f, f): v for f, v in o.assigns}
        if old_assigns != dict(n.assigns):
            # A stored step holds the constant its alternative gave, and the check refuses
            # another: runs that took it no longer load (no migration rewrites a history).
            self.add("assign-changed", f"{where} now assigns {_constants(n.assigns)} (was "
                     f"{_constants(tuple(old_assigns.items()))})", n.span,
                     runs=True,
                     help="stored runs that took this transition hold the old values, which "
                          "the integrity check refuses: keep the old alternative and add one")

    def effective(self, spec: Spec, state: str, event: str) -> frozenset[Alt]:
        """What `event` does in `state` of NEW: the alternatives it may take there
        (`spec_chart.may_take`: the state's, then its ancestors', as the run selects)."""
        return frozenset(self.alt(t, False) for t in spec_chart.may_take(spec, state, event))


def _kind_text(t: Transition) -> str:
    return {"targetless": "targetless (exits and enters nothing)",
            "internal": f"internal (to `{t.target}` without exiting its source)"}.get(
                t.kind, f"external (to `{t.target}`)")


def _entering(history: str | None) -> str:
    return f"by {history} history" if history else "by default entry"


def _first(spec: Spec, event: str) -> Transition:
    return next(t for t in spec.transitions() if t.event == event)


def _constants(assigns: tuple[tuple[str, object], ...]) -> str:
    return ", ".join(f"`{f}: {v}`" for f, v in assigns) or "nothing"
