# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: 9b30fd82d5990b332cf86862379f10b6ffe53bd380b9f5c5fd1c8b995cb36ccd
# Regenerate with: statechart build
"""The `np` statechart, version 1: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'np'
SPEC_VERSION: _Final = 1
SPEC_SHA256: _Final = '9b30fd82d5990b332cf86862379f10b6ffe53bd380b9f5c5fd1c8b995cb36ccd'
DESCRIPTION: _Final = (
    'A two-character name, and docstrings that fill the line to'
    ' the last column.'
)


class NpState(enum.Enum):
    """Every state, nested ones included, in document order."""

    alpha = 'alpha'
    beta = 'beta'
    gamma_a = 'gamma_a'
    delta = 'delta'
    epsilon_x = 'epsilon_x'
    omega = 'omega'


class NpEvent(enum.Enum):
    """Every event, in order of first use."""

    go = 'go'
    hop = 'hop'
    skip = 'skip'


STATE_DESCRIPTIONS: _Final[_Mapping[NpState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[NpEvent, str]] = {
}


class NpInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class NpLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class NpMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_DateTime: _TypeAlias = _dt.datetime
_NpState: _TypeAlias = NpState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('alpha', None, 'atomic', None),
        ('beta', None, 'atomic', None),
        ('gamma_a', None, 'atomic', None),
        ('delta', None, 'atomic', None),
        ('epsilon_x', None, 'atomic', None),
        ('omega', None, 'final', None),
    ),
    initial='alpha',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('alpha', 'go', 'omega', ()),
        ('alpha', 'hop', 'beta', ()),
        ('alpha', 'skip', 'epsilon_x', ()),
        ('beta', 'go', 'omega', ()),
        ('beta', 'hop', 'gamma_a', ()),
        ('beta', 'skip', 'epsilon_x', ()),
        ('gamma_a', 'go', 'omega', ()),
        ('gamma_a', 'hop', 'delta', ()),
        ('gamma_a', 'skip', 'epsilon_x', ()),
        ('delta', 'go', 'omega', ()),
        ('delta', 'hop', 'alpha', ()),
        ('delta', 'skip', 'epsilon_x', ()),
        ('epsilon_x', 'go', 'omega', ()),
    ),
    state_enum=NpState,
    event_enum=NpEvent,
    errors=(NpInvalidRecord, NpLimitExceeded, NpMissingField),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'alpha': (0, 6),
        'beta': (0, 8),
        'gamma_a': (0, 10),
        'delta': (0, 12),
        'epsilon_x': (0, 14),
        'omega': (0, 16),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('alpha', 'go', 0): (0, 7, None),
        ('alpha', 'hop', 0): (0, 7, None),
        ('alpha', 'skip', 0): (0, 7, None),
        ('beta', 'go', 0): (0, 9, None),
        ('beta', 'hop', 0): (0, 9, None),
        ('beta', 'skip', 0): (0, 9, None),
        ('gamma_a', 'go', 0): (0, 11, None),
        ('gamma_a', 'hop', 0): (0, 11, None),
        ('gamma_a', 'skip', 0): (0, 11, None),
        ('delta', 'go', 0): (0, 13, None),
        ('delta', 'hop', 0): (0, 13, None),
        ('delta', 'skip', 0): (0, 13, None),
        ('epsilon_x', 'go', 0): (0, 15, None),
    },
}


class NpStep(_api.Step[NpEvent, NpState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class NpRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = NpStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _NpState = _NpState.alpha
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[NpStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))


check_record: _Final = _api.record_checker(NpRecord)


class NpMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Np`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    alpha = _api.State(initial=True)
    beta = _api.State()
    gamma_a = _api.State()
    delta = _api.State()
    epsilon_x = _api.State()
    omega = _api.State(final=True)

    alpha.to(omega, event='go')
    alpha.to(beta, event='hop')
    alpha.to(epsilon_x, event='skip')
    beta.to(omega, event='go')
    beta.to(gamma_a, event='hop')
    beta.to(epsilon_x, event='skip')
    gamma_a.to(omega, event='go')
    gamma_a.to(delta, event='hop')
    gamma_a.to(epsilon_x, event='skip')
    delta.to(omega, event='go')
    delta.to(alpha, event='hop')
    delta.to(epsilon_x, event='skip')
    epsilon_x.to(omega, event='go')


class Np(_api.Run[NpRecord, NpState, NpEvent]):
    """One run of `np`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = NpRecord
    _sc_machine = NpMachine
    _sc_source = _SOURCE

    def go(self) -> None:
        """Moves: alpha -> omega, beta -> omega, delta -> omega, epsilon_x -> omega, gamma_a ->
        omega."""
        self._fire('go', None)

    def hop(self) -> None:
        """Moves: alpha -> beta, beta -> gamma_a, delta -> alpha, gamma_a -> delta."""
        self._fire('hop', None)

    def skip(self) -> None:
        """Moves: alpha -> epsilon_x, beta -> epsilon_x, delta -> epsilon_x, gamma_a ->
        epsilon_x."""
        self._fire('skip', None)
