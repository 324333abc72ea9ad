"""The run store's read side that needs no Run class: the rows tools see (`StoredRun`,
`HistoryRow`), the views `stored_runs` and `stored_record` (`statechart runs`), and the one
decoder of the stored steps and column times that every read goes through. A value the store
cannot have written (a row edited by hand) is named where it is: `history[3].values` of a
run (the caller's `invalid` error), or a run's column (DamagedRow); never a raw parse error.

No I/O: the store's drivers read the rows and call these.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from statechart_runtime.chart.values import parse_time
from statechart_runtime.errors import DamagedRow, InvalidRecord, StoreError
from statechart_runtime.run import replay

# The error of a stored value a record cannot hold: (field, message) -> the exception.
Invalid = Callable[[str, str], Exception]


@dataclasses.dataclass(frozen=True, slots=True)
class HistoryRow:
    """One transition of a stored run, as the `history` table holds it."""

    run_id: str
    index: int
    event: str
    source: str
    target: str
    at: dt.datetime
    values: dict[str, Any]
    # How the step took its transition (docs/runs.md, "The record"): None for an external
    # one, `shallow`/`deep` (into its target by history), `internal`, `targetless`, `multi`.
    kind: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class StoredRun:
    """A stored run as the store's columns describe it (`stored_runs`): `states` are the
    active states (ancestors included, sorted by name), `last_transition_at` the last
    step's time (when the run was stored, for a run with no step), `next_due` when its
    earliest armed timer is due (None: none is armed)."""

    run_id: str
    spec: str
    spec_version: int
    revision: int
    status: str
    states: tuple[str, ...]
    steps: int
    created_at: dt.datetime
    updated_at: dt.datetime
    last_transition_at: dt.datetime
    next_due: dt.datetime | None = None


def step_values(index: int, text: Any, invalid: Invalid) -> dict[str, Any]:
    """The `values` column of history row `index`, parsed (a JSON object)."""
    try:
        values = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise invalid(f"history[{index}].values", f"the stored values are not JSON ({exc}); "
                      "the history row was edited outside the runtime") from None
    if not isinstance(values, dict):
        raise invalid(f"history[{index}].values", "the stored values are not a JSON object; "
                      "the history row was edited outside the runtime")
    return values


def step_dicts(rows: Iterable[Sequence[Any]], invalid: Invalid) -> list[dict[str, Any]]:
    """The record's history from the `steps` rows (event, source, target, at, values, kind)."""
    return [{"event": e, "source": s, "target": t, "at": at,
             "values": step_values(i, v, invalid), **(replay.kind_entry(kind) if kind else {})}
            for i, (e, s, t, at, v, kind) in enumerate(rows)]


def history_rows(rows: Iterable[Sequence[Any]]) -> list[HistoryRow]:
    """`store.history`'s rows from (run_id, idx, event, source, target, at, values, kind)."""
    out = []
    for run_id, idx, event, source, target, at, values, kind in rows:
        when = parse_time(f"history[{idx}].at", at)
        out.append(HistoryRow(run_id, idx, event, source, target, when,
                              step_values(idx, values, InvalidRecord), kind or None))
    return out


def column_time(run_id: str, column: str, text: Any) -> dt.datetime:
    """A time column of run `run_id` (`runs.next_due`), parsed; DamagedRow if it is not one
    the store writes."""
    try:
        return parse_time(column, text)
    except InvalidRecord:
        raise DamagedRow(run_id, column, f"is {text!r}, not a time") from None


