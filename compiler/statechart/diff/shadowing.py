"""Descriptor shadowing from OLD to NEW: a state's new `on:` key that takes, while the state is
active, events an ancestor's transition took before."""

from __future__ import annotations

from collections.abc import Sequence

from statechart import spec_chart
from statechart.diff.base import DiffBase, names_text, sent_events
from statechart.model import Transition


class ShadowingDiff(DiffBase):
    def compare_shadowing(self) -> None:
        """A state's new `on:` key that takes events which, in OLD, the state did not take
        itself and an ancestor did: a descendant's transition beats an ancestor's, so callers
        that send them while the state is active get another target (the event's own name
        written on a child, or a descriptor: `error` takes `error.tool.timeout`). One finding
        per key. Stored runs are safe: the ancestor's steps still replay."""
        sent = [e for e in sent_events(self.old) if e != "*" and e in self.emap]
        for o, n in self.smap.items():
            if o in self.merged:
                continue
            # the key that now takes them -> [(event in NEW, OLD's alternatives that took it)]
            found: dict[str, list[tuple[str, list[Transition]]]] = {}
            for event in sent:
                now = spec_chart.takers(self.new.states[n], self.emap[event])
                was = spec_chart.may_take(self.old, o, event)
                if now and was and was[0].source != o and \
                        {self.alt(t, False) for t in now} != {self.alt(t, True) for t in was}:
                    found.setdefault(now[0].event, []).append((self.emap[event], was))
            for key, taken in found.items():
                alts = [t for t in self.new.states[n].transitions if t.event == key]
                # fields an event now needs there that none of its old alternatives took
                needs = {f for _, was in taken for f in {f for t in alts for f in t.given}
                         - {self.fmap.get(f, f) for t in was for f in t.given}}
                self.shadowed.update((n, event) for event, _ in taken)
                named = names_text(e for e, _ in taken)
                self.add("transition-shadowed", f"`{n}` on `{key}` now "
                         + ("goes" if [e for e, _ in taken] == [key] else f"takes {named}")
                         + f" to {_targets(alts)} (before: " + ", ".join(
                             f"`{e}` went from `{was[0].source}` to {_targets(was)}"
                             for e, was in taken) + ")", alts[0].span, callers=bool(needs),
                         help=f"a descendant's transition beats an ancestor's: callers that "
                              f"send {named} while `{n}` is active "
                              + (f"without {names_text(sorted(needs))} are refused" if needs
                                 else "find the run elsewhere afterwards"))


def _targets(alts: Sequence[Transition]) -> str:
    """Where alternatives go, as messages name it: `a`, or `a [ok]` or `b`."""
    return " or ".join(f"`{t.shown_target}`{t.condition_text}" for t in alts)

