"""One exception hierarchy for the compiler and the code it generates.

`StatechartError` is the base of every error this project raises on purpose: the compiler's
(a spec that cannot be built, a diagram that cannot be laid out) and a run's (a record that is
refused, an event the run does not accept now). A generated module subclasses the run errors
per spec (`AgentRunInvalidRecord` is an `InvalidRecord`), so callers can catch either.

This module needs only the standard library, so the compiler can import it cheaply.
`statechart_runtime.run.EventNotAccepted` (an event the run refuses) is a `RunError` too; it
lives there because it also subclasses python-statemachine's `TransitionNotAllowed`.
"""

from __future__ import annotations


class StatechartError(Exception):
    """Base of every error raised on purpose by the compiler or a generated module."""


class RunError(StatechartError):
    """Something a run refused: a bad record, an event it cannot take now, a missing value."""


class FieldProblem(RunError):
    """A problem with one value; `field` names it (a JSON key, `history[3].values.reason`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:  # picklable: it crosses process boundaries
        return (type(self), (self.field, self.message))


class InvalidRecord(FieldProblem, ValueError):
    """A run record that this spec could not have produced; `field` is the JSON key at fault."""


class MissingField(FieldProblem, ValueError):
    """A value a transition sets, or a state requires, was not given."""


class LimitExceeded(RunError, RuntimeError):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""

    def __init__(self, state: str, limit: int) -> None:
        super().__init__(f"state `{state}` may be entered at most {limit} times per run")
        self.state = state
        self.limit = limit

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.state, self.limit))


class MacrostepLoop(RunError, RuntimeError):
    """A `send` (or a timer, or a new run) whose eventless (`always:`) and completion
    (`done:`) transitions kept being enabled: after `steps` of them in one macrostep the run
    stops trying (`statechart_runtime.kernel.MAX_MICROSTEPS`). Nothing of it was applied: the
    run is as it was before (a new run is not created). `configuration` is where the loop
    was when it stopped. A guard of the loop must say no at some point."""

    def __init__(self, event: str, steps: int, configuration: tuple[str, ...]) -> None:
        super().__init__(
            f"event `{event}`: the run took {steps} eventless and completion steps without "
            f"coming to rest (last in {', '.join(configuration)}); nothing was applied. A loop "
            "of `always:` (or `done:`) transitions whose guards keep saying yes: make one of "
            "them say no, or take the loop out of the spec")
        self.event = event
        self.steps = steps
        self.configuration = configuration

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.event, self.steps, self.configuration))


class PathMismatch(RunError, AssertionError):
    """A run driven along a path (`statechart_runtime.testing.follow`) did not do what the
    path says: `step` is its index (0: before the first step), and the message names what
    differs. An AssertionError too, so pytest reports it as a failed check."""

    def __init__(self, step: int, message: str) -> None:
        super().__init__(f"step {step}: {message}")
        self.step = step
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.step, self.message))


class ConcurrentUpdate(RunError):
    """A run store refused to save a run: the stored run changed (another process saved it)
    since this copy was loaded. Load it again and redo the work (`store.fire` does)."""

    def __init__(self, run_id: str, expected: int, found: int) -> None:
        super().__init__(f"run {run_id!r} was saved by someone else since it was loaded "
                         f"(loaded at revision {expected}, stored revision is {found})")
        self.run_id = run_id
        self.expected = expected
        self.found = found

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.run_id, self.expected, self.found))


class StoreError(StatechartError):
    """A run store could not do what was asked: an unknown or unsupported URL, a run that is
    not there (`RunNotFound`) or is already there (`RunIdTaken`), an idempotency key reused
    for another event, and the subclasses below (docs/runs.md, "Errors"). A store object
    stays usable after any of them."""


class RunIdTaken(StoreError):
    """`create` of a run whose id the store already holds (stored before, or by another
    process at the same moment). Load that run, or create the new one with another id."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} is already in the store: load it "
                         "(store.load / store.fire), or give the new run another id")
        self.run_id = run_id

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.run_id,))


class UnstorableValue(StoreError, ValueError):
    """A value the database cannot hold (a string with a lone surrogate or, on PostgreSQL, a
    NUL character; a run id too long for the index): nothing was stored. Change the value."""


class StoreFull(StoreError):
    """The database has no room left (a full disk, a size limit): nothing of the call was
    stored. Free space (or raise the limit), then repeat the call."""


class OutcomeUnknown(StoreError):
    """The connection was lost while a change was being committed: it may or may not have
    been stored. Load the run to see; fire with an `idempotency_key` to make repeats safe."""


