"""Compare two versions of a spec and classify every change as breaking or safe.

Pure: takes two built `Spec`s, returns `Change`s; never reads files or prints.
`statechart.cli.diff` does the reading, checking and printing. docs/diff.md explains each kind.

"Breaking" has one meaning throughout: something that worked before fails now. Either a
*stored run* (a persisted record of the old version) can no longer be loaded or continued, or a
*caller* (code that sends events and reads the record) gets a refusal or a value it cannot
handle. Everything else is safe, even when behaviour changes (those are still reported, as
warnings, because a reviewer should see them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from statechart import report, semantics
from statechart.diagnostics import Diagnostic, Span
from statechart.model import RecordField, Spec, SpecRule, State, Transition
from statechart.report import Reporter, Sources
from statechart_runtime import events
from statechart_runtime.timers import TimerTable

DOCS_URL = "https://github.com/statechart-compiler/statechart-compiler/blob/main/docs/diff.md"

# kind -> one line: what it means. The single list of change kinds (docs, SARIF rules, tests).
KINDS: dict[str, str] = {
    "spec-added": "A new spec file.",
    "spec-removed": "A spec file was deleted.",
    "spec-renamed": "The spec's `statechart` name changed.",
    "version-not-raised": "Stored runs are affected, but `version` is unchanged.",
    "version-lowered": "`version` went down.",
    "initial-changed": "A run (or a compound state) starts in a different state.",
    "state-added": "A new state.",
    "state-removed": "A state is gone.",
    "state-renamed": "A state is gone and a new one with the same shape appeared.",
    "state-moved": "A state has a different parent.",
    "state-kind-changed": "A state became compound, atomic or parallel.",
    "final-added": "A state was made terminal (`final: true`).",
    "final-removed": "A terminal state was made non-terminal.",
    "requires-added": "A state newly requires a record field.",
    "requires-removed": "A state no longer requires a record field.",
    "limit-lowered": "A state's entry `limit` was added or lowered.",
    "limit-raised": "A state's entry `limit` was raised or removed.",
    "event-added": "A new event.",
    "event-removed": "An event is gone.",
    "event-renamed": "An event is gone and a new one with the same transitions appeared.",
    "transition-added": "A new transition of an existing event on an existing state.",
    "transition-removed": "A state no longer handles an event it handled.",
    "transition-retargeted": "A transition enters a different state.",
    "transition-shadowed": "A state's new transition takes events an ancestor's transition "
                           "took while the state is active (by their name or a descriptor).",
    "guard-added": "An unguarded transition now has a guard.",
    "guard-removed": "A guarded transition lost its guard.",
    "guard-changed": "A transition's guard is a different method.",
    "set-added": "An event now demands a record field (`set`).",
    "set-removed": "An event no longer takes a record field (`set`).",
    "field-added": "A new record field.",
    "field-removed": "A record field is gone.",
    "field-renamed": "A record field was renamed by a migration.",
    "field-type-changed": "A record field has a different type.",
    "enum-narrowed": "An enum field lost values.",
    "enum-widened": "An enum field gained values.",
    "timer-added": "A state has a new timer (`after:`).",
    "timer-removed": "A state's timer (`after:`) is gone.",
    "timer-changed": "A timer's delay or deadline field, its id, or where it leads, changed.",
    "history-changed": "A transition now enters its target by history, or no longer does, "
                       "or by the other kind of history.",
    "transition-actions-changed": "A transition runs other actions (`actions:`).",
    "eventless-added": "A state has a new eventless transition (`always:`): runs may leave "
                       "it by themselves, so callers may find them elsewhere.",
    "targets-changed": "A multi-target transition (`target: [a2, b2]`) enters other states "
                       "besides its first target, or now has several targets, or one.",
    "history-default-changed": "A state's history default (`history_default:`) names another "
                               "state, or was added or removed.",
    "in-changed": "A transition is enabled while other states are active (`in:`), or no "
                  "longer depends on one; stored runs are safe (a step taken stays valid).",
    "transition-kind-changed": "A transition became targetless or internal (`internal: true`), "
                               "or no longer is.",
    # Run context and status vocabulary (docs/spec-format.md "Run context", "Status").
    "context-added": "A record field became run context (`context: true`).",
    "context-removed": "A record field is no longer run context.",
    "default-changed": "A record field's `default` was added, changed or removed.",
    "clear-changed": "A transition or a state clears other record fields (`clear:`).",
    "assign-changed": "A transition sets other constants (`assign:`), or none any more.",
    "status-changed": "A state reports another status (`status:`).",
    "counter-changed": "A state's `counter:` record key was added, renamed or removed.",
    "rule-added": "A new rule in `rules:`.",
    "rule-removed": "A rule of `rules:` is gone.",
    "rule-changed": "A rule with the same `id` selects different states.",
}

_LOST = ("stored runs that took it cannot be loaded: their history has that step, which no "
         "transition of the new version takes")

# What a change covered by the upgrade of a stored run (no migration needed) says.
_UPGRADED = "safe once `version` is raised: stored runs are upgraded"

# Type changes every stored value survives: an enum value is a string, an integer is a number.
_WIDENINGS = {("enum", "string"), ("integer", "number")}


@dataclass(frozen=True)
class Change:
    """One difference between OLD and NEW.

    `for_runs` / `for_callers` say whom it breaks; a change that breaks nobody is safe.
    `span` is in NEW, or in OLD for what no longer exists there (the span names its file).
    `migrated` marks a change that would break stored runs but is covered by a migration, or
    by the upgrade of a stored run to the new version (a new timer is armed): `note` then says
    which, in place of "migrated". `of_overlay`: a difference between a base and an overlay
    that extends it, which is a new spec with runs of its own: nothing stored is at stake.
    """

    kind: str
    message: str
    span: Span
    for_runs: bool = False
    for_callers: bool = False
    help: str = ""
    migrated: bool = False
    note: str = ""
    of_overlay: bool = False

    @property
    def breaking(self) -> bool:
        return not self.of_overlay and (self.for_runs or self.for_callers)

    def diagnostic(self) -> Diagnostic:
        """Breaking -> error, safe -> warning; the rule id is the change kind."""
        who = [w for w, hit in (("stored runs", self.for_runs), ("callers", self.for_callers))
               if hit]
        if self.of_overlay and self.for_callers:
            note = "callers written for the base must change"
        elif self.of_overlay:
            note = "safe" + (": the overlay is a new spec, with no stored runs of the base"
                             if self.for_runs or self.migrated else "")
        elif who:
            note = f"breaks {' and '.join(who)}"
        else:
            note = (self.note or "migrated") if self.migrated else "safe"
        return Diagnostic(self.kind, "error" if self.breaking else "warning",
                          f"{self.message} ({note})", self.span, self.help)


def diff_specs(old: Spec, new: Spec, *, state_renames: Mapping[str, str] | None = None,
               field_renames: Mapping[str, str | None] | None = None,
               overlay: bool = False) -> list[Change]:
    """Every change from `old` to `new`, sorted by file and position.

    `state_renames` / `field_renames` (old name -> new name; a field -> None: dropped) are
    migrations: stored runs are rewritten, so a state or field they cover is not lost. They are
    added to the NEW spec's own `migrations`. Version findings point at NEW's `version` (or,
    in an overlay that inherits it, at its `statechart` name).

    `overlay`: NEW is an overlay of OLD (`extends`), not its next version. What the overlay
    changes is classified as usual, but its own `statechart` name and its own `version` are
    not changes: an overlay must have its own name, and its versions count its own runs.
    """
    # An overlay that inherits `version` from its base is pointed at by its own name.
    version_at = new.version_span if new.version_span is not None \
        and new.version_span.file == new.path else new.name_span or new.span
    states, fields = _declared_migrations(old, new)
    states.update(state_renames or {})
    fields.update(field_renames or {})
    d = _Differ(old, new, states, fields)
    changes = d.run()
    if overlay:
        # No run of the base is ever loaded as a run of the overlay (another spec name): what
        # differs is listed, and what it means for the base's stored runs is dropped.
        changes = [replace(c, of_overlay=True, help="" if c.for_runs else c.help)
                   for c in changes if c.kind != "spec-renamed"]
    elif old.version > new.version:
        changes.append(Change(
            "version-lowered", f"`version` went down from {old.version} to {new.version}",
            version_at, for_runs=True,
            help="stored runs carry `specVersion`; a lower version cannot tell them apart"))
    elif old.version == new.version and any(c.for_runs or c.migrated for c in changes):
        # Only stored runs need a new version (spec-format.md: "Raise it when stored runs
        # must be migrated"); a change that breaks only callers is found by their tests.
        changes.append(Change(
            "version-not-raised",
            f"`version` is still {new.version} although stored runs are affected",
            version_at, for_runs=True,
            help=f"raise `version` to {new.version + 1}: migrations are keyed by the version "
                 "a stored run was written with"))
    return sorted(changes, key=lambda c: (c.span.file != new.path, c.span, c.kind, c.message))


def _declared_migrations(old: Spec, new: Spec) -> tuple[dict[str, str], dict[str, str | None]]:
    """OLD's names -> NEW's names, by NEW's migration from OLD's version (`Spec.migrations`).

    A migration maps records of its `from_version` directly onto NEW (migrations are not
    chained; docs/spec-format.md), so only the one for OLD's version applies. A field mapped to
    None is dropped on purpose.
    """
    for m in getattr(new, "migrations", ()):
        if m.from_version == old.version:
            return {o: n for o, n, _ in m.states}, {o: n for o, n, _ in m.fields}
    return {}, {}


Alt = tuple[str, str | None, frozenset[str]]  # (target, guard, sets) of one alternative


class _Differ:
    def __init__(self, old: Spec, new: Spec, state_renames: dict[str, str],
                 field_renames: dict[str, str | None]) -> None:
        self.old, self.new = old, new
        self.changes: list[Change] = []
        self.state_renames = state_renames  # migrations
        # old state name -> new state name, for every old state that still exists somehow
        self.smap: dict[str, str] = {s: s for s in old.states if s in new.states}
        self.fmap: dict[str, str] = {f.name: f.name for f in old.record
                                     if new.record_field(f.name)}
        self.fmap.update({o: n for o, n in field_renames.items() if n and new.record_field(n)})
        # fields a migration drops on purpose (`note: null`)
        self.dropped = {o for o, n in field_renames.items() if n is None}
        self.emap: dict[str, str] = {e: e for e in _sent(old) if e in set(_sent(new))}
        # old states a migration folds into another existing state: their own shape is gone
        self.merged: set[str] = set()
        # (state, event) of NEW that `compare_shadowing` reported: not a `transition-added`
        self.shadowed: set[tuple[str, str]] = set()
        # fields NEW's migration from OLD's version fills with their default (`fill:`)
        self.fills = {name for m in new.migrations if m.from_version == old.version
                      for name, _ in m.fill}

    def lost(self, o: Transition) -> bool:
        """Whether a stored step of OLD's transition `o` no longer replays under NEW: NEW has
        no transition with its source, event and target (states through renames and
        migrations; a `done` event follows its state, a sent event keeps its name in a
        stored history), entered the same way. The replay refuses such a record."""
        if not hasattr(self, "_steps"):
            self._steps = {(t.source, t.event, t.target, t.move_kind)
                           for t in self.new.transitions()}
        source, target = self.smap.get(o.source), self.smap.get(o.target)
        event = events.done_event(source or "") if o.trigger == "done" else o.event
        return (source, event, target, o.move_kind) not in self._steps

    def add(self, kind: str, message: str, span: Span, *, runs: bool = False,
            callers: bool = False, help: str = "", migrated: bool = False,
            note: str = "") -> None:
        assert kind in KINDS, kind
        self.changes.append(Change(kind, message, span, runs, callers, help, migrated, note))

    def run(self) -> list[Change]:
        if self.old.name != self.new.name:
            self.add("spec-renamed", f"the spec is now `{self.new.name}` (was `{self.old.name}`)",
                     self.new.name_span or self.new.span, callers=True,
                     help="the generated module and class are named after it")
        self.match_states()
        if self.smap.get(self.old.initial) != self.new.initial:
            self.add("initial-changed",
                     f"new runs start in `{self.new.initial}` (was `{self.old.initial}`)",
                     self.new.span)
        for o, n in self.smap.items():
            if o not in self.merged:
                self.compare_state(self.old.states[o], self.new.states[n])
        self.match_events()
        self.compare_shadowing()
        self.compare_transitions()
        self.compare_timers()
        self.compare_record()
        self.compare_rules()
        return self.changes

    # -- states ----------------------------------------------------------------------------
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

    def compare_clears(self, where: str, old: tuple[str, ...], new: tuple[str, ...],
                       span: Span) -> None:
        old_set = {self.fmap.get(f, f) for f in old}
        if old_set == set(new):
            return
        context = {f.name for f in self.new.record if f.context}
        self.add("clear-changed", f"{where} now clears {_names(new) or 'nothing'} (was "
                 f"{_names(sorted(old_set)) or 'nothing'})", span,
                 runs=bool((old_set ^ set(new)) - context),
                 help="a stored run's history replays to other field values; the check "
                      "refuses records whose values follow the old clears")

    # -- events and transitions ------------------------------------------------------------
    def alts(self, spec: Spec, event: str, old: bool) -> frozenset[tuple[str, Alt]]:
        """All (source, alternative) pairs of `event`, in NEW's names."""
        out = set()
        for t in spec.transitions():
            if t.event == event:
                out.add((self.smap.get(t.source, "") if old else t.source, self.alt(t, old)))
        return frozenset(out)

    def alt(self, t: Transition, old: bool) -> Alt:
        # What the caller gives identifies an alternative; its `assign:` is compared per pair.
        if not old:
            return (t.target, t.guard, frozenset(t.given))
        return (self.smap.get(t.target, t.target), t.guard,
                frozenset(self.fmap.get(f, f) for f in t.given))

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
        old_events, new_events = _sent(self.old), _sent(self.new)
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

    def compare_shadowing(self) -> None:
        """A state's new `on:` key that takes events which, in OLD, the state did not take
        itself and an ancestor did: a descendant's transition beats an ancestor's, so callers
        that send them while the state is active get another target (the event's own name
        written on a child, or a descriptor: `error` takes `error.tool.timeout`). One finding
        per key. Stored runs are safe: the ancestor's steps still replay."""
        sent = [e for e in _sent(self.old) if e != "*" and e in self.emap]
        for o, n in self.smap.items():
            if o in self.merged:
                continue
            # the key that now takes them -> [(event in NEW, OLD's alternatives that took it)]
            found: dict[str, list[tuple[str, list[Transition]]]] = {}
            for event in sent:
                now = semantics.takers(self.new.states[n], self.emap[event])
                was = semantics.handling(self.old, o, event)
                if now and was and was[0].source != o and \
                        {self.alt(t, False) for t in now} != {self.alt(t, True) for t in was}:
                    found.setdefault(now[0].event, []).append((self.emap[event], was))
            for key, taken in found.items():
                alts = [t for t in self.new.states[n].transitions if t.event == key]
                # fields an event now needs there that none of its old alternatives took
                needs = {f for _, was in taken for f in {f for t in alts for f in t.given}
                         - {self.fmap.get(f, f) for t in was for f in t.given}}
                self.shadowed.update((n, event) for event, _ in taken)
                named = _names(e for e, _ in taken)
                self.add("transition-shadowed", f"`{n}` on `{key}` now "
                         + ("goes" if [e for e, _ in taken] == [key] else f"takes {named}")
                         + f" to {_targets(alts)} (before: " + ", ".join(
                             f"`{e}` went from `{was[0].source}` to {_targets(was)}"
                             for e, was in taken) + ")", alts[0].span, callers=bool(needs),
                         help=f"a descendant's transition beats an ancestor's: callers that "
                              f"send {named} while `{n}` is active "
                              + (f"without {_names(sorted(needs))} are refused" if needs
                                 else "find the run elsewhere afterwards"))

    def compare_timers(self) -> None:
        """Timers per state, by their id (the KEY of their event `after.KEY.STATE`: a `name:`,
        a deadline field, or `delayN`), as the runtime reads a stored run: the upgrade renames
        a timer's event with its state, then an event that names no timer of NEW is taken for
        the timer it stands for (`TimerTable.stands_for`, for records of every version) or
        refused. So a stored run that fired a timer loads if its event still finds a timer
        that leads where the run went; a record of an older `version` gets its armed timers
        recomputed from its history (a new delay or deadline field needs a raised `version`,
        and that suffices); guards are not stored."""
        table = TimerTable(self.new.timer_rows())
        for o, n in self.smap.items():
            if o in self.merged:
                continue
            state = self.new.states[n]
            olds, news = _timers(self.old.states[o]), _timers(state)
            span = next((t.span for t in state.transitions if t.trigger == "after"), state.span)
            gone: dict[str, list[Transition]] = {}
            found: set[str] = set()
            for oid, alts in olds.items():
                current = table.stands_for(events.timer_event(oid, n))
                parsed = events.parse(current) if current is not None else None
                nid = parsed.key if parsed is not None else None
                if nid is None or nid not in news:
                    gone[oid] = alts
                    continue
                found.add(nid)
                # Timers without `name:` are numbered in writing order: a timer whose delay
                # and targets another id has now was most likely moved.
                moved = next((m for m, a in news.items() if m != nid and self.timer_shape(
                    a, False) == self.timer_shape(alts, True)), None)
                self.compare_timer(n, oid, alts, nid, news[nid], span, moved)
            added = {nid: alts for nid, alts in news.items() if nid not in found}
            for oid, alts in gone.items():
                same = next((nid for nid, a in added.items()
                             if self.timer_shape(a, False) == self.timer_shape(alts, True)), None)
                event = events.timer_event(oid, n)
                if same is not None:
                    del added[same]
                    self.add("timer-changed", f"`{n}`: timer `{oid}` (after {alts[0].after_key}) "
                             f"is now `{same}`", span, runs=True,
                             help=f"stored runs that fired it cannot be loaded: their history "
                                  f"names `{event}`; write `name: {oid}` on it to keep its "
                                  "event (a timer's id is its `name:`, else its deadline "
                                  "field, else its place among the state's delay timers)")
                else:
                    like = next((m for m, a in news.items()
                                 if self.timer_shape(a, False) == self.timer_shape(alts, True)),
                                None)
                    self.add("timer-removed", f"`{n}` no longer has timer `{oid}` (after "
                             f"{alts[0].after_key})", state.span, runs=True,
                             help=f"stored runs that fired it cannot be loaded: their history "
                                  f"names `{event}`; keep the timer, or give the one that "
                                  f"replaces it `name: {oid}`" + (
                                      "" if like is None else f" (`{like}` looks like it "
                                      "moved: timers without `name:` are numbered in writing "
                                      "order)"))
            for nid, alts in added.items():
                self.add("timer-added", f"`{n}` has a new timer `{nid}` (after "
                         f"{alts[0].after_key})", span, migrated=True, note=_UPGRADED,
                         help="stored runs in it get it armed from when they entered the "
                              "state; it may be due at once")

    def timer_shape(self, alts: list[Transition], old: bool) -> tuple[object, ...]:
        """A timer's delay or field and alternatives, in NEW's names: a timer that only moved
        (another id) has the same shape."""
        first = alts[0]
        field = self.fmap.get(first.deadline, first.deadline) if old and first.deadline \
            else first.deadline
        return (first.delay_ms, field,
                tuple((self.smap.get(t.target, t.target) if old else t.target, t.guard,
                       t.move_kind) for t in alts))

    def compare_timer(self, state: str, oid: str, olds: list[Transition], nid: str,
                      news: list[Transition], span: Span, moved: str | None) -> None:
        """One timer of `state` in OLD (id `oid`) and the one of NEW its event finds (`nid`);
        `moved`: the id of NEW's timer that looks like the old one, when it is another."""
        o, n = olds[0], news[0]
        hint = "" if moved is None else (
            f"; `{moved}` looks like the old timer moved: timers without `name:` are numbered "
            f"in writing order, write `name: {oid}` on it to keep its event")
        if oid != nid:
            self.add("timer-changed", f"`{state}`: timer `{oid}` is now `{nid}`", span,
                     help=f"a stored run's history names `{events.timer_event(oid, state)}`: "
                          f"loading it takes the event for `{events.timer_event(nid, state)}`")
        old_field = self.fmap.get(o.deadline, o.deadline) if o.deadline else None
        if (o.delay_ms, old_field) != (n.delay_ms, n.deadline):
            legacy = ""
            if len({t.event for t in self.new.states[state].transitions
                    if t.trigger == "after"}) > 1 and events.looks_like_delay(o.after_key or "") \
                    and not any(t.after_key == o.after_key for t in self.new.timers()
                                if t.source == state):
                legacy = (f"; a record written before timers had ids names it "
                          f"`{events.timer_event(o.after_key or '', state)}`, which fits none "
                          f"of the state's timers now: `statechart runs verify --spec-new` "
                          f"finds such runs")
            self.add("timer-changed", f"`{state}`: timer `{nid}` is now after {n.after_key} "
                     f"(was after {o.after_key})", span, migrated=True, note=_UPGRADED,
                     help="stored runs in it get the new due time, counted from when they "
                          "entered the state; it may be due at once" + legacy + hint)
        taken = {(self.smap.get(t.target, t.target), t.move_kind) for t in olds}
        lost = sorted(taken - {(t.target, t.move_kind) for t in news}, key=str)
        if lost:
            where = ", ".join(f"`{target}`" + (f" by {kind} history" if kind in ("shallow", "deep")
                                               else f" ({kind})" if kind else "")
                              for target, kind in lost)
            self.add("timer-changed", f"`{state}` after {n.after_key} no longer goes to {where}",
                     span, runs=True,
                     help="stored runs that took it cannot be loaded: their history has that "
                          "step; keep an alternative (guarded, if need be) that goes there"
                          + hint)
        elif self.timer_shape(olds, True)[2] != self.timer_shape(news, False)[2]:
            self.add("timer-changed", f"`{state}` after {n.after_key} now leads elsewhere "
                     "(target or guard)", span, help=hint[2:])

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
                frozenset(self.alt(t, True) for t in self.old_effective(olds[0])):
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
                     f"{_names(n.actions) if n.actions else 'no action'} (was "
                     f"{_names(o.actions) if o.actions else 'none'})", n.span)
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
                     + (f"only in {_names(n.in_states)}" if n.in_states else "in any state")
                     + f" (was {'only in ' + _names(old_in) if old_in else 'any state'})",
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

    def old_effective(self, t: Transition) -> list[Transition]:
        return [x for x in self.old.states[t.source].transitions if x.event == t.event]

    def effective(self, spec: Spec, state: str, event: str) -> frozenset[Alt]:
        """What `event` does in `state` of NEW: the nearest state up the tree that handles it."""
        return frozenset(self.alt(t, False) for t in semantics.handling(spec, state, event))

    # -- record and rules ------------------------------------------------------------------
    def compare_record(self) -> None:
        for f in self.old.record:
            if f.name not in self.fmap and f.name in self.dropped:
                self.add("field-removed", f"record field `{f.name}` dropped by a migration",
                         f.span, migrated=True)
                continue
            if f.name not in self.fmap:
                self.add("field-removed", f"record field `{f.name}` was removed", f.span,
                         runs=True, help="stored records hold values for it; add a migration "
                                         "or keep the field")
                continue
            n = self.new.record_field(self.fmap[f.name])
            assert n is not None
            if n.name != f.name:
                self.add("field-renamed", f"record field `{f.name}` renamed to `{n.name}` by "
                         "a migration", n.span, migrated=True)
            self.compare_field(f, n)
        for n in self.new.record:
            if n.name not in self.fmap.values():
                # A new field with a default: the replay expects old records to hold it.
                stored = n.default is not None and not n.context
                self.add("field-added", f"new record field `{n.name}`"
                         + (", filled with its default by a migration"
                            if stored and n.name in self.fills else ""), n.span,
                         runs=stored and n.name not in self.fills,
                         migrated=stored and n.name in self.fills,
                         help=f"stored records lack it, and a run starts with its default: "
                              f"add `fill: [{n.name}]` to the migration" if stored else "")

    def compare_field(self, o: RecordField, n: RecordField) -> None:
        self.compare_context(o, n)
        if o.type == n.type == "enum":
            lost = [v for v in o.enum if v not in n.enum]
            gained = [v for v in n.enum if v not in o.enum]
            if lost:
                self.add("enum-narrowed", f"`{n.name}` no longer allows {_names(lost)}", n.span,
                         runs=True, callers=True,
                         help="stored records may hold them; callers may still send them")
            if gained:
                self.add("enum-widened", f"`{n.name}` now also allows {_names(gained)}", n.span,
                         help="readers that match every value must handle the new ones")
        elif o.type != n.type:
            safe = (o.type, n.type) in _WIDENINGS
            self.add("field-type-changed", f"`{n.name}` is now {n.type} (was {o.type})", n.span,
                     runs=not safe, callers=not safe,
                     help="" if safe else "stored values of the old type no longer validate")

    def compare_context(self, o: RecordField, n: RecordField) -> None:
        """A field's `context` and `default`: only the history's fields are replayed, so a
        change breaks stored runs only where the check compares values with the history."""
        if n.context and not o.context:
            self.add("context-added", f"`{n.name}` is now run context", n.span)
        elif o.context and not n.context:
            self.add("context-removed", f"`{n.name}` is no longer run context", n.span,
                     runs=True, callers=True,
                     help="stored values the application set disagree with the history; "
                          "`update` and the constructor no longer take it")
        if o.default != n.default or type(o.default) is not type(n.default):
            filled = o.default is None and n.name in self.fills
            self.add("default-changed", f"`{n.name}` now defaults to {_value(n.default)} "
                     f"(was {_value(o.default)})" + (", filled by a migration" if filled
                                                      else ""),
                     n.default_span or n.span, runs=not n.context and not filled,
                     migrated=filled and not n.context,
                     help="" if n.context else "stored runs whose history never set it hold "
                          "the old default, and the check expects the new one")

    def compare_rules(self) -> None:
        def says(r: SpecRule, names: Mapping[str, str]) -> object:
            def sel(s: Iterable[tuple[str, str, Span]]) -> tuple[tuple[str, str], ...]:
                return tuple(sorted((k, names.get(v, v) if k == "state" else v)
                                    for k, v, _ in s))
            return (r.kind, sel(r.sources), sel(r.targets))
        old = {r.id or says(r, self.smap): r for r in self.old.rules}
        new = {r.id or says(r, {}): r for r in self.new.rules}
        for k, r in old.items():
            if k not in new:
                self.add("rule-removed", f"rule {_rule_name(r)} was removed", r.span,
                         help="the graph no longer promises it; callers may rely on it")
            elif says(r, self.smap) != says(new[k], {}):
                self.add("rule-changed", f"rule {_rule_name(r)} now says something else",
                         new[k].span)
        for k, r in new.items():
            if k not in old:
                self.add("rule-added", f"new rule {_rule_name(r)}", r.span)


