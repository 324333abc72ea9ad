# Generated from specs/support_run.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: a6007f82b146daa31e445df7eeda29a0903c1f0b296b6dd5711377276fac58c3
# Regenerate with: statechart build
"""The `support_run` statechart, version 1: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'support_run'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = 'a6007f82b146daa31e445df7eeda29a0903c1f0b296b6dd5711377276fac58c3'
DESCRIPTION: _Final = (
    'The agent run lifecycle of the support team: a running '
    'agent may escalate a ticket to a human, who hands it back '
    'or closes it.'
)


class SupportRunState(enum.Enum):
    """Every state, nested ones included, in document order."""

    created = 'created'
    triaging = 'triaging'
    running = 'running'
    reasoning = 'reasoning'
    tool_call = 'tool_call'
    interrupted = 'interrupted'
    suspended = 'suspended'
    waiting_for_approval = 'waiting_for_approval'
    waiting_for_input = 'waiting_for_input'
    resumed = 'resumed'
    retrying = 'retrying'
    completed = 'completed'
    failed = 'failed'
    timed_out = 'timed_out'
    cancelled = 'cancelled'
    escalated = 'escalated'


class SupportRunEvent(enum.Enum):
    """Every event, in order of first use."""

    triage = 'triage'
    cancel = 'cancel'
    start = 'start'
    reject = 'reject'
    interrupt = 'interrupt'
    error = 'error'
    complete = 'complete'
    fail = 'fail'
    escalate = 'escalate'
    call_tool = 'call_tool'
    tool_output = 'tool_output'
    tool_result = 'tool_result'
    await_approval = 'await_approval'
    await_input = 'await_input'
    resume = 'resume'
    approve = 'approve'
    deny = 'deny'
    after_approvalDeadline_waiting_for_approval = 'after.approvalDeadline.waiting_for_approval'
    provide_input = 'provide_input'
    after_delay1_waiting_for_input = 'after.delay1.waiting_for_input'
    proceed = 'proceed'
    give_up = 'give_up'
    after_retryAt_retrying = 'after.retryAt.retrying'
    hand_back = 'hand_back'
    close = 'close'


class SupportRunStatus(enum.Enum):
    """The status a record reports (the spec's `status:` names, and top-level states)."""

    created = 'created'
    triaging = 'triaging'
    running = 'running'
    interrupted = 'interrupted'
    waiting = 'waiting'
    resumed = 'resumed'
    retrying = 'retrying'
    completed = 'completed'
    failed = 'failed'
    cancelled = 'cancelled'
    escalated = 'escalated'


class SupportRunInterruptReason(enum.Enum):
    'The values of the record field `interruptReason`.'

    approval = 'approval'
    human_review = 'human_review'
    external_input = 'external_input'
    risky_tool = 'risky_tool'


class SupportRunRetryChange(enum.Enum):
    'The values of the record field `retryChange`.'

    model = 'model'
    tool = 'tool'
    parameters = 'parameters'
    nothing = 'nothing'


STATE_DESCRIPTIONS: _Final[_Mapping[SupportRunState, str]] = {
    SupportRunState.created: 'The run exists; nothing has been decided yet.',
    SupportRunState.triaging: 'Deciding whether and how to run the task.',
    SupportRunState.running: 'The agent is working.',
    SupportRunState.reasoning: 'The model is thinking about the next step.',
    SupportRunState.tool_call: 'A tool call is in flight.',
    SupportRunState.interrupted: (
        'Paused and persisted. Waiting for approval or input '
        'happens inside this state, so leaving it is always one '
        'of resume (after the approval or input came back), '
        'cancel, fail or a missed deadline.'
    ),
    SupportRunState.suspended: 'Paused; nobody has been asked for anything yet.',
    SupportRunState.waiting_for_approval: (
        'A human must approve a risky step before the deadline.'
    ),
    SupportRunState.waiting_for_input: (
        'The run needs input from a human or an external system '
        'within a day.'
    ),
    SupportRunState.resumed: (
        'Restored from an interruption with what came back, about'
        ' to continue.'
    ),
    SupportRunState.retrying: (
        'Waiting (backoff) before another attempt; the attempt '
        'count, the reason and what changes are kept.'
    ),
    SupportRunState.completed: 'The run finished its task.',
    SupportRunState.failed: (
        'The run ended in failure. Terminal: a failed run is '
        'never replayed in place; a replay is a new run with a '
        'new runId.'
    ),
    SupportRunState.timed_out: 'Nobody answered a wait before its deadline; the run failed.',
    SupportRunState.cancelled: 'The run was stopped on purpose.',
    SupportRunState.escalated: 'A human owns the ticket; the agent waits.',
}


EVENT_DESCRIPTIONS: _Final[_Mapping[SupportRunEvent, str]] = {
    SupportRunEvent.interrupt: 'Pause the run; it is persisted and resumes where it stopped.',
    SupportRunEvent.tool_output: "The tool's output came back (the call_tool handler's outcome).",
    SupportRunEvent.tool_result: (
        'The tool call ended, its output kept elsewhere (version '
        "2's event, kept for its callers and stored runs; the "
        "work's outcome is tool_output)."
    ),
    SupportRunEvent.proceed: 'Back to the execution point the run was interrupted at.',
}


class SupportRunInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class SupportRunLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class SupportRunMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_Json: _TypeAlias = _api.JsonData
_SupportRunState: _TypeAlias = SupportRunState
_SupportRunStatus: _TypeAlias = SupportRunStatus
_SupportRunInterruptReason: _TypeAlias = SupportRunInterruptReason
_SupportRunRetryChange: _TypeAlias = SupportRunRetryChange

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('created', None, 'atomic', None),
        ('triaging', None, 'atomic', None),
        ('running', None, 'compound', 'reasoning'),
        ('reasoning', 'running', 'atomic', None),
        ('tool_call', 'running', 'atomic', None),
        ('interrupted', None, 'compound', 'suspended'),
        ('suspended', 'interrupted', 'atomic', None),
        ('waiting_for_approval', 'interrupted', 'atomic', None),
        ('waiting_for_input', 'interrupted', 'atomic', None),
        ('resumed', None, 'atomic', None),
        ('retrying', None, 'atomic', None),
        ('completed', None, 'final', None),
        ('failed', None, 'final', None),
        ('timed_out', None, 'final', None),
        ('cancelled', None, 'final', None),
        ('escalated', None, 'atomic', None),
    ),
    initial='created',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('created', 'triage', 'triaging', ()),
        ('created', 'cancel', 'cancelled', ('cancelReason',)),
        ('triaging', 'start', 'running', ()),
        ('triaging', 'reject', 'failed', ('failureType',)),
        ('triaging', 'cancel', 'cancelled', ('cancelReason',)),
        ('running', 'interrupt', 'interrupted', ('interruptReason',)),
        ('running', 'error', 'retrying', ('retryReason', 'retryChange', 'retryAt'), {'guard': 'can_retry'}),
        ('running', 'error', 'failed', (), {'guard': 'can_retry', 'assigns': {'failureType': 'retries_exhausted'}}),
        ('running', 'error', 'failed', ('failureType',)),
        ('running', 'complete', 'completed', ()),
        ('running', 'fail', 'failed', ('failureType',)),
        ('running', 'cancel', 'cancelled', ('cancelReason',)),
        ('running', 'escalate', 'escalated', ('escalationTicket',)),
        ('reasoning', 'call_tool', 'tool_call', ('toolCallId',)),
        ('tool_call', 'tool_output', 'reasoning', ('toolOutput',)),
        ('tool_call', 'tool_result', 'reasoning', ()),
        ('interrupted', 'cancel', 'cancelled', ('cancelReason',)),
        ('interrupted', 'fail', 'failed', ('failureType',)),
        ('suspended', 'await_approval', 'waiting_for_approval', ('approvalId', 'approvalDeadline')),
        ('suspended', 'await_input', 'waiting_for_input', ()),
        ('suspended', 'resume', 'resumed', ()),
        ('waiting_for_approval', 'approve', 'resumed', ('approvedBy',)),
        ('waiting_for_approval', 'deny', 'cancelled', ('cancelReason',)),
        ('waiting_for_approval', 'after.approvalDeadline.waiting_for_approval', 'timed_out', ()),
        ('waiting_for_input', 'provide_input', 'resumed', ('humanInput',)),
        ('waiting_for_input', 'after.delay1.waiting_for_input', 'timed_out', ()),
        ('resumed', 'proceed', 'running', (), {'kind': 'deep'}),
        ('resumed', 'cancel', 'cancelled', ('cancelReason',)),
        ('retrying', 'give_up', 'failed', ('failureType',)),
        ('retrying', 'cancel', 'cancelled', ('cancelReason',)),
        ('retrying', 'after.retryAt.retrying', 'running', ()),
        ('escalated', 'hand_back', 'resumed', ()),
        ('escalated', 'close', 'completed', ()),
        ('escalated', 'cancel', 'cancelled', ('cancelReason',)),
    ),
    state_enum=SupportRunState,
    event_enum=SupportRunEvent,
    fields={
        'threadId': 'string',
        'sessionId': 'string',
        'toolCallId': 'string',
        'toolOutput': 'json',
        'approvalId': 'string',
        'interruptReason': SupportRunInterruptReason,
        'approvalDeadline': 'datetime',
        'approvedBy': 'string',
        'humanInput': 'string',
        'retryReason': 'string',
        'retryChange': SupportRunRetryChange,
        'retryAt': 'datetime',
        'failureType': 'string',
        'cancelReason': 'string',
        'escalationTicket': 'string',
    },
    limits={'retrying': 3},
    requires={
        'tool_call': ('toolCallId',),
        'interrupted': ('interruptReason',),
        'waiting_for_approval': ('approvalId', 'approvalDeadline'),
        'retrying': ('retryReason', 'retryAt'),
        'failed': ('failureType',),
        'cancelled': ('cancelReason',),
        'escalated': ('escalationTicket',),
    },
    tags={
        'active': ('running',),
        'paused': ('interrupted', 'escalated'),
        'terminal': ('completed', 'failed', 'timed_out', 'cancelled'),
    },
    errors=(SupportRunInvalidRecord, SupportRunLimitExceeded, SupportRunMissingField),
    # (state, event, delay in ms, or the datetime field of a deadline, `after:` key as written)
    timers=(
        ('waiting_for_approval', 'after.approvalDeadline.waiting_for_approval', None, 'approvalDeadline', 'approvalDeadline'),
        ('waiting_for_input', 'after.delay1.waiting_for_input', 86400000, None, '24h'),
        ('retrying', 'after.retryAt.retrying', None, 'retryAt', 'retryAt'),
    ),
    # history target.kind -> the machine's HistoryState
    history_ids={
        'running.deep': '_sc_h_deep_running',
    },
    context=('threadId', 'sessionId', 'toolCallId', 'approvalId', 'approvalDeadline',),
    # (source, event, target) -> fields the transition clears
    clears={
        ('tool_call', 'tool_output', 'reasoning'): ('toolCallId',),
        ('tool_call', 'tool_result', 'reasoning'): ('toolCallId',),
    },
    exit_clears={
        'interrupted': ('interruptReason',),
        'waiting_for_approval': ('approvalId',),
    },
    statuses={
        'waiting_for_approval': 'waiting',
        'waiting_for_input': 'waiting',
        'timed_out': 'failed',
    },
    status_enum=SupportRunStatus,
    counters={'retryCount': 'retrying'},
)

