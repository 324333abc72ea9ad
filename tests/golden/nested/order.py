# Generated from spec.yaml by statechart-compiler 0.2.0. DO NOT EDIT.
# Source sha256: d9e209839295852ed2b5ba6f459ed45f579c481e54f6de50a9f9e0b0c5099a22
# Regenerate with: statechart build
"""The `order` statechart, version 2: a typed python-statemachine class and its run record.
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

SPEC_NAME: _Final = 'order'
SPEC_VERSION: _Final = 2
SPEC_SHA256: _Final = 'd9e209839295852ed2b5ba6f459ed45f579c481e54f6de50a9f9e0b0c5099a22'
DESCRIPTION: _Final = (
    'Nested states two levels deep; a transition on a parent '
    'applies to its children.'
)


class OrderState(enum.Enum):
    """Every state, nested ones included, in document order."""

    open = 'open'
    cart = 'cart'
    paying = 'paying'
    card = 'card'
    invoice = 'invoice'
    shipped = 'shipped'
    closed = 'closed'


class OrderEvent(enum.Enum):
    """Every event, in order of first use."""

    abandon = 'abandon'
    checkout = 'checkout'
    paid = 'paid'
    back = 'back'
    use_invoice = 'use_invoice'
    use_card = 'use_card'
    deliver = 'deliver'
    reopen = 'reopen'


STATE_DESCRIPTIONS: _Final[_Mapping[OrderState, str]] = {
}


EVENT_DESCRIPTIONS: _Final[_Mapping[OrderEvent, str]] = {
}


class OrderInvalidRecord(_api.errors.InvalidRecord):
    """A run record this module refuses; `field` is the JSON key at fault."""


class OrderLimitExceeded(_api.errors.LimitExceeded):
    """A state with `limit: N` would be entered for the (N+1)th time in one run."""


class OrderMissingField(_api.errors.MissingField):
    """A value a transition sets, or a state requires, was not given."""


# Type names as the class bodies below refer to them: a record field may be named `str` or
# like a class of this module, and inside a class body that name would hide the type.
_Str: _TypeAlias = str
_Int: _TypeAlias = int
_DateTime: _TypeAlias = _dt.datetime
_OrderState: _TypeAlias = OrderState

# The spec as data; statechart_runtime derives the rest (entry and exit sets, selection).
_SPEC: _Final = _api.SpecTables(
    name=SPEC_NAME,
    version=SPEC_VERSION,
    sha256=SPEC_SHA256,
    compiler='statechart-compiler 0.2.0',
    # (state, parent, kind, initial child), in document order
    states=(
        ('open', None, 'compound', 'cart'),
        ('cart', 'open', 'atomic', None),
        ('paying', 'open', 'compound', 'card'),
        ('card', 'paying', 'atomic', None),
        ('invoice', 'paying', 'atomic', None),
        ('shipped', None, 'atomic', None),
        ('closed', None, 'final', None),
    ),
    initial='open',
    # (source, event, target, fields it sets[, {kind, guard, actions, assigns}]), one row per
    # alternative, in the order the machine below declares them
    alternatives=(
        ('open', 'abandon', 'closed', ()),
        ('cart', 'checkout', 'paying', ()),
        ('paying', 'paid', 'shipped', ()),
        ('paying', 'back', 'cart', ()),
        ('card', 'use_invoice', 'invoice', ()),
        ('invoice', 'use_card', 'card', ()),
        ('shipped', 'deliver', 'closed', ()),
        ('shipped', 'reopen', 'open', ()),
    ),
    state_enum=OrderState,
    event_enum=OrderEvent,
    errors=(OrderInvalidRecord, OrderLimitExceeded, OrderMissingField),
)

# Where the spec writes each state and each alternative of a transition (file, line; and the
# line of its guard): what spec coverage reports (`pytest --statechart-cov`).
_SOURCE: _Final = {
    'files': ('spec.yaml',),
    'states': {
        'open': (0, 6),
        'cart': (0, 11),
        'paying': (0, 13),
        'card': (0, 19),
        'invoice': (0, 21),
        'shipped': (0, 23),
        'closed': (0, 25),
    },
    # (source, event, position among the event's alternatives on the source)
    'transitions': {
        ('open', 'abandon', 0): (0, 9, None),
        ('cart', 'checkout', 0): (0, 12, None),
        ('paying', 'paid', 0): (0, 16, None),
        ('paying', 'back', 0): (0, 17, None),
        ('card', 'use_invoice', 0): (0, 20, None),
        ('invoice', 'use_card', 0): (0, 22, None),
        ('shipped', 'deliver', 0): (0, 24, None),
        ('shipped', 'reopen', 0): (0, 24, None),
    },
}


class OrderStep(_api.Step[OrderEvent, OrderState]):
    """One transition of a run: the transition's own source and target, and what it set."""

    __slots__ = ()


@dataclasses.dataclass
class OrderRecord(_api.Record):
    """The persisted state of one run. JSON keys are the spec's field names.

    Unset fields are None in Python and absent from JSON. `from_dict`/`from_json` refuse a
    record that this spec could not have produced, naming the field at fault.
    """

    _sc_spec = _SPEC
    _sc_step = OrderStep

    runId: _Str
    specVersion: _Int = SPEC_VERSION
    status: _OrderState = _OrderState.open
    configuration: list[_OrderState] = _field(
        default_factory=lambda: [OrderState.open, OrderState.cart])
    lastTransitionAt: _DateTime = _field(default_factory=_api.utcnow)
    history: list[OrderStep] = _field(default_factory=list)
    counts: dict[_Str, _Int] = _field(default_factory=lambda: dict(_SPEC.initial_counts))


check_record: _Final = _api.record_checker(OrderRecord)


class OrderMachine(_api.Machine):
    """The states and transitions for python-statemachine. Use `Order`: it keeps the
    run record, and refuses events sent to its `machine` directly."""

    class open(_api.State.Compound, initial=True):
        cart = _api.State(initial=True)

        class paying(_api.State.Compound):
            card = _api.State(initial=True)
            invoice = _api.State()
    shipped = _api.State()
    closed = _api.State(final=True)

    open.to(closed, event='abandon')
    open.cart.to(open.paying, event='checkout')
    open.paying.to(shipped, event='paid')
    open.paying.to(open.cart, event='back')
    open.paying.card.to(open.paying.invoice, event='use_invoice')
    open.paying.invoice.to(open.paying.card, event='use_card')
    shipped.to(closed, event='deliver')
    shipped.to(open, event='reopen')


class Order(_api.Run[OrderRecord, OrderState, OrderEvent]):
    """One run of `order`: a method per event, the record in `record`, guards and actions to
    override."""

    _sc_spec = _SPEC
    _sc_record = OrderRecord
    _sc_machine = OrderMachine
    _sc_source = _SOURCE

    def abandon(self) -> None:
        """Moves: open -> closed."""
        self._fire('abandon', None)

    def checkout(self) -> None:
        """Moves: cart -> paying."""
        self._fire('checkout', None)

    def paid(self) -> None:
        """Moves: paying -> shipped."""
        self._fire('paid', None)

    def back(self) -> None:
        """Moves: paying -> cart."""
        self._fire('back', None)

    def use_invoice(self) -> None:
        """Moves: card -> invoice."""
        self._fire('use_invoice', None)

    def use_card(self) -> None:
        """Moves: invoice -> card."""
        self._fire('use_card', None)

    def deliver(self) -> None:
        """Moves: shipped -> closed."""
        self._fire('deliver', None)

    def reopen(self) -> None:
        """Moves: shipped -> open."""
        self._fire('reopen', None)
