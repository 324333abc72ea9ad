"""How the run store encodes a run into its statements, with no database: the mark a store
sets on a run it created or loaded (`Mark`: what of the run is stored), the statements that
store the run's head, new steps and active states (`writes`), and the JSON the columns hold.
The store's drivers run the statements in their transactions.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from statechart_runtime.errors import RunError, StoreError, UnstorableValue
from statechart_runtime.run import Run, active_states, forget_work_log, spec_of, work_log
from statechart_runtime.store.core import work
from statechart_runtime.store.core.checks import utc_text

if TYPE_CHECKING:
    from statechart_runtime.store.core.statements import Statements

# The attribute a store sets on a run it created or loaded (a `Mark`).
MARK_ATTR = "_sc_store"


@dataclasses.dataclass(frozen=True, slots=True)
class Writes:
    """What stores a run (`writes`): the arguments of its head's UPDATE (`update_head`),
    the other statements, each with its rows, and the spec to announce an earlier deadline
    of (None: none)."""

    run_id: str
    announce: str | None
    head: tuple[Any, ...]
    statements: list[tuple[str, list[tuple[Any, ...]]]]


@dataclasses.dataclass(slots=True)
class Mark:
    """What a store knows of a run it created or loaded: the revision it was loaded at, the
    steps the store holds, how many of those the run's record holds (the last ones; a run
    restored from its head holds none), its active states then, whether the stored steps
    must be rewritten (the record was upgraded from an older spec version: names changed),
    and its earliest timer's due time as stored (None: none armed, or not known); `origins`:
    the stored trace contexts of its active states (the step that entered each), when a
    tracing listener's store loaded or saved it (None: not read)."""

    revision: int
    steps: int
    known: int
    active: tuple[str, ...]
    rewrite: bool = False
    due: dt.datetime | None = None
    origins: Mapping[str, str] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Fired:
    """What `store.fire` (or `fire_due`) did: `run` is the stored run after it, saved at
    `revision`; `applied` is False when nothing was fired (an idempotency key already seen,
    no timer due); `events` are the events fired. The run is restored from the stored head:
    its record's history holds only the steps this call added (`store.load` reads them all)."""

    run: Any
    applied: bool
    revision: int
    events: list[str] = dataclasses.field(default_factory=list)  # as Run.fire_due's


# A fire computed, to be written: the run with the event taken, its mark, the time of the
# call (column text), the refusal when the event was refused after timers fired, and the
# trace contexts of the states its steps entered (None: no tracing listener).
Computed = tuple[Run[Any, Any, Any], Mark, str, RunError | None, Mapping[str, str] | None]


