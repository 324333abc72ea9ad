"""The run store's checks of a run's row against its record (docs/runs.md, "What is checked
when"): the cheap ones `fire` makes of the head it trusts, and the ones `statechart runs
verify` makes of the columns `find` and `runs list` answer from.

`fire` restores a run from its head (the record without its history) and does not replay
it. What it can check at no extra round trip, from the row it locks: the head's status is
the `status` column, its active states are the `run_states` rows, and the last stored step
is the one the head ends with (its index is the row's step count less one, its time the
head's `lastTransitionAt`, its target an active state). A record, a column or a step edited
by hand makes them disagree, and `fire` refuses the run before taking any step from a state
the run is not in.

The store calls these with the rows it read; they need no SQL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from statechart_runtime.run import active_states

# What `fire`'s refusal says to do (the run is not fired; the store stays usable).
REPAIR_HINT = ("the row was changed outside the store; nothing was fired: `statechart runs "
               "verify` checks the whole run and names what disagrees (repair that, or "
               "restore the run from a backup)")


def utc_text(value: dt.datetime) -> str:
    """Times in the store's columns: UTC, fixed width, so text order is time order
    (`2025-05-01T12:00:00.000000Z`; isoformat: a few times faster than strftime)."""
    return value.astimezone(dt.UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def state_set(text: str | None) -> frozenset[str]:
    """The run_states rows of a run, as the head statements give them (names joined by
    spaces; None: no row)."""
    return frozenset(text.split(" ")) if text else frozenset()


def head_disagreement(run: Any, status: str, states: frozenset[str], steps: int,
                      last: Sequence[Any]) -> tuple[str, str] | None:
    """What of the row a restored head disagrees with, as (record field, what), or None.
    `status` is the row's status column, `states` its run_states rows, `steps` its step
    count, `last` the last stored history row's (index, target, time text), all None when
    the run has no step."""
    active = active_states(run)
    if run.status.value != status:
        return "status", (f"its stored record is in {list(active)} (status "
                          f"{run.status.value!r}), the row's status column says {status!r}")
    if frozenset(active) != states:
        return "configuration", (f"its stored record is in {list(active)}, its run_states "
                                 f"rows (what find(state=...) answers from) say "
                                 f"{sorted(states)}")
    index, target, at = last
    if index is None:
        if steps:
            return "history", f"its row says {steps} steps, the history table holds none"
        return None
    if index != steps - 1:
        return "history", (f"its row says {steps} steps, the last history row is "
                           f"history[{index}]")
    if target not in active:
        return "configuration", (f"its stored record is in {list(active)}, its last step "
                                 f"(history[{index}]) went to `{target}`")
    recorded = utc_text(run.record.lastTransitionAt)
    if recorded != at:
        return "lastTransitionAt", (f"its stored record's last transition was at {recorded}, "
                                    f"its last step (history[{index}]) at {at}")
    return None



def row_disagreements(stored: Any, record: Mapping[str, Any], next_due: dt.datetime | None,
                      *, same_version: bool) -> list[str]:
    """What of a stored run's row disagrees with its record (`statechart runs verify`, after
    the record replayed): the step count with the `history` rows, the status column and the
    run_states rows (what `find` and `runs list` answer from) with the record's status and
    active states, and, for a run of the checker's spec version (`same_version`), the
    `next_due` column with `next_due`, when the replayed record's earliest armed timer is
    due. `stored` is the run's `StoredRun`; `record` the record as stored, with the table's
    history, in the names of its own version, as the columns are."""
    found = []
    steps = len(record.get("history") or ())
    if stored.steps != steps:
        found.append(f"its row says {stored.steps} steps, the history table holds {steps}")
    if record.get("status") != stored.status:
        found.append(f"its status column says {stored.status!r}, its record "
                     f"{record.get('status')!r}")
    configuration = record.get("configuration")
    active = configuration if isinstance(configuration, list) else [record.get("status")]
    if set(active) != set(stored.states):
        found.append(f"its run_states rows say {sorted(stored.states)}, its record "
                     f"{sorted(map(str, active))}")
    if same_version and next_due != stored.next_due:
        found.append("its next_due column says "
                     + ("none" if stored.next_due is None else utc_text(stored.next_due))
                     + ", its armed timers "
                     + ("none" if next_due is None else utc_text(next_due)))
    return found
