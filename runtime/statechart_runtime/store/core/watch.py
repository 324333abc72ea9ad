"""What `store.watch` yields, with no database: a step of a spec's runs as it committed
(`Change`), and its position in the store's commit order, as the text a caller keeps to
watch on from there after a restart (`position_text`, `parse_position`).

A position is the backend's (PostgreSQL: the id of the transaction that wrote the step;
SQLite: the step's number in commit order) with the step's run and index; its text is
opaque to callers. `BEGINNING` is the position before every step.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from typing import Any

from statechart_runtime.errors import BadPosition
from statechart_runtime.store.core.rows import history_rows

# The position before every step: `watch(..., after=BEGINNING)` yields them all.
BEGINNING = "start"
_FIRST = (-(2**63), "", -1)  # below every position (PostgreSQL numbers older steps < 0)
Position = tuple[int, str, int]


@dataclasses.dataclass(frozen=True, slots=True)
class Change:
    """A step of a run as `watch` yields it: where it is in the store's commit order
    (`position`: pass it as `after=` to watch on from there), the run, the step's index in
    the run's history, its event, the states it left and entered (`source`, `target`), its
    time, its values and its kind (None: an event's step)."""

    position: str
    run_id: str
    index: int
    event: str
    source: str
    target: str
    at: dt.datetime
    values: dict[str, Any]
    kind: str | None


def position_text(position: Position) -> str:
    number, run_id, index = position
    return f"{number}:{index}:{run_id}"  # the run id last: it may hold ':'


def parse_position(text: str) -> Position:
    """The position a `Change.position` text names (BadPosition if none does)."""
    if text == BEGINNING:
        return _FIRST
    number, _, rest = text.partition(":")
    index, colon, run_id = rest.partition(":")
    try:
        if not colon:
            raise ValueError(text)
        found = int(number), run_id, int(index)
        # Numbers a database column holds (64 bits): SQLite's driver raised OverflowError.
        if not all(_FIRST[0] <= n < 2**63 for n in (found[0], found[2])):
            raise ValueError(text)
        return found
    except ValueError:
        raise BadPosition(
            f"{text!r} is not a watch position: pass a Change's `position` (or "
            f"{BEGINNING!r} for every step, or no position to watch from now)") from None


def changes(found: Sequence[Sequence[Any]]) -> list[Change]:
    """The `Change`s of `watch_steps` rows: (position, run_id, idx, event, source, target,
    at, values, kind), each step parsed as `store.history` parses it."""
    steps = history_rows(row[1:] for row in found)
    return [Change(position_text((int(row[0]), step.run_id, step.index)), step.run_id,
                   step.index, step.event, step.source, step.target, step.at, step.values,
                   step.kind) for row, step in zip(found, steps, strict=True)]