def _timers(state: State) -> dict[str, list[Transition]]:
    """A state's timers by id, each its alternatives, in writing order."""
    out: dict[str, list[Transition]] = {}
    for t in state.transitions:
        if t.trigger == "after" and t.timer_id is not None:
            out.setdefault(t.timer_id, []).append(t)
    return out


def _sent(spec: Spec) -> list[str]:
    """The events callers send (not those the run raises itself), in first-use order."""
    return list(dict.fromkeys(t.event for t in spec.transitions() if t.trigger == "event"))


def _targets(alts: Sequence[Transition]) -> str:
    """Where alternatives go, as messages name it: `a`, or `a [ok]` or `b`."""
    return " or ".join(f"`{t.shown_target}`{t.condition_text}" for t in alts)


def _kind_text(t: Transition) -> str:
    return {"targetless": "targetless (exits and enters nothing)",
            "internal": f"internal (to `{t.target}` without exiting its source)"}.get(
                t.kind, f"external (to `{t.target}`)")


def _entering(history: str | None) -> str:
    return f"by {history} history" if history else "by default entry"


def _first(spec: Spec, event: str) -> Transition:
    return next(t for t in spec.transitions() if t.event == event)


def _name_span(state: State, key: str, name: str) -> Span:
    return next((s for k, n, s in state.name_spans if k == key and n == name), state.span)