def whole_number(run_id: str, column: str, value: Any) -> int:
    """An integer column of run `run_id` (`runs.spec_version`, `runs.revision`,
    `runs.steps`); DamagedRow if it is not a whole number (SQLite keeps any text an UPDATE
    by hand puts there)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DamagedRow(run_id, column, f"is {value!r}, not a whole number")


def stored_runs(runs: Sequence[Sequence[Any]], state_rows: Sequence[Sequence[Any]],
                last_rows: Sequence[Sequence[Any]]) -> list[StoredRun]:
    """`stored_runs` from its three queries' rows: the `runs` rows, the (run_id, state)
    rows and the (run_id, last step's time) rows."""
    states: dict[str, list[str]] = {}
    for run_id, state in state_rows:
        states.setdefault(run_id, []).append(state)
    last = {row[0]: row[1] for row in last_rows}
    return [stored_run(r, tuple(states.get(r[0], ())), last.get(r[0])) for r in runs]


def page(found: Sequence[Sequence[Any]], state_rows: Sequence[Sequence[Any]]
         ) -> list[StoredRun]:
    """A page of runs (`runs_page`) from its rows: the `runs` columns and the last step's
    time, and the (run_id, state) rows."""
    states: dict[str, list[str]] = {}
    for run_id, state in state_rows:
        states.setdefault(run_id, []).append(state)
    return [stored_run(row[:9], tuple(states.get(row[0], ())), row[9]) for row in found]


def stored_run(row: Sequence[Any], states: tuple[str, ...], last_at: Any) -> StoredRun:
    """A StoredRun from a `runs` row (run_id, spec, spec_version, revision, status, steps,
    created_at, updated_at, next_due), its states and its last step's time (None: none)."""
    run_id = row[0]
    return StoredRun(run_id, row[1], whole_number(run_id, "runs.spec_version", row[2]),
                     whole_number(run_id, "runs.revision", row[3]), row[4], states,
                     whole_number(run_id, "runs.steps", row[5]),
                     column_time(run_id, "runs.created_at", row[6]),
                     column_time(run_id, "runs.updated_at", row[7]),
                     column_time(run_id, "history.at", last_at or row[6]),
                     column_time(run_id, "runs.next_due", row[8]) if row[8] else None)


# A run as `stored_record` gives it: its columns, and its record (parsed JSON, NOT checked)
# with its whole history from the `history` table.
Stored = tuple[StoredRun, dict[str, Any]]

Snapshot = list[tuple[Sequence[Any], list[str], list[Sequence[Any]]]]


def snapshot(heads: Sequence[Sequence[Any]], state_rows: Sequence[Sequence[Any]],
             step_rows: Sequence[Sequence[Any]]) -> Snapshot:
    """The runs of a snapshot's three queries (heads; (run_id, state); (run_id, event,
    source, target, at, values, kind) ordered by run and index): each its head row, its
    states and its steps."""
    by_run: dict[str, tuple[list[str], list[Sequence[Any]]]] = {
        head[0]: ([], []) for head in heads}
    for run_id, state in state_rows:
        by_run[run_id][0].append(state)
    for row in step_rows:
        by_run[row[0]][1].append(row[1:])
    return [(head, *by_run[head[0]]) for head in heads]


def assembled(head: Sequence[Any], states: list[str], steps: list[Sequence[Any]]
               ) -> Stored | StoreError:
    """A run's columns and record from its rows (`_snapshot`), or the StoreError naming what
    is damaged: a column time, the record's JSON, a step's values, a record whose history is
    not the table's."""
    run_id = head[0]
    try:
        stored = stored_run(head, tuple(states), steps[-1][3] if steps else None)
    except StoreError as exc:
        return exc
    try:
        record = json.loads(head[9])
    except ValueError as exc:
        return StoreError(f"run {run_id!r}: the stored record is not JSON: {exc}")
    if not isinstance(record, dict):
        return StoreError(f"run {run_id!r}: the stored record is not a JSON object")

    def damaged(field: str, message: str) -> StoreError:
        return StoreError(f"run {run_id!r}: {field}: {message}")

    try:
        history = step_dicts(steps, damaged)
    except StoreError as exc:
        return exc
    kept = record.get("history")
    if kept and not _same_steps(kept, history):
        return StoreError(f"run {run_id!r}: the record's history ({len(kept)} steps) is not "
                          f"the history table's ({len(history)} steps)")
    record["history"] = history
    return stored, record


def _same_steps(kept: list[Any], table: list[Any]) -> bool:
    """Whether a record's own history is the history table's (times as instants)."""
    return [_step_json(x) for x in kept] == [_step_json(x) for x in table]


def _step_json(step: Any) -> Any:
    """A history step as JSON compares: its time as an instant (the record keeps the text it
    was given, the table UTC), anything that is not a step as it is."""
    if not isinstance(step, dict) or not isinstance(step.get("at"), str):
        return step
    try:
        return {**step, "at": parse_time("at", step["at"])}
    except ValueError:  # not a time: compared as text
        return step
