# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 147138d633d0932ce91ef8f62e594ab5b59f2a51300088a289ba89c667b9d29d
# Regenerate with: statechart build
"""The `ctx_run` statechart, version 2: a typed python-statemachine class and its run record.
Generated; see DESCRIPTION for the spec's own words."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
from collections.abc import Mapping as _Mapping
from dataclasses import field as _field
from typing import Final as _Final
from typing import TypeAlias as _TypeAlias
from typing import TypedDict as _TypedDict
from typing import Unpack as _Unpack

try:
    import statechart_runtime as _rt
    from statechart_runtime import api as _api
except ImportError as _error:  # an application that runs this module needs only the runtime
    raise ImportError(f"{__name__} needs the statechart-runtime package: "
                      "pip install 'statechart-runtime @ git+https://github.com/statechart-compiler/statechart-compiler#subdirectory=runtime'") from _error
_rt.check_api((1, 7), __name__, 'statechart-compiler 0.2.0')

SPEC_NAME: _Final = 'ctx_run'
SPEC_VERSION: _Final = 2
SPEC_SHA256: _Final = '147138d633d0932ce91ef8f62e594ab5b59f2a51300088a289ba89c667b9d29d'
DESCRIPTION: _Final = 'Run context, clear, defaults, a status vocabulary and a counter.'


class CtxRunState(enum.Enum):
    """Every state, nested ones included, in document order."""

    created = 'created'
    running = 'running'
    interrupted = 'interrupted'
    suspended = 'suspended'
    waiting_for_approval = 'waiting_for_approval'
    retrying = 'retrying'
    completed = 'completed'


class CtxRunEvent(enum.Enum):
    """Every event, in order of first use."""

    start = 'start'
    update = 'update'
    interrupt = 'interrupt'
    error = 'error'
    finish = 'finish'
    bump = 'bump'
    ask = 'ask'
    approve = 'approve'
    retry = 'retry'


class CtxRunStatus(enum.Enum):
    """The status a record reports (the spec's `status:` names, and top-level states)."""

    created = 'created'
    running = 'running'
    interrupted = 'interrupted'
    waiting = 'waiting'
    retrying = 'retrying'
    completed = 'completed'


class CtxRunPriority(enum.Enum):
    'The values of the record field `priority`.'

    low = 'low'
    normal = 'normal'
    high = 'high'


STATE_DESCRIPTIONS: _Final[_Mapping[CtxRunState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[CtxRunEvent, str]] = {
}


class CtxRunInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class CtxRunLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class CtxRunMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Float: _TypeAlias = float
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_CtxRunState: _TypeAlias = CtxRunState
_CtxRunStatus: _TypeAlias = CtxRunStatus
_CtxRunPriority: _TypeAlias = CtxRunPriority

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('created', None, 'atomic', None),
        ('running', None, 'atomic', None),
        ('interrupted', None, 'compound', 'suspended'),
        ('suspended', 'interrupted', 'atomic', None),
        ('waiting_for_approval', 'interrupted', 'atomic', None),
        ('retrying', None, 'atomic', None),
        ('completed', None, 'final', None),
    ),
    initial='created',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('created', 'start', 'running', ()),
        ('created', 'update', 'running', ()),
        ('running', 'interrupt', 'interrupted', ('interruptReason',)),
        ('running', 'error', 'retrying', ()),
        ('running', 'finish', 'completed', ()),
        ('running', 'bump', 'running', ('priority',)),
        ('suspended', 'ask', 'waiting_for_approval', ()),
        ('waiting_for_approval', 'approve', 'running', ()),
        ('retrying', 'retry', 'running', ()),
    ),
    state_enum=CtxRunState,
    event_enum=CtxRunEvent,
    fields={
        'threadId': 'string',
        'approvalId': 'string',
        'model': 'string',
        'priority': CtxRunPriority,
        'startedAt': 'datetime',
        'budget': 'number',
        'interruptReason': 'string',
    },
    limits={'retrying': 3},
    requires={
        'interrupted': ('interruptReason',),
        'waiting_for_approval': ('approvalId',),
    },
    # {version: (old state -> state, old field -> field or None)}
    migrations={
        1: ({}, {}),
    },
    errors=(CtxRunInvalidRecord, CtxRunLimitExceeded, CtxRunMissingField),
    # Names mapped in Python (docs/generated-code.md, "Names"): event -> machine event id
    event_ids={
        'update': 'event_update',
    },
    # record field -> attribute (its JSON key is the field's name)
    attrs={
        'model': 'field_model',
    },
    context=('threadId', 'approvalId', 'model', 'startedAt', 'budget',),
    defaults={'priority': 'normal', 'startedAt': '2024-01-01T00:00:00Z', 'budget': 2.5},
    # (source, event, target) -> fields the transition clears
    clears={
        ('running', 'finish', 'completed'): ('interruptReason',),
        ('waiting_for_approval', 'approve', 'running'): ('interruptReason',),
    },
    exit_clears={
        'waiting_for_approval': ('approvalId',),
    },
    fills={1: ('priority', 'budget')},
    statuses={
        'waiting_for_approval': 'waiting',
        'retrying': 'retrying',
    },
    status_enum=CtxRunStatus,
    counters={'retryCount': 'retrying'},
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'created': (0, 14),
        'running': (0, 18),
        'interrupted': (0, 24),
        'suspended': (0, 28),
        'waiting_for_approval': (0, 29),
        'retrying': (0, 34),
        'completed': (0, 39),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('created', 'start', 0): (0, 16, None),
        ('created', 'update', 0): (0, 17, None),
        ('running', 'interrupt', 0): (0, 20, None),
        ('running', 'error', 0): (0, 21, None),
        ('running', 'finish', 0): (0, 22, None),
        ('running', 'bump', 0): (0, 23, None),
        ('suspended', 'ask', 0): (0, 28, None),
        ('waiting_for_approval', 'approve', 0): (0, 33, None),
        ('retrying', 'retry', 0): (0, 38, None),
    },
}


