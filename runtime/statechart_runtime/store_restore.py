"""How the run store restores a stored run: from its head alone (what `fire` reads: the head
is trusted, not replayed, and checked cheaply against the columns and the last step read with
it), or whole with its steps (`load`, and a head of an older spec version: upgraded,
replayed, checked). Either way the run gets the store's `Mark` (store_writes.py).
`RunStore` (store.py) reads the rows and calls these.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from statechart_runtime import store_checks, store_read
from statechart_runtime.run import Run
from statechart_runtime.store_writes import MARK_ATTR, Mark, next_deadline

if TYPE_CHECKING:
    from statechart_runtime.store_connection import StoreConnection

RunT = TypeVar("RunT", bound=Run[Any, Any, Any])


def full_run(store: StoreConnection, run_class: type[RunT], run_id: str,
             row: tuple[Any, ...], kwargs: dict[str, Any]) -> RunT:
    """The run from its stored head `row` and its steps (read here), the whole record
    checked as `from_json` checks it, replaying the history; `kwargs` go to `restore`."""
    _, version, revision, steps = row[:4]
    data = head_data(run_class, run_id, row)
    spec = run_class._sc_spec
    data["history"] = store_read.step_dicts(
        store._x(store.sql.steps, (run_id,)).fetchall(), spec.invalid)
    if len(data["history"]) != steps:
        raise spec.invalid("history", f"the store holds {len(data['history'])} steps of "
                           f"run {run_id!r}, its row says {steps}")
    record = run_class._sc_record.from_dict(data)  # upgrades older versions; replays
    if record.runId != run_id:
        raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                           f"{record.runId!r}")
    run = run_class.restore(record, check=False, **{"clock": store.clock, **kwargs})
    # A record upgraded from an older version: its steps and its run_states rows (in
    # the old names) are rewritten by the next save, whatever it changes.
    rewrite = version != spec.version
    setattr(run, MARK_ATTR, Mark(revision, steps, steps, () if rewrite else run._active,
                                 rewrite=rewrite, due=next_deadline(run)))
    return run


def head_run(store: StoreConnection, run_class: type[RunT], run_id: str,
             row: tuple[Any, ...]) -> RunT:
    """The run from its stored head, without its history (trusted: the store wrote it,
    and checked every step as it was taken). A head of an older spec version is read
    whole instead, to be upgraded and checked."""
    spec = run_class._sc_spec
    if row[1] != spec.version:
        return full_run(store, run_class, run_id, row, {})
    data = head_data(run_class, run_id, row)
    data["history"] = []
    record = run_class._sc_record.from_dict(data, check=False)
    if record.runId != run_id:
        raise spec.invalid("runId", f"the run stored as {run_id!r} has the record of "
                           f"{record.runId!r}")
    run = run_class.restore(record, check=False, clock=store.clock)
    # The head is trusted, not replayed: cheap checks that it is the one the store wrote,
    # against what came with it (head_locked): the columns `find` answers from and the
    # last stored step. A record, column or step edited by hand disagrees.
    wrong = store_checks.head_disagreement(run, row[5], store_checks.state_set(row[6]),
                                           row[3], row[7:10])
    if wrong is not None:
        raise spec.invalid(wrong[0], f"run {run_id!r}: {wrong[1]}: "
                           f"{store_checks.REPAIR_HINT}")
    setattr(run, MARK_ATTR, Mark(row[2], row[3], 0, run._active, due=next_deadline(run)))
    return run


def head_data(run_class: type[Any], run_id: str, row: tuple[Any, ...]) -> dict[str, Any]:
    """The record of the head `row` as parsed JSON, once its spec and version are checked
    against `run_class`'s (the spec's InvalidRecord otherwise)."""
    spec = run_class._sc_spec
    for column, value in zip(("spec_version", "revision", "steps"), row[1:4], strict=True):
        store_read.whole_number(run_id, f"runs.{column}", value)
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
