# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 9f2c779fefa5576ad70cf2317a6b5cdd1c49c98f547e21afc6a288242778aa98
# Regenerate with: statechart build
"""The `approval` statechart, version 1: a typed python-statemachine class and its run record.
Generated; see DESCRIPTION for the spec's own words."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
from collections.abc import Mapping as _Mapping
from dataclasses import field as _field
from typing import Final as _Final
from typing import TypeAlias as _TypeAlias

try:
    import statechart_runtime as _rt
    from statechart_runtime import api as _api
except ImportError as _error:  # an application that runs this module needs only the runtime
    raise ImportError(f"{__name__} needs the statechart-runtime package: "
                      "pip install 'statechart-runtime @ git+https://github.com/statechart-compiler/statechart-compiler#subdirectory=runtime'") from _error
_rt.check_api((1, 7), __name__, 'statechart-compiler 0.2.0')

SPEC_NAME: _Final = 'approval'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '9f2c779fefa5576ad70cf2317a6b5cdd1c49c98f547e21afc6a288242778aa98'
DESCRIPTION: _Final = (
    'Timers on nested and parallel states, with a delay, an ISO'
    ' 8601 delay (named) and a deadline.'
)


class ApprovalState(enum.Enum):
    """Every state, nested ones included, in document order."""

    open = 'open'
    asking = 'asking'
    reminding = 'reminding'
    waiting = 'waiting'
    checks = 'checks'
    budget = 'budget'
    pending_budget = 'pending_budget'
    budget_ok = 'budget_ok'
    legal = 'legal'
    pending_legal = 'pending_legal'
    legal_ok = 'legal_ok'
    approved = 'approved'
    closed = 'closed'
    expired = 'expired'


class ApprovalEvent(enum.Enum):
    """Every event, in order of first use."""

    after_delay1_open = 'after.delay1.open'
    ask = 'ask'
    after_delay1_asking = 'after.delay1.asking'
    after_delay1_reminding = 'after.delay1.reminding'
    approve = 'approve'
    after_approvalDeadline_waiting = 'after.approvalDeadline.waiting'
    after_escalation_waiting = 'after.escalation.waiting'
    finish = 'finish'
    after_delay1_pending_budget = 'after.delay1.pending_budget'
    after_delay1_pending_legal = 'after.delay1.pending_legal'
    recheck = 'recheck'
    close = 'close'


STATE_DESCRIPTIONS: _Final[_Mapping[ApprovalState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[ApprovalEvent, str]] = {
}


class ApprovalInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class ApprovalLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class ApprovalMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_ApprovalState: _TypeAlias = ApprovalState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('open', None, 'compound', 'asking'),
        ('asking', 'open', 'atomic', None),
        ('reminding', 'open', 'atomic', None),
        ('waiting', 'open', 'atomic', None),
        ('checks', None, 'parallel', None),
        ('budget', 'checks', 'compound', 'pending_budget'),
        ('pending_budget', 'budget', 'atomic', None),
        ('budget_ok', 'budget', 'atomic', None),
        ('legal', 'checks', 'compound', 'pending_legal'),
        ('pending_legal', 'legal', 'atomic', None),
        ('legal_ok', 'legal', 'atomic', None),
        ('approved', None, 'atomic', None),
        ('closed', None, 'final', None),
        ('expired', None, 'final', None),
    ),
    initial='open',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('open', 'after.delay1.open', 'expired', ()),
        ('asking', 'ask', 'waiting', ('approvalDeadline',)),
        ('asking', 'after.delay1.asking', 'reminding', ()),
        ('reminding', 'after.delay1.reminding', 'asking', ()),
        ('waiting', 'approve', 'approved', ('approver',)),
        ('waiting', 'after.approvalDeadline.waiting', 'expired', ()),
        ('waiting', 'after.escalation.waiting', 'expired', (), {'guard': 'is_urgent'}),
        ('waiting', 'after.escalation.waiting', 'asking', ()),
        ('checks', 'finish', 'approved', ()),
        ('pending_budget', 'after.delay1.pending_budget', 'budget_ok', ()),
        ('pending_legal', 'after.delay1.pending_legal', 'legal_ok', ()),
        ('approved', 'recheck', 'checks', ()),
        ('approved', 'close', 'closed', ()),
    ),
    state_enum=ApprovalState,
    event_enum=ApprovalEvent,
    fields={
        'approvalDeadline': 'datetime',
        'approver': 'string',
    },
    errors=(ApprovalInvalidRecord, ApprovalLimitExceeded, ApprovalMissingField),
    # (state, event, delay in ms, or the datetime field of a deadline, `after:` key as written)
    timers=(
        ('open', 'after.delay1.open', 86400000, None, '1d'),
        ('asking', 'after.delay1.asking', 30000, None, '30s'),
        ('reminding', 'after.delay1.reminding', 500, None, '500ms'),
        ('waiting', 'after.approvalDeadline.waiting', None, 'approvalDeadline', 'approvalDeadline'),
        ('waiting', 'after.escalation.waiting', 3600000, None, 'PT1H'),
        ('pending_budget', 'after.delay1.pending_budget', 7200000, None, '2h'),
        ('pending_legal', 'after.delay1.pending_legal', 900000, None, '15m'),
    ),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'open': (0, 12),
        'asking': (0, 15),
        'reminding': (0, 20),
        'waiting': (0, 23),
        'checks': (0, 31),
        'budget': (0, 34),
        'pending_budget': (0, 37),
        'budget_ok': (0, 39),
        'legal': (0, 40),
        'pending_legal': (0, 43),
        'legal_ok': (0, 45),
        'approved': (0, 48),
        'closed': (0, 52),
        'expired': (0, 54),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('open', 'after.delay1.open', 0): (0, 30, None),
        ('asking', 'ask', 0): (0, 17, None),
        ('asking', 'after.delay1.asking', 0): (0, 19, None),
        ('reminding', 'after.delay1.reminding', 0): (0, 22, None),
        ('waiting', 'approve', 0): (0, 28, None),
        ('waiting', 'after.approvalDeadline.waiting', 0): (0, 25, None),
        ('waiting', 'after.escalation.waiting', 0): (0, 26, 26),
        ('waiting', 'after.escalation.waiting', 1): (0, 26, None),
        ('checks', 'finish', 0): (0, 47, None),
        ('pending_budget', 'after.delay1.pending_budget', 0): (0, 38, None),
        ('pending_legal', 'after.delay1.pending_legal', 0): (0, 44, None),
        ('approved', 'recheck', 0): (0, 50, None),
        ('approved', 'close', 0): (0, 51, None),
    },
}


class ApprovalStep(_api.Step[ApprovalEvent, ApprovalState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class ApprovalRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = ApprovalStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _ApprovalState = _ApprovalState.open
    configuration: list[_ApprovalState] = _field(
        default_factory=lambda: [ApprovalState.open, ApprovalState.asking])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[ApprovalStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    createdAt: _DateTime = _field(default_factory=_api.utcnow)
    timers: list[_api.Timer[_ApprovalState, ApprovalEvent]] = _field(default_factory=list)
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    approvalDeadline: _DateTime | None = _field(default=None, metadata={
        "description": 'When the approval request expires.'})
    approver: _Str | None = None


check_record: _Final = _api.record_checker(ApprovalRecord)


class ApprovalMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Approval`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    class open(_api.State.Compound, initial=True):
        asking = _api.State(initial=True)
        reminding = _api.State()
        waiting = _api.State()

    class checks(_api.State.Parallel):

        class budget(_api.State.Compound):
            pending_budget = _api.State(initial=True)
            budget_ok = _api.State()

        class legal(_api.State.Compound):
            pending_legal = _api.State(initial=True)
            legal_ok = _api.State()
    approved = _api.State()
    closed = _api.State(final=True)
    expired = _api.State(final=True)

    open.to(expired, event='_sc_after_delay1_open')
    open.asking.to(open.waiting, event='ask')
    open.asking.to(open.reminding, event='_sc_after_delay1_asking')
    open.reminding.to(open.asking, event='_sc_after_delay1_reminding')
    open.waiting.to(approved, event='approve')
    open.waiting.to(expired, event='_sc_after_approvalDeadline_waiting')
    open.waiting.to(expired, event='_sc_after_escalation_waiting', cond='is_urgent')
    open.waiting.to(open.asking, event='_sc_after_escalation_waiting')
    checks.to(approved, event='finish')
    checks.budget.pending_budget.to(checks.budget.budget_ok, event='_sc_after_delay1_pending_budget')
    checks.legal.pending_legal.to(checks.legal.legal_ok, event='_sc_after_delay1_pending_legal')
    approved.to(checks, event='recheck')
    approved.to(closed, event='close')


class Approval(_api.Run[ApprovalRecord, ApprovalState, ApprovalEvent]):
    """One run of `approval`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = ApprovalRecord
    _sc_machine = ApprovalMachine
    _sc_source = _SOURCE

    def ask(self, *, approvalDeadline: _DateTime) -> None:
        """Moves: asking -> waiting."""
        self._fire('ask', {'approvalDeadline': approvalDeadline})

    def approve(self, *, approver: _Str) -> None:
        """Moves: waiting -> approved."""
        self._fire('approve', {'approver': approver})

    def finish(self) -> None:
        """Moves: checks -> approved."""
        self._fire('finish', None)

    def recheck(self) -> None:
        """Moves: approved -> checks."""
        self._fire('recheck', None)

    def close(self) -> None:
        """Moves: approved -> closed."""
        self._fire('close', None)

    def is_urgent(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True