class CtxRunStep(_api.Step[CtxRunEvent, CtxRunState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class CtxRunRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = CtxRunStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _CtxRunStatus = _CtxRunStatus.created
    configuration: list[_CtxRunState] = _field(
        default_factory=lambda: [CtxRunState.created])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[CtxRunStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    threadId: _Str | None = _field(default=None, metadata={
        "description": 'The conversation thread.'})
    approvalId: _Str | None = None
    field_model: _Str | None = None
    priority: _CtxRunPriority | None = _CtxRunPriority.normal
    startedAt: _DateTime | None = _field(
        default=_api.parse_time('startedAt', '2024-01-01T00:00:00Z'),
        metadata={"description": 'When.'})
    budget: _Float | None = 2.5
    interruptReason: _Str | None = None
    retryCount = _api.Counter('retrying')  # how many times it was entered (read-only)


check_record: _Final = _api.record_checker(CtxRunRecord)


class CtxRunMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `CtxRun`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    created = _api.State(initial=True)
    running = _api.State()

    class interrupted(_api.State.Compound):
        suspended = _api.State(initial=True)
        waiting_for_approval = _api.State()
    retrying = _api.State()
    completed = _api.State(final=True)

    created.to(running, event='start')
    created.to(running, event='event_update')
    running.to(interrupted, event='interrupt')
    running.to(retrying, event='error')
    running.to(completed, event='finish')
    running.to(running, event='bump')
    interrupted.suspended.to(interrupted.waiting_for_approval, event='ask')
    interrupted.waiting_for_approval.to(running, event='approve')
    retrying.to(running, event='retry')


class CtxRunContext(_TypedDict, total=False):
    """The run context: keywords of `CtxRun(...)` and `update(...)`; None unsets."""

    threadId: _Str | None
    approvalId: _Str | None
    field_model: _Str | None
    startedAt: _DateTime | None
    budget: _Float | None


class CtxRun(_api.Run[CtxRunRecord, CtxRunState, CtxRunEvent]):
    """One run of `ctx_run`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = CtxRunRecord
    _sc_machine = CtxRunMachine
    _sc_source = _SOURCE

    def __init__(self, record: CtxRunRecord | None = None, *, run_id: _Str | None = None,
                 model: object = None, clock: _api.Clock | None = None, check: _Bool = True,
                 **context: _Unpack[CtxRunContext]) -> None:
        super().__init__(record, run_id=run_id, model=model, clock=clock, check=check,
                         **context)

    def update(self, **context: _Unpack[CtxRunContext]) -> None:
        """Set run-context fields (None unsets one): not a transition, no history entry."""
        self._update(dict(context))

    @property
    def status(self) -> CtxRunStatus:  # type: ignore[override]
        """The status the record reports (the spec's `status:` vocabulary)."""
        return self.record.status

    def start(self) -> None:
        """Moves: created -> running."""
        self._fire('start', None)

    def event_update(self) -> None:
        """Moves: created -> running."""
        self._fire('update', None)

    def interrupt(self, *, interruptReason: _Str) -> None:
        """Moves: running -> interrupted."""
        self._fire('interrupt', {'interruptReason': interruptReason})

    def error(self) -> None:
        """Moves: running -> retrying."""
        self._fire('error', None)

    def finish(self) -> None:
        """Moves: running -> completed."""
        self._fire('finish', None)

    def bump(self, *, priority: _CtxRunPriority) -> None:
        """Moves: running -> running."""
        self._fire('bump', {'priority': priority})

    def ask(self) -> None:
        """Moves: suspended -> waiting_for_approval."""
        self._fire('ask', None)

    def approve(self) -> None:
        """Moves: waiting_for_approval -> running."""
        self._fire('approve', None)

    def retry(self) -> None:
        """Moves: retrying -> running."""
        self._fire('retry', None)