# Work (docs/spec-format.md "Work"; statechart_runtime.chart.work.work_of): (state, handler,
# timeout in ms, heartbeat in ms or None, outcome events, error event or None, retries,
# backoff in ms)
_WORK: _Final = _api.WorkTable((
    ('reasoning', 'reason', 120000, 30000, ('call_tool', 'complete', 'interrupt'), 'error', 2, 2000),
    ('tool_call', 'call_tool', 300000, 30000, ('tool_output',), 'error', 2, 1000),
))

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('specs/agent_run.yaml', 'specs/support_run.yaml'),
    'states': {
        'created': (0, 64),
        'triaging': (0, 70),
        'running': (0, 77),
        'reasoning': (0, 82),
        'tool_call': (0, 93),
        'interrupted': (0, 129),
        'suspended': (0, 139),
        'waiting_for_approval': (0, 145),
        'waiting_for_input': (0, 155),
        'resumed': (0, 166),
        'retrying': (0, 175),
        'completed': (0, 188),
        'failed': (0, 193),
        'timed_out': (0, 201),
        'cancelled': (0, 207),
        'escalated': (1, 23),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('created', 'triage', 0): (0, 67, None),
        ('created', 'cancel', 0): (0, 68, None),
        ('triaging', 'start', 0): (0, 73, None),
        ('triaging', 'reject', 0): (0, 74, None),
        ('triaging', 'cancel', 0): (0, 75, None),
        ('running', 'interrupt', 0): (0, 117, None),
        ('running', 'error', 0): (0, 121, 121),
        ('running', 'error', 1): (0, 123, 123),
        ('running', 'error', 2): (0, 124, None),
        ('running', 'complete', 0): (0, 125, None),
        ('running', 'fail', 0): (0, 126, None),
        ('running', 'cancel', 0): (0, 127, None),
        ('running', 'escalate', 0): (1, 19, None),
        ('reasoning', 'call_tool', 0): (0, 92, None),
        ('tool_call', 'tool_output', 0): (0, 105, None),
        ('tool_call', 'tool_result', 0): (0, 110, None),
        ('interrupted', 'cancel', 0): (0, 163, None),
        ('interrupted', 'fail', 0): (0, 164, None),
        ('suspended', 'await_approval', 0): (0, 142, None),
        ('suspended', 'await_input', 0): (0, 143, None),
        ('suspended', 'resume', 0): (0, 144, None),
        ('waiting_for_approval', 'approve', 0): (0, 153, None),
        ('waiting_for_approval', 'deny', 0): (0, 154, None),
        ('waiting_for_approval', 'after.approvalDeadline.waiting_for_approval', 0): (0, 151, None),
        ('waiting_for_input', 'provide_input', 0): (0, 161, None),
        ('waiting_for_input', 'after.delay1.waiting_for_input', 0): (0, 159, None),
        ('resumed', 'proceed', 0): (0, 170, None),
        ('resumed', 'cancel', 0): (0, 173, None),
        ('retrying', 'give_up', 0): (0, 185, None),
        ('retrying', 'cancel', 0): (0, 186, None),
        ('retrying', 'after.retryAt.retrying', 0): (0, 183, None),
        ('escalated', 'hand_back', 0): (1, 28, None),
        ('escalated', 'close', 0): (1, 29, None),
        ('escalated', 'cancel', 0): (1, 30, None),
    },
}