class StoreUnavailable(StoreError):
    """The database could not be reached (within the store's `timeout`): nothing was done.
    Repeat the call once the server is back; the store object reconnects by itself."""


class PoolExhausted(StoreUnavailable):
    """An async store's pool had no free connection within its timeout (every connection
    busy with other tasks' calls): nothing of the call was done. Repeat it, give the store a
    larger pool (`open_async_store(..., pool_size=N)`), or run fewer calls at once."""


class SchemaProblem(StoreError):
    """The store's own schema cannot be used: written by a newer runtime (upgrade
    statechart-runtime), by a development version, or its version row is missing or
    damaged (the message says how to repair it)."""


class ReadOnlyStore(StoreError):
    """A change asked of a store opened with `read_only=True`, or a read-only store whose
    schema would first need upgrading. Open it writable (`read_only=False`)."""


class RunNotFound(StoreError, LookupError):
    """The store holds no run with this id."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {run_id!r} in the store")
        self.run_id = run_id

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.run_id,))


class TimerFailed(StoreError):
    """`fire_next_due` claimed the run `run_id` but could not fire its due timers: a timer's
    action raised, the stored run cannot be read, or its write was refused (the original
    exception is `__cause__`). The transaction was rolled back and the run stays due; pass
    its id in `skip=` to go on with the other runs (the worker does), and fix the cause."""

    def __init__(self, run_id: str, cause: str) -> None:
        super().__init__(f"run {run_id!r}: its due timers could not be fired ({cause}); "
                         "nothing was saved and the run stays due: fix the cause, and skip "
                         "the run meanwhile (fire_next_due(..., skip=[run_id]))")
        self.run_id = run_id
        self.cause = cause

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.run_id, self.cause))


class LeaseLost(StoreError):
    """A work item's outcome, failure or heartbeat came from a claim that no longer holds the
    item: its lease expired (another worker may have claimed it since, with a new fencing
    token) or it was released. Nothing was applied: a worker presumed dead never applies a
    second outcome. Stop working on the item (its new holder, or the next claim, runs it)."""

    def __init__(self, item_key: str, why: str) -> None:
        super().__init__(f"work item {item_key!r}: {why}; nothing was applied: stop working "
                         "on it (the item's new holder, or the next claim, runs it)")
        self.item_key = item_key
        self.why = why

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.item_key, self.why))


class WorkEnded(LeaseLost):
    """The work item ended (its state was left: an outcome was applied, a cancel, a
    deadline; or its attempts were used up) before this claim's call: nothing was applied.
    Also a LeaseLost: a worker stops working on the item either way."""


class OutcomeNotAllowed(StoreError, ValueError):
    """A work item's outcome names an event that is not among its state's work `outcomes`
    (nor its `error` event): nothing was applied and the claim still holds the item. Return
    one of the events the message lists, or fail the attempt (`fail_work`)."""


class BadPosition(StoreError, ValueError):
    """`store.watch` was given a position no `Change` gave (nor `BEGINNING`): pass a
    Change's `position` as it was, or none to watch from now. Nothing was read."""


class DamagedRow(StoreError):
    """A column of run `run_id`'s row holds a value the store cannot have written (edited by
    hand, or damaged): `column` names it (`runs.next_due`). Nothing was changed; the message
    says how to repair it. A worker skips the run meanwhile."""

    def __init__(self, run_id: str, column: str, problem: str) -> None:
        super().__init__(f"run {run_id!r}: the stored {column} {problem}; repair the row "
                         f"(a time is UTC text such as '2025-05-01T12:00:00.000000Z'), or "
                         "restore the run from a backup")
        self.run_id = run_id
        self.column = column
        self.problem = problem

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.run_id, self.column, self.problem))


class UnknownName(StoreError, ValueError):
    """`find` was given a state or status its run class's spec version does not have (an
    older version's name, a typo). The message says what it is called now, if a migration
    renamed it. Also a ValueError, as it was before it had a type of its own."""


class AuthConfigError(StatechartError, ValueError):
    """The run console's authentication is configured wrongly (statechart_runtime.console:
    no users given, users in a form that cannot be read: `name:password,...`)."""


class RuntimeVersionError(StatechartError, ImportError):
    """A generated module was built for a runtime this installation does not provide."""


class CoverageError(StatechartError):
    """Spec coverage (`pytest --statechart-cov`) cannot do what was asked: a report option
    that is not `FORMAT:PATH` with a known format, or a report that cannot be written."""
