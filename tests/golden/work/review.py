# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 3a0d1b3325c909322b66ec6f834717003b1cceb81cc9b0a23ee0e024ca3e3f30
# Regenerate with: statechart build
"""The `review` statechart, version 1: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'review'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '3a0d1b3325c909322b66ec6f834717003b1cceb81cc9b0a23ee0e024ca3e3f30'
DESCRIPTION: _Final = (
    'A review whose checks run as work in parallel regions, '
    'their findings as JSON.'
)


class ReviewState(enum.Enum):
    """Every state, nested ones included, in document order."""

    drafting = 'drafting'
    checking = 'checking'
    lint = 'lint'
    linting = 'linting'
    linted = 'linted'
    test = 'test'
    testing = 'testing'
    tested = 'tested'
    approved = 'approved'
    rejected = 'rejected'


class ReviewEvent(enum.Enum):
    """Every event, in order of first use."""

    submit = 'submit'
    check_failed = 'check_failed'
    done_state_checking = 'done.state.checking'
    lint_done = 'lint_done'
    tests_done = 'tests_done'


STATE_DESCRIPTIONS: _Final[_Mapping[ReviewState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[ReviewEvent, str]] = {
}


class ReviewInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class ReviewLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class ReviewMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_Bool: _TypeAlias = bool
_DateTime: _TypeAlias = _dt.datetime
_Json: _TypeAlias = _api.JsonData
_ReviewState: _TypeAlias = ReviewState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('drafting', None, 'atomic', None),
        ('checking', None, 'parallel', None),
        ('lint', 'checking', 'compound', 'linting'),
        ('linting', 'lint', 'atomic', None),
        ('linted', 'lint', 'final', None),
        ('test', 'checking', 'compound', 'testing'),
        ('testing', 'test', 'atomic', None),
        ('tested', 'test', 'final', None),
        ('approved', None, 'final', None),
        ('rejected', None, 'final', None),
    ),
    initial='drafting',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('drafting', 'submit', 'checking', ()),
        ('checking', 'check_failed', 'rejected', ('failure',)),
        ('checking', 'done.state.checking', 'approved', ()),
        ('linting', 'lint_done', 'linted', ('lintReport',)),
        ('testing', 'tests_done', 'tested', ('testReport',)),
    ),
    state_enum=ReviewState,
    event_enum=ReviewEvent,
    fields={
        'lintReport': 'json',
        'testReport': 'json',
        'verdict': 'json',
        'failure': 'string',
    },
    errors=(ReviewInvalidRecord, ReviewLimitExceeded, ReviewMissingField),
    # Names mapped in Python (docs/generated-code.md, "Names"): event -> machine event id
    event_ids={
        'done.state.checking': '_sc_done_state_checking',
    },
    # events the run raises itself -> the state that declares them
    internal={
        'done.state.checking': 'checking',
    },
    context=('verdict',),
    defaults={'verdict': 'pending'},
)

# Work (docs/spec-format.md "Work"; statechart_runtime.chart.work.work_of): (state, handler,
# timeout in ms, heartbeat in ms or None, outcome events, error event or None, retries,
# backoff in ms)
_WORK: _Final = _api.WorkTable((
    ('linting', 'run_linter', 120000, 20000, ('lint_done',), 'check_failed', 1, 500),
    ('testing', 'run_tests', 600000, None, ('tests_done',), None, 3, 1000),
))

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'drafting': (0, 11),
        'checking': (0, 13),
        'lint': (0, 19),
        'linting': (0, 22),
        'linted': (0, 31),
        'test': (0, 32),
        'testing': (0, 35),
        'tested': (0, 38),
        'approved': (0, 39),
        'rejected': (0, 40),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('drafting', 'submit', 0): (0, 12, None),
        ('checking', 'check_failed', 0): (0, 17, None),
        ('checking', 'done.state.checking', 0): (0, 15, None),
        ('linting', 'lint_done', 0): (0, 30, None),
        ('testing', 'tests_done', 0): (0, 37, None),
    },
}


class ReviewStep(_api.Step[ReviewEvent, ReviewState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class ReviewRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = ReviewStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _ReviewState = _ReviewState.drafting
    configuration: list[_ReviewState] = _field(
        default_factory=lambda: [ReviewState.drafting])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[ReviewStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))
    # The spec's fields. Annotations use the `_` aliases: see the note above them.
    lintReport: _Json | None = _field(default=None, metadata={
        "description": 'What the linter found.'})
    testReport: _Json | None = _field(default=None, metadata={
        "description": 'What the test run found.'})
    verdict: _Json | None = 'pending'
    failure: _Str | None = None


check_record: _Final = _api.record_checker(ReviewRecord)


class ReviewMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Review`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    drafting = _api.State(initial=True)

    class checking(_api.State.Parallel):

        class lint(_api.State.Compound):
            linting = _api.State(initial=True)
            linted = _api.State(final=True)

        class test(_api.State.Compound):
            testing = _api.State(initial=True)
            tested = _api.State(final=True)
    approved = _api.State(final=True)
    rejected = _api.State(final=True)

    drafting.to(checking, event='submit')
    checking.to(rejected, event='check_failed')
    checking.to(approved, event='_sc_done_state_checking')
    checking.lint.linting.to(checking.lint.linted, event='lint_done')
    checking.test.testing.to(checking.test.tested, event='tests_done')


class ReviewContext(_TypedDict, total=False):
    """The run context: keywords of `Review(...)` and `update(...)`; None unsets."""

    verdict: _Json | None


class Review(_api.Run[ReviewRecord, ReviewState, ReviewEvent]):
    """One run of `review`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = ReviewRecord
    _sc_machine = ReviewMachine
    _sc_source = _SOURCE
    _sc_work = _WORK

    def __init__(self, record: ReviewRecord | None = None, *, run_id: _Str | None = None,
                 model: object = None, clock: _api.Clock | None = None, check: _Bool = True,
                 **context: _Unpack[ReviewContext]) -> None:
        super().__init__(record, run_id=run_id, model=model, clock=clock, check=check,
                         **context)

    def update(self, **context: _Unpack[ReviewContext]) -> None:
        """Set run-context fields (None unsets one): not a transition, no history entry."""
        self._update(dict(context))

    def submit(self) -> None:
        """Moves: drafting -> checking."""
        self._fire('submit', None)

    def check_failed(self, *, failure: _Str) -> None:
        """Moves: checking -> rejected."""
        self._fire('check_failed', {'failure': failure})

    def lint_done(self, *, lintReport: _Json) -> None:
        """Moves: linting -> linted."""
        self._fire('lint_done', {'lintReport': lintReport})

    def tests_done(self, *, testReport: _Json) -> None:
        """Moves: testing -> tested."""
        self._fire('tests_done', {'testReport': testReport})