class SupportRunStep(_api.Step[SupportRunEvent, SupportRunState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class SupportRunRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = SupportRunStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _SupportRunStatus = _SupportRunStatus.created
    configuration: list[_SupportRunState] = _field(
        default_factory=lambda: [SupportRunState.created])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[SupportRunStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    createdAt: _DateTime = _field(default_factory=_api.utcnow)
    timers: list[_api.Timer[_SupportRunState, SupportRunEvent]] = _field(default_factory=list)
    # History targets -> the states active under them when last left.
    remembered: dict[_Str, tuple[_Str, ...]] = _field(default_factory=dict)
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    threadId: _Str | None = _field(default=None, metadata={
        "description": 'The conversation thread the run belongs to.'})
    sessionId: _Str | None = _field(default=None, metadata={
        "description": 'The session the run belongs to.'})
    toolCallId: _Str | None = _field(default=None, metadata={
        "description": (
            'The tool call in flight: set by call_tool, cleared '
            'when its result comes back (an interrupted call keeps'
            ' it, and a resumed run returns to it).'
        )})
    toolOutput: _Json | None = _field(default=None, metadata={
        "description": (
            'What the last tool call returned (any JSON value), '
            'stored by the tool_output step that consumes it, so '
            'the result and the transition are written together.'
        )})
    approvalId: _Str | None = _field(default=None, metadata={
        "description": 'The approval request a human must answer; cleared when the wait ends.'})
    interruptReason: _SupportRunInterruptReason | None = _field(default=None, metadata={
        "description": 'Why the run was interrupted.'})
    approvalDeadline: _DateTime | None = _field(default=None, metadata={
        "description": 'When an unanswered approval request expires (set with the approval id).'})
    approvedBy: _Str | None = _field(default=None, metadata={
        "description": 'Who approved the risky step (what came back from the approval).'})
    humanInput: _Str | None = _field(default=None, metadata={
        "description": 'The input a human provided while the run waited for it.'})
    retryReason: _Str | None = _field(default=None, metadata={
        "description": 'Why the last retry was started (kept across the retry).'})
    retryChange: _SupportRunRetryChange | None = _field(default=None, metadata={
        "description": 'What the retry changes compared with the failed attempt.'})
    retryAt: _DateTime | None = _field(default=None, metadata={
        "description": 'When the next attempt starts (the backoff chosen by the application).'})
    failureType: _Str | None = _field(default=None, metadata={
        "description": 'The kind of failure that ended the run.'})
    cancelReason: _Str | None = _field(default=None, metadata={
        "description": 'Who or what cancelled the run.'})
    escalationTicket: _Str | None = _field(default=None, metadata={
        "description": 'The ticket a human works on while the run is escalated.'})
    retryCount = _api.Counter('retrying')  # how many times it was entered (read-only)


check_record: _Final = _api.record_checker(SupportRunRecord)


class SupportRunMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `SupportRun`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    created = _api.State(initial=True)
    triaging = _api.State()

    class running(_api.State.Compound):
        reasoning = _api.State(initial=True)
        tool_call = _api.State()
        _sc_h_deep_running = _api.HistoryState(type='deep')

    class interrupted(_api.State.Compound):
        suspended = _api.State(initial=True)
        waiting_for_approval = _api.State()
        waiting_for_input = _api.State()
    resumed = _api.State()
    retrying = _api.State()
    completed = _api.State(final=True)
    failed = _api.State(final=True)
    timed_out = _api.State(final=True)
    cancelled = _api.State(final=True)
    escalated = _api.State()

    created.to(triaging, event='triage')
    created.to(cancelled, event='cancel')
    triaging.to(running, event='start')
    triaging.to(failed, event='reject')
    triaging.to(cancelled, event='cancel')
    running.to(interrupted, event='interrupt')
    running.to(retrying, event='error', cond='can_retry')
    running.to(failed, event='error', cond='can_retry')
    running.to(failed, event='error')
    running.to(completed, event='complete')
    running.to(failed, event='fail')
    running.to(cancelled, event='cancel')
    running.to(escalated, event='escalate')
    running.reasoning.to(running.tool_call, event='call_tool')
    running.tool_call.to(running.reasoning, event='tool_output')
    running.tool_call.to(running.reasoning, event='tool_result')
    interrupted.to(cancelled, event='cancel')
    interrupted.to(failed, event='fail')
    interrupted.suspended.to(interrupted.waiting_for_approval, event='await_approval')
    interrupted.suspended.to(interrupted.waiting_for_input, event='await_input')
    interrupted.suspended.to(resumed, event='resume')
    interrupted.waiting_for_approval.to(resumed, event='approve')
    interrupted.waiting_for_approval.to(cancelled, event='deny')
    interrupted.waiting_for_approval.to(timed_out, event='_sc_after_approvalDeadline_waiting_for_approval')
    interrupted.waiting_for_input.to(resumed, event='provide_input')
    interrupted.waiting_for_input.to(timed_out, event='_sc_after_delay1_waiting_for_input')
    resumed.to(running._sc_h_deep_running, event='proceed')
    resumed.to(cancelled, event='cancel')
    retrying.to(failed, event='give_up')
    retrying.to(cancelled, event='cancel')
    retrying.to(running, event='_sc_after_retryAt_retrying')
    escalated.to(resumed, event='hand_back')
    escalated.to(completed, event='close')
    escalated.to(cancelled, event='cancel')
    running._sc_h_deep_running.to(running.reasoning)  # entered when there is nothing to remember yet


class SupportRunContext(_TypedDict, total=False):
    """The run context: keywords of `SupportRun(...)` and `update(...)`; None unsets."""

    threadId: _Str | None
    sessionId: _Str | None
    toolCallId: _Str | None
    approvalId: _Str | None
    approvalDeadline: _DateTime | None


class SupportRun(_api.Run[SupportRunRecord, SupportRunState, SupportRunEvent]):
    """One run of `support_run`: a method per event, the record in `record`, guards and actions
    to override."""

    _sc_spec = _SPEC
    _sc_record = SupportRunRecord
    _sc_machine = SupportRunMachine
    _sc_source = _SOURCE
    _sc_work = _WORK

    def __init__(self, record: SupportRunRecord | None = None, *, run_id: _Str | None = None,
                 model: object = None, clock: _api.Clock | None = None, check: _Bool = True,
                 **context: _Unpack[SupportRunContext]) -> None:
        super().__init__(record, run_id=run_id, model=model, clock=clock, check=check,
                         **context)

    def update(self, **context: _Unpack[SupportRunContext]) -> None:
        """Set run-context fields (None unsets one): not a transition, no history entry."""
        self._update(dict(context))

    @property
    def status(self) -> SupportRunStatus:  # type: ignore[override]
        """The status the record reports (the spec's `status:` vocabulary)."""
        return self.record.status

    def triage(self) -> None:
        """Moves: created -> triaging."""
        self._fire('triage', None)

    def cancel(self, *, cancelReason: _Str) -> None:
        """Moves: created -> cancelled, escalated -> cancelled, interrupted -> cancelled, resumed
        -> cancelled, retrying -> cancelled, running -> cancelled, triaging -> cancelled."""
        self._fire('cancel', {'cancelReason': cancelReason})

    def start(self) -> None:
        """Moves: triaging -> running."""
        self._fire('start', None)

    def reject(self, *, failureType: _Str) -> None:
        """Moves: triaging -> failed."""
        self._fire('reject', {'failureType': failureType})

    def interrupt(self, *, interruptReason: _SupportRunInterruptReason) -> None:
        """Moves: running -> interrupted."""
        self._fire('interrupt', {'interruptReason': interruptReason})

    def error(self, *, retryReason: _Str | None = None, retryChange: _SupportRunRetryChange | None = None, retryAt: _DateTime | None = None, failureType: _Str | None = None) -> None:
        """Moves: running -> failed, running -> retrying."""
        self._fire('error', {'retryReason': retryReason, 'retryChange': retryChange, 'retryAt': retryAt, 'failureType': failureType})

    def complete(self) -> None:
        """Moves: running -> completed."""
        self._fire('complete', None)

    def fail(self, *, failureType: _Str) -> None:
        """Moves: interrupted -> failed, running -> failed."""
        self._fire('fail', {'failureType': failureType})

    def escalate(self, *, escalationTicket: _Str) -> None:
        """Moves: running -> escalated."""
        self._fire('escalate', {'escalationTicket': escalationTicket})

    def call_tool(self, *, toolCallId: _Str) -> None:
        """Moves: reasoning -> tool_call."""
        self._fire('call_tool', {'toolCallId': toolCallId})

    def tool_output(self, *, toolOutput: _Json) -> None:
        """Moves: tool_call -> reasoning."""
        self._fire('tool_output', {'toolOutput': toolOutput})

    def tool_result(self) -> None:
        """Moves: tool_call -> reasoning."""
        self._fire('tool_result', None)

    def await_approval(self, *, approvalId: _Str, approvalDeadline: _DateTime) -> None:
        """Moves: suspended -> waiting_for_approval."""
        self._fire('await_approval', {'approvalId': approvalId, 'approvalDeadline': approvalDeadline})

    def await_input(self) -> None:
        """Moves: suspended -> waiting_for_input."""
        self._fire('await_input', None)

    def resume(self) -> None:
        """Moves: suspended -> resumed."""
        self._fire('resume', None)

    def approve(self, *, approvedBy: _Str) -> None:
        """Moves: waiting_for_approval -> resumed."""
        self._fire('approve', {'approvedBy': approvedBy})

    def deny(self, *, cancelReason: _Str) -> None:
        """Moves: waiting_for_approval -> cancelled."""
        self._fire('deny', {'cancelReason': cancelReason})

    def provide_input(self, *, humanInput: _Str) -> None:
        """Moves: waiting_for_input -> resumed."""
        self._fire('provide_input', {'humanInput': humanInput})

    def proceed(self) -> None:
        """Moves: resumed -> running."""
        self._fire('proceed', None)

    def give_up(self, *, failureType: _Str) -> None:
        """Moves: retrying -> failed."""
        self._fire('give_up', {'failureType': failureType})

    def hand_back(self) -> None:
        """Moves: escalated -> resumed."""
        self._fire('hand_back', None)

    def close(self) -> None:
        """Moves: escalated -> completed."""
        self._fire('close', None)

    def can_retry(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True
