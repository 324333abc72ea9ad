"""How the run store restores a stored run: from its head alone (what `fire` reads: the head
is trusted, not replayed, and checked cheaply against the columns and the last step read with
it), or whole with its steps (`load`, and a head of an older spec version: upgraded,
replayed, checked). Either way the run gets the store's `Mark` (writes.py). No I/O: the
store's drivers read the rows and call these.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from statechart_runtime.chart.values import Clock
from statechart_runtime.run import Run, active_states, record_class_of, spec_of
from statechart_runtime.store.core import checks, rows
from statechart_runtime.store.core.writes import MARK_ATTR, Mark, next_deadline

RunT = TypeVar("RunT", bound=Run[Any, Any, Any])


def stored_version(run_id: str, head: tuple[Any, ...]) -> int:
    """The spec version of a head row; DamagedRow if it is not a whole number."""
    return rows.whole_number(run_id, "runs.spec_version", head[1])


def needs_history(run_class: type[Run[Any, Any, Any]], head: tuple[Any, ...]) -> bool:
    """Whether a head row cannot be restored alone: a head of another spec version is read
    whole with its steps (to be upgraded by its migration and checked), as `load` reads."""
    return bool(head[1] != spec_of(run_class).version)


def full_run(run_class: type[RunT], run_id: str, row: tuple[Any, ...],
             steps_rows: Sequence[Sequence[Any]], clock: Clock, kwargs: dict[str, Any]
             ) -> RunT:
    """The run from its stored head `row` and its steps (`steps_rows`, the `steps`
    statement's rows), the whole record checked as `from_json` checks it, replaying the
    history; `kwargs` go to `restore`."""
    _, version, revision, steps = row[:4]
    data = head_data(run_class, run_id, row)
    spec = spec_of(run_class)
    data["history"] = rows.step_dicts(steps_rows, spec.invalid)
    if len(data["history"]) != steps:
        raise spec.invalid("history", f"the store holds {len(data['history'])} steps of "
                           f"run {run_id!r}, its row says {steps}")
    record = record_class_of(run_class).from_dict(data)  # upgrades older versions; replays
    if record.runId != run_id:
        raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                           f"{record.runId!r}")
    run = run_class.restore(record, check=False, **{"clock": clock, **kwargs})
    # A record upgraded from an older version: its steps and its run_states rows (in
    # the old names) are rewritten by the next save, whatever it changes.
    rewrite = version != spec.version
    setattr(run, MARK_ATTR, Mark(revision, steps, steps,
                                 () if rewrite else active_states(run),
                                 rewrite=rewrite, due=next_deadline(run)))
    return run


def head_run(run_class: type[RunT], run_id: str, row: tuple[Any, ...], clock: Clock) -> RunT:
    """The run from its stored head, without its history (trusted: the store wrote it,
    and checked every step as it was taken); the head must be of the class's spec version
    (`needs_history`)."""
    spec = spec_of(run_class)
    data = head_data(run_class, run_id, row)
    data["history"] = []
    record = record_class_of(run_class).from_dict(data, check=False)
    if record.runId != run_id:
        raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                           f"{record.runId!r}")
    run = run_class.restore(record, check=False, clock=clock)
    # The head is trusted, not replayed: cheap checks that it is the one the store wrote,
    # against what came with it (head_locked): the columns `find` answers from and the
    # last stored step. A record, column or step edited by hand disagrees.
    wrong = checks.head_disagreement(run, row[5], checks.state_set(row[6]), row[3], row[7:10])
    if wrong is not None:
        raise spec.invalid(wrong[0], f"run {run_id!r}: {wrong[1]}: {checks.REPAIR_HINT}")
    setattr(run, MARK_ATTR, Mark(row[2], row[3], 0, active_states(run),
                                 due=next_deadline(run)))
    return run


def head_record(run_class: type[Any], run_id: str, row: tuple[Any, ...]) -> Any:
    """The record of a head `row` (as `head` reads it) of the class's spec version, without
    its history and without the checks against the other tables that restoring a run for
    `fire` makes: what a work item's handler reads (store.claim_work)."""
    data = head_data(run_class, run_id, row)
    data["history"] = []
    return record_class_of(run_class).from_dict(data, check=False)


def head_data(run_class: type[Any], run_id: str, row: tuple[Any, ...]) -> dict[str, Any]:
    """The record of the head `row` as parsed JSON, once its spec and version are checked
    against `run_class`'s (the spec's InvalidRecord otherwise)."""
    spec = spec_of(run_class)
    for column, value in zip(("spec_version", "revision", "steps"), row[1:4], strict=True):
        rows.whole_number(run_id, f"runs.{column}", value)
    if row[0] != spec.name:
        raise spec.invalid("(store)", f"run {run_id!r} is a run of {row[0]!r} "
                           f"(version {row[1]}), not of {spec.name!r}")
    if row[1] > spec.version:
        raise spec.invalid("specVersion", f"run {run_id!r} was stored by version {row[1]} "
                           f"of {spec.name!r}; this module reads version {spec.version}")
    try:
        data = json.loads(row[4])
    except ValueError as exc:
        raise spec.invalid("(record)", f"the stored record is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise spec.invalid("(record)", "the stored record is not a JSON object")
    return data
