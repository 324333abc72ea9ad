# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: e21e8bf138bb1128d3869aa06f17565268d0dcab6d9d5e7097a4429e0b662d1b
# Regenerate with: statechart build
"""The `deploy` statechart, version 1: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'deploy'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = 'e21e8bf138bb1128d3869aa06f17565268d0dcab6d9d5e7097a4429e0b662d1b'
DESCRIPTION: _Final = 'Two regions run at once; leaving the parallel state exits both.'


class DeployState(enum.Enum):
    """Every state, nested ones included, in document order."""

    idle = 'idle'
    rollout = 'rollout'
    build = 'build'
    compiling = 'compiling'
    testing = 'testing'
    built = 'built'
    approvals = 'approvals'
    waiting = 'waiting'
    approved = 'approved'
    aborted = 'aborted'
    done = 'done'


class DeployEvent(enum.Enum):
    """Every event, in order of first use."""

    begin = 'begin'
    abort = 'abort'
    finish = 'finish'
    compiled = 'compiled'
    tested = 'tested'
    approve = 'approve'
    restart = 'restart'
    revoke = 'revoke'


STATE_DESCRIPTIONS: _Final[_Mapping[DeployState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[DeployEvent, str]] = {
}


class DeployInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class DeployLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class DeployMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_DateTime: _TypeAlias = _dt.datetime
_DeployState: _TypeAlias = DeployState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('idle', None, 'atomic', None),
        ('rollout', None, 'parallel', None),
        ('build', 'rollout', 'compound', 'compiling'),
        ('compiling', 'build', 'atomic', None),
        ('testing', 'build', 'atomic', None),
        ('built', 'build', 'atomic', None),
        ('approvals', 'rollout', 'compound', 'waiting'),
        ('waiting', 'approvals', 'atomic', None),
        ('approved', 'approvals', 'atomic', None),
        ('aborted', None, 'final', None),
        ('done', None, 'final', None),
    ),
    initial='idle',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('idle', 'begin', 'rollout', ()),
        ('rollout', 'abort', 'aborted', ()),
        ('rollout', 'finish', 'done', ()),
        ('compiling', 'compiled', 'testing', ()),
        ('testing', 'tested', 'built', ()),
        ('waiting', 'approve', 'approved', ()),
        ('waiting', 'restart', 'waiting', ()),
        ('approved', 'revoke', 'waiting', ()),
    ),
    state_enum=DeployState,
    event_enum=DeployEvent,
    errors=(DeployInvalidRecord, DeployLimitExceeded, DeployMissingField),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'idle': (0, 6),
        'rollout': (0, 8),
        'build': (0, 14),
        'compiling': (0, 17),
        'testing': (0, 19),
        'built': (0, 21),
        'approvals': (0, 22),
        'waiting': (0, 25),
        'approved': (0, 27),
        'aborted': (0, 29),
        'done': (0, 31),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('idle', 'begin', 0): (0, 7, None),
        ('rollout', 'abort', 0): (0, 11, None),
        ('rollout', 'finish', 0): (0, 12, None),
        ('compiling', 'compiled', 0): (0, 18, None),
        ('testing', 'tested', 0): (0, 20, None),
        ('waiting', 'approve', 0): (0, 26, None),
        ('waiting', 'restart', 0): (0, 26, None),
        ('approved', 'revoke', 0): (0, 28, None),
    },
}


class DeployStep(_api.Step[DeployEvent, DeployState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class DeployRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = DeployStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _DeployState = _DeployState.idle
    configuration: list[_DeployState] = _field(
        default_factory=lambda: [DeployState.idle])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[DeployStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))


check_record: _Final = _api.record_checker(DeployRecord)


class DeployMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Deploy`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    idle = _api.State(initial=True)

    class rollout(_api.State.Parallel):

        class build(_api.State.Compound):
            compiling = _api.State(initial=True)
            testing = _api.State()
            built = _api.State()

        class approvals(_api.State.Compound):
            waiting = _api.State(initial=True)
            approved = _api.State()
    aborted = _api.State(final=True)
    done = _api.State(final=True)

    idle.to(rollout, event='begin')
    rollout.to(aborted, event='abort')
    rollout.to(done, event='finish')
    rollout.build.compiling.to(rollout.build.testing, event='compiled')
    rollout.build.testing.to(rollout.build.built, event='tested')
    rollout.approvals.waiting.to(rollout.approvals.approved, event='approve')
    rollout.approvals.waiting.to(rollout.approvals.waiting, event='restart')
    rollout.approvals.approved.to(rollout.approvals.waiting, event='revoke')


class Deploy(_api.Run[DeployRecord, DeployState, DeployEvent]):
    """One run of `deploy`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = DeployRecord
    _sc_machine = DeployMachine
    _sc_source = _SOURCE

    def begin(self) -> None:
        """Moves: idle -> rollout."""
        self._fire('begin', None)

    def abort(self) -> None:
        """Moves: rollout -> aborted."""
        self._fire('abort', None)

    def finish(self) -> None:
        """Moves: rollout -> done."""
        self._fire('finish', None)

    def compiled(self) -> None:
        """Moves: compiling -> testing."""
        self._fire('compiled', None)

    def tested(self) -> None:
        """Moves: testing -> built."""
        self._fire('tested', None)

    def approve(self) -> None:
        """Moves: waiting -> approved."""
        self._fire('approve', None)

    def restart(self) -> None:
        """Moves: waiting -> waiting."""
        self._fire('restart', None)

    def revoke(self) -> None:
        """Moves: approved -> waiting."""
        self._fire('revoke', None)
