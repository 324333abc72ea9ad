# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 147746cbeeead40467d8aae4a1d6d7dbd2926b7295699638015697c3d5b7e79d
# Regenerate with: statechart build
"""The `loan` statechart, version 1: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'loan'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '147746cbeeead40467d8aae4a1d6d7dbd2926b7295699638015697c3d5b7e79d'
DESCRIPTION: _Final = 'Guarded alternatives are tried in order; the last one is the fallback.'


class LoanState(enum.Enum):
    """Every state, nested ones included, in document order."""

    applied = 'applied'
    review = 'review'
    approved = 'approved'
    rejected = 'rejected'


class LoanEvent(enum.Enum):
    """Every event, in order of first use."""

    assess = 'assess'
    decide = 'decide'


STATE_DESCRIPTIONS: _Final[_Mapping[LoanState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[LoanEvent, str]] = {
}


class LoanInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class LoanLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class LoanMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_LoanState: _TypeAlias = LoanState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('applied', None, 'atomic', None),
        ('review', None, 'atomic', None),
        ('approved', None, 'final', None),
        ('rejected', None, 'final', None),
    ),
    initial='applied',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('applied', 'assess', 'approved', ('score',), {'guard': 'is_good'}),
        ('applied', 'assess', 'review', ('score',), {'guard': 'is_borderline'}),
        ('applied', 'assess', 'rejected', ('score', 'reason')),
        ('review', 'decide', 'approved', (), {'guard': 'reviewer_agrees'}),
        ('review', 'decide', 'rejected', ('reason',)),
    ),
    state_enum=LoanState,
    event_enum=LoanEvent,
    fields={
        'score': 'integer',
        'reason': 'string',
    },
    requires={
        'rejected': ('reason',),
    },
    errors=(LoanInvalidRecord, LoanLimitExceeded, LoanMissingField),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'applied': (0, 9),
        'review': (0, 15),
        'approved': (0, 20),
        'rejected': (0, 22),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('applied', 'assess', 0): (0, 12, 12),
        ('applied', 'assess', 1): (0, 13, 13),
        ('applied', 'assess', 2): (0, 14, None),
        ('review', 'decide', 0): (0, 18, 18),
        ('review', 'decide', 1): (0, 19, None),
    },
}


class LoanStep(_api.Step[LoanEvent, LoanState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class LoanRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = LoanStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _LoanState = _LoanState.applied
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[LoanStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    score: _Int | None = _field(default=None, metadata={
        "description": 'Credit score.'})
    reason: _Str | None = None


check_record: _Final = _api.record_checker(LoanRecord)


class LoanMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Loan`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    applied = _api.State(initial=True)
    review = _api.State()
    approved = _api.State(final=True)
    rejected = _api.State(final=True)

    applied.to(approved, event='assess', cond='is_good')
    applied.to(review, event='assess', cond='is_borderline')
    applied.to(rejected, event='assess')
    review.to(approved, event='decide', cond='reviewer_agrees')
    review.to(rejected, event='decide')


class Loan(_api.Run[LoanRecord, LoanState, LoanEvent]):
    """One run of `loan`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = LoanRecord
    _sc_machine = LoanMachine
    _sc_source = _SOURCE

    def assess(self, *, score: _Int, reason: _Str | None = None) -> None:
        """Moves: applied -> approved, applied -> rejected, applied -> review."""
        self._fire('assess', {'score': score, 'reason': reason})

    def decide(self, *, reason: _Str | None = None) -> None:
        """Moves: review -> approved, review -> rejected."""
        self._fire('decide', {'reason': reason})

    def is_good(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True

    def is_borderline(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True

    def reviewer_agrees(self) -> _Bool:
        """Guard. This default lets the transition through: override it in a subclass (a
        `model=` object's answer is combined with this one by `and`)."""
        return True
