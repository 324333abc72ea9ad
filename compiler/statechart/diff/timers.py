"""Timers from OLD to NEW, per state and by their id, as the runtime reads a stored run:
removed, added, renamed or moved, and a changed delay, deadline field or destination."""

from __future__ import annotations

from statechart.diagnostics import Span
from statechart.diff.base import DiffBase
from statechart.model import State, Transition
from statechart_runtime.chart import events
from statechart_runtime.chart.timers import TimerTable

# What a change covered by the upgrade of a stored run (no migration needed) says.
_UPGRADED = "safe once `version` is raised: stored runs are upgraded"


class TimerDiff(DiffBase):
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


def _timers(state: State) -> dict[str, list[Transition]]:
    """A state's timers by id, each its alternatives, in writing order."""
    out: dict[str, list[Transition]] = {}
    for t in state.transitions:
        if t.trigger == "after" and t.timer_id is not None:
            out.setdefault(t.timer_id, []).append(t)
    return out


