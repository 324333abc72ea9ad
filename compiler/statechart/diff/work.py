"""Work (`work:`) from OLD to NEW, per state, by what it does to stored runs whose item is
pending (a run in the state has one) and to the handlers that return outcomes
(docs/diff.md, "Work")."""

from __future__ import annotations

from statechart.diff.base import DiffBase, names_text
from statechart.model import Work


class WorkDiff(DiffBase):
    def compare_work(self) -> None:
        for o, n in self.smap.items():
            if o in self.merged:
                continue
            old, new = self.old.states[o].work, self.new.states[n].work
            state = self.new.states[n]
            if old is None and new is not None:
                self.add("work-added", f"`{n}` has new work `{new.handler}`", new.span,
                         help="stored runs already in it have no item: the work is enqueued "
                              "when a run enters the state, so they wait for another way out "
                              "(a cancel, a deadline) or a move by hand")
            elif old is not None and new is None:
                self.add("work-removed", f"`{n}` no longer has work `{old.handler}`",
                         state.span, runs=True,
                         help=f"stored runs in `{n}` have a pending `{old.handler}` item whose "
                              "outcome moves them on; nothing will run it under NEW: move "
                              "them by hand, or keep the work until none is pending")
            elif old is not None and new is not None:
                self._compare(n, old, new)

    def _compare(self, state: str, old: Work, new: Work) -> None:
        if old.handler != new.handler:
            self.add("work-handler-changed", f"`{state}`: work handler `{new.handler}` (was "
                     f"`{old.handler}`)", new.handler_span, runs=True,
                     help=f"pending items of stored runs in `{state}` name `{old.handler}`: "
                          "keep a worker that runs it until they are done, or register the "
                          "handler under both names")
        if (old.timeout_ms, old.heartbeat_ms) != (new.timeout_ms, new.heartbeat_ms):
            self.add("work-timeout-changed", f"`{state}`: work timeout {new.timeout}"
                     + (f", heartbeat {new.heartbeat}" if new.heartbeat else "")
                     + f" (was {old.timeout}"
                     + (f", heartbeat {old.heartbeat}" if old.heartbeat else "") + ")",
                     new.timeout_span,
                     help="a lease held now keeps its expiry; the next claim of a pending "
                          "item gets the new one")
        olds = {*old.outcomes, *([old.error] if old.error else [])}
        news = {*new.outcomes, *([new.error] if new.error else [])}
        if olds != news or old.error != new.error:
            lost = sorted(olds - news)
            self.add("work-outcomes-changed", f"`{state}`: work outcomes "
                     f"{names_text(new.outcomes)}"
                     + (f", error `{new.error}`" if new.error else "")
                     + f" (were {names_text(old.outcomes)}"
                     + (f", error `{old.error}`" if old.error else "") + ")",
                     new.outcome_spans[0] if new.outcome_spans else new.span,
                     callers=bool(lost),
                     help=(f"handlers that still return {names_text(lost)} have their outcome "
                           "refused: deploy the handlers with the spec") if lost else
                          "handlers may return the new events")
        if (old.retries, old.backoff_ms) != (new.retries, new.backoff_ms):
            self.add("work-retry-changed", f"`{state}`: work retries {new.retries} after "
                     f"{new.backoff} (were {old.retries} after {old.backoff})", new.span,
                     help="a pending item keeps the attempts it used; the next failure "
                          "follows the new policy")
