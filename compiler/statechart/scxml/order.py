"""SCXML's document order as a spec's `on:` keys (SCXML 3.13, "selecting transitions").

SCXML takes, for an event, the first transition of the state in document order whose event
descriptor matches and whose `cond` holds. A spec tries its `on:` keys in the order written,
each key's alternatives in order (docs/semantics.md), and `check` requires that order to say
what happens: a specific key before its family (`descriptor-order`), nothing after an
unguarded alternative and no guard twice (`ambiguous-transition`). So the transitions of a
state are regrouped, not copied as written:

- each key lists, in document order, every transition whose descriptor takes that key's
  events (`error`'s and `*`'s transitions written before an `error.tool` one are listed under
  `error.tool` too): for an event, the most specific key that takes it then holds exactly the
  transitions SCXML would try, in SCXML's order;
- the transitions SCXML never takes are dropped, each with a comment naming its line: those
  after one without `cond` (or with a `cond` already tried) on the same key;
- keys are written specific first; transitions a key would only repeat at its end (its
  family's, tried next anyway) are left to the family's key, unless every transition written
  on the key is dropped: then the key lists the family's, so that its event stays one the
  spec names.

Guards are names the application supplies (pure): trying one again under a broader key after
a specific key refused it gives the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statechart.spec_chart import matches


@dataclass
class Written:
    """One transition as imported: its key (an event descriptor, or `always`, `done`, an
    `after:` key), its line, the alternative, and whether its target counts entries (a
    `limit:` state, which makes even an unguarded alternative refusable)."""

    key: str
    line: int
    alternative: dict[str, Any]
    limited: bool = False

    @property
    def condition(self) -> tuple[str | None, tuple[str, ...]] | None:
        """What can refuse it (guard, `in:` states); None when nothing can."""
        if self.limited:
            return None  # never equal to another's, never unconditional
        guard, states = self.alternative.get("guard"), tuple(self.alternative.get("in", ()))
        return (guard, states)


def keys_in_order(keys: list[str]) -> list[str]:
    """`keys` (in order of first appearance) with each one before every key that takes its
    events (`error.tool` before `error`, anything before `*`), otherwise as they came."""
    out: list[str] = []
    for key in keys:
        at = next((i for i, other in enumerate(out) if other != key and _takes(other, key)),
                  len(out))
        out.insert(at, key)
    return out


def _takes(family: str, key: str) -> bool:
    return family == "*" or matches(family, key)


def taken(key: str, written: list[Written], *, descriptors: bool) -> tuple[
        list[Written], list[tuple[Written, Written]]]:
    """The transitions a spec lists under `key`, in document order, and those dropped because
    SCXML never takes them, each with the one that always wins before it. With `descriptors`,
    the transitions of `key`'s family (`written` holds the whole state's) are listed too."""
    candidates = [w for w in written
                  if w.key == key or (descriptors and w.key != key and _takes(w.key, key))]
    kept: list[Written] = []
    dropped: list[tuple[Written, Written]] = []
    tried: dict[tuple[str | None, tuple[str, ...]], Written] = {}
    winner: Written | None = None
    for w in candidates:
        condition = w.condition
        if winner is not None or (condition is not None and condition in tried):
            if w.key == key:  # a family's transition is reported under its own key
                dropped.append((w, winner or tried[condition]))  # type: ignore[index]
            continue
        kept.append(w)
        if condition == (None, ()):
            winner = w
        elif condition is not None:
            tried[condition] = w
    listed = list(kept)
    while kept and kept[-1].key != key:  # tried under the family's key next anyway
        kept.pop()
    if not kept and any(w.key == key for w in candidates):
        # Every transition the document writes on this key is dropped (`*` before `foo`):
        # the key stays, with the family's that SCXML takes, so the event stays one the
        # spec lists (a run refuses an event its spec does not name).
        kept = listed
    return kept, dropped