def _value(value: object) -> str:
    return "nothing" if value is None else f"`{value}`"


def _names(values: Iterable[str]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def _rule_name(r: SpecRule) -> str:
    return f"`{r.id}`" if r.id else f"`{r.kind}` at line {r.span.line}"


def changes_to_diagnostics(changes: Iterable[Change]) -> list[Diagnostic]:
    return [c.diagnostic() for c in changes]


def reporters() -> dict[str, Reporter]:
    """`check`'s reporters, with a SARIF one that knows the change kinds.

    `report.sarif` lists only `statechart.rules.RULES` and gives an unknown rule id index 0,
    which would point every change at `yaml-syntax`. This appends the change kinds to the
    driver's rules and recomputes each result's `ruleIndex`; lint rules stay first because a
    spec that fails `check` is reported with them.
    """
    def sarif(diagnostics: Sequence[Diagnostic], sources: Sources) -> str:
        log = json.loads(report.sarif(diagnostics, sources))
        driver = log["runs"][0]["tool"]["driver"]
        driver["rules"] += [
            {"id": kind, "shortDescription": {"text": text},
             "helpUri": f"{DOCS_URL}#{kind}",
             "defaultConfiguration": {"level": "warning"}}
            for kind, text in KINDS.items()
        ]
        index = {r["id"]: i for i, r in enumerate(driver["rules"])}
        for result in log["runs"][0]["results"]:
            result["ruleIndex"] = index[result["ruleId"]]
        return json.dumps(log, indent=2, ensure_ascii=False) + "\n"

    return {**report.REPORTERS, "sarif": sarif}


__all__ = ["KINDS", "Change", "changes_to_diagnostics", "diff_specs", "reporters"]


def _constants(assigns: tuple[tuple[str, object], ...]) -> str:
    return ", ".join(f"`{f}: {v}`" for f, v in assigns) or "nothing"