class Everywhere(Mapping[str, str]):
    """The one trace context of every state (a new run's: its creation entered them all)."""

    def __init__(self, context: str) -> None:
        self.context = context

    def __getitem__(self, state: str) -> str:
        return self.context

    def __contains__(self, state: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def writes(sql: Statements, run: Run[Any, Any, Any], mark: Mark, at: str,
           contexts: Mapping[str, str] | None = None) -> Writes:
    """What stores the run (the store's `_write` runs it): its head, its new steps (or all of them),
    its active states if they changed. Encoded here, with no database: a caller may do
    it before it takes a lock. UnstorableValue for a value the columns' JSON cannot hold.
    `contexts`: the trace context of each state the new steps entered (a tracing
    listener's, `listeners.start_steps`), written with its run_states row and the work
    items it enqueued; None: none (the columns stay NULL)."""
    try:
        return _writes(sql, run, mark, at, contexts)
    except ValueError as exc:
        raise unstorable(run.record.runId, exc) from None


def unstorable(run_id: str, exc: Exception) -> UnstorableValue:
    """The error of a value the store cannot encode as JSON: an integer too long for JSON
    text (Python writes at most 4,300 digits)."""
    return UnstorableValue(f"run {run_id!r}: a value of this call cannot be stored as JSON "
                           f"({exc}): nothing was stored; change the value (integers of at "
                           "most 4,300 digits)")


def _writes(sql: Statements, run: Run[Any, Any, Any], mark: Mark, at: str,
            contexts: Mapping[str, str] | None) -> Writes:
    record: Any = run.record
    run_id = record.runId
    spec = spec_of(run)
    history = record.history
    if len(history) < mark.known:
        raise StoreError(f"run {run_id!r}: its history went from {mark.known} steps to "
                         f"{len(history)}; a stored history only grows")
    steps = len(history) if mark.rewrite else mark.steps + len(history) - mark.known
    deadline = next_deadline(run)
    head = (mark.revision + 1, spec.version, record.status.value, steps,
            encode(record.to_dict(history=False)),
            None if deadline is None else utc_text(deadline), at, run_id)
    statements: list[tuple[str, list[tuple[Any, ...]]]] = []
    if mark.rewrite:
        if sql.keep_step_number and mark.steps:  # a new run has none
            statements.append((sql.keep_step_number, [(run_id,)]))
        statements.append((sql.delete_steps, [(run_id,)]))
        start, new = 0, history
    else:
        start, new = mark.steps, history[mark.known:]
    statements.append((sql.insert_step, [
        (run_id, index, step.event.value, step.source.value, step.target.value,
         utc_text(step.at), encode_sorted(step.values) if step.values else "{}",
         step.kind)
        for index, step in enumerate(new, start)]))
    if active_states(run) != mark.active:
        if mark.rewrite:  # a new run, or one upgraded from an older version: all of them
            statements.append((sql.delete_states, [(run_id,)]))
            left: Sequence[str] = ()
            entered: Sequence[str] = active_states(run)
        else:  # only the rows of the states left and entered (a leaf change: one each)
            left = [name for name in mark.active if name not in active_states(run)]
            entered = [name for name in active_states(run) if name not in mark.active]
        statements.append((sql.delete_state, [(run_id, name) for name in left]))
        statements.append((sql.insert_state, [
            (run_id, spec.name, name, None if contexts is None else contexts.get(name))
            for name in entered]))
    if contexts and not mark.rewrite:
        # States entered again (a self-transition): active before and after, their timer
        # armed again by this call's step.
        again = [(contexts[name], run_id, name) for name in mark.active
                 if name in contexts and name in active_states(run)]
        if again:
            statements.append((sql.state_context, again))
    log = work_log(run)
    if log:  # the work items its steps started and ended, in the same transaction
        statements.extend(work.log_statements(
            sql, run, log, spec=spec.name, first_step=0 if mark.rewrite else mark.steps,
            known=0 if mark.rewrite else mark.known, contexts=contexts))
    if new and sql.announce_step:  # at commit, the watchers of the spec look (`watch`)
        statements.append((sql.announce_step, [(spec.name,)]))
    # An earlier deadline, or a work item to claim, wakes the sleeping workers.
    earlier = deadline is not None and (mark.due is None or deadline < mark.due)
    announce = spec.name if earlier or any(entry.change.started for entry in log) else None
    return Writes(run_id, announce, head, statements)


def mark_of(run: Run[Any, Any, Any]) -> Mark:
    mark = getattr(run, MARK_ATTR, None)
    if not isinstance(mark, Mark):
        raise StoreError(f"run {run.record.runId!r} was not created or loaded by a store: "
                         "store.create(run) stores a new run")
    return mark


def saved(run: Run[Any, Any, Any], mark: Mark, revision: int,
          origins: Mapping[str, str] | None = None) -> None:
    forget_work_log(run)
    history = run.record.history
    steps = len(history) if mark.rewrite else mark.steps + len(history) - mark.known
    setattr(run, MARK_ATTR, Mark(revision, steps, len(history), active_states(run),
                                 due=next_deadline(run), origins=origins))


def keep_origins(run: Run[Any, Any, Any], origins: Mapping[str, str]) -> None:
    """Keep with a run's mark the stored trace contexts of its states (`Mark.origins`)."""
    setattr(run, MARK_ATTR, dataclasses.replace(mark_of(run), origins=origins))


def next_deadline(run: Run[Any, Any, Any]) -> dt.datetime | None:
    """The run's earliest armed timer's due time (the `next_due` column), or None."""
    return getattr(run, "next_deadline", None)  # a run of a spec with timers has one


def json_value(spec: Any, field: str, value: Any) -> Any:
    """A value as the idempotency table keeps it (to tell a reused key from a repeat)."""
    if value is None or field not in spec.codec.types:
        return repr(value)
    try:
        return spec.codec.to_json(field, value)
    except TypeError:  # the event refuses it
        return repr(value)


# json.dumps with options builds an encoder on every call: the store's two, built once.
encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
encode_sorted = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True).encode

