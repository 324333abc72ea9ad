"""The run store's read side that needs no Run class: the rows tools see (`StoredRun`,
`HistoryRow`), the views `stored_runs` and `stored_record` (`statechart runs`), and the one
decoder of the stored steps and column times that every read goes through. A value the store
cannot have written (a row edited by hand) is named where it is: `history[3].values` of a
run (the caller's `invalid` error), or a run's column (DamagedRow); never a raw parse error.

`RunStore` (store.py) keeps the methods; they call these functions with the store itself.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from statechart_runtime import replay as _replay
from statechart_runtime.errors import DamagedRow, InvalidRecord, RunNotFound, StoreError
from statechart_runtime.values import parse_time

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
             "values": step_values(i, v, invalid), **(_replay.kind_entry(kind) if kind else {})}
            for i, (e, s, t, at, v, kind) in enumerate(rows)]


def history_rows(rows: Iterable[Sequence[Any]]) -> list[HistoryRow]:
    """`store.history`'s rows from (run_id, idx, event, source, target, at, values)."""
    out = []
    for run_id, idx, event, source, target, at, values in rows:
        when = parse_time(f"history[{idx}].at", at)
        out.append(HistoryRow(run_id, idx, event, source, target, when,
                              step_values(idx, values, InvalidRecord)))
    return out


def column_time(run_id: str, column: str, text: Any) -> dt.datetime:
    """A time column of run `run_id` (`runs.next_due`), parsed; DamagedRow if it is not one
    the store writes."""
    try:
        return parse_time(column, text)
    except InvalidRecord:
        raise DamagedRow(run_id, column, f"is {text!r}, not a time") from None


def stored_runs(store: Any, where: str, args: list[Any]) -> list[StoredRun]:
    """The runs matching `where` (a condition on `spec` or `run_id`, columns of `runs` and
    `run_states`), sorted by id, from the store's columns."""
    runs = store._query(
        "SELECT run_id, spec, spec_version, revision, status, steps, created_at, "
        f"updated_at, next_due FROM runs WHERE {where} ORDER BY run_id", args)
    states: dict[str, list[str]] = {}
    for run_id, state in store._query(
            f"SELECT run_id, state FROM run_states WHERE {where} ORDER BY run_id, state",
            args):
        states.setdefault(run_id, []).append(state)
    last = dict(store._query(
        "SELECT run_id, MAX(at) FROM history WHERE run_id IN "
        f"(SELECT run_id FROM runs WHERE {where}) GROUP BY run_id", args))
    return [StoredRun(r[0], r[1], r[2], r[3], r[4], tuple(states.get(r[0], ())), r[5],
                      column_time(r[0], "runs.created_at", r[6]),
                      column_time(r[0], "runs.updated_at", r[7]),
                      column_time(r[0], "history.at", last.get(r[0]) or r[6]),
                      column_time(r[0], "runs.next_due", r[8]) if r[8] else None)
            for r in runs]


def stored_record(store: Any, run_id: str,
                  same_steps: Callable[[list[Any], list[Any]], bool]
                  ) -> tuple[StoredRun, dict[str, Any]]:
    """`store.stored_record`: the run's columns and its record with the table's history,
    not checked against a spec; StoreError naming what is damaged."""
    found = stored_runs(store, f"run_id = {store.sql.param}", [run_id])
    if not found:
        raise RunNotFound(run_id)
    text = store._query(store.sql.record, [run_id])[0][0]
    try:
        record = json.loads(text)
    except ValueError as exc:
        raise StoreError(f"run {run_id!r}: the stored record is not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise StoreError(f"run {run_id!r}: the stored record is not a JSON object")

    def damaged(field: str, message: str) -> StoreError:
        return StoreError(f"run {run_id!r}: {field}: {message}")

    history = step_dicts(store._query(store.sql.steps, [run_id]), damaged)
    kept = record.get("history")
    if kept and not same_steps(kept, history):
        raise StoreError(f"run {run_id!r}: the record's history ({len(kept)} steps) is "
                         f"not the history table's ({len(history)} steps)")
    record["history"] = history
    return found[0], record
