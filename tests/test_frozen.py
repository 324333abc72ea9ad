"""The model's fast `__init__` (statechart.frozen) keeps every dataclass behaviour."""

from __future__ import annotations

import dataclasses

import pytest

from statechart.diagnostics import Span
from statechart.frozen import fast_init
from statechart.model import Transition


def test_a_fast_init_class_is_still_a_frozen_dataclass() -> None:
    span = Span("a.yaml", 1, 2, 1, 5)
    t = Transition("s", "go", "t", None, (), None, 0, span, span, actions=("log",))
    assert t.actions == ("log",) and t.kind == "external" and t.guard_span is None
    assert t == Transition("s", "go", "t", None, (), None, 0, span, span, actions=("log",))
    assert hash(t) == hash(dataclasses.replace(t))
    assert dataclasses.replace(t, target="u").target == "u"
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.target = "u"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Transition("s", "go")  # type: ignore[call-arg]
    assert sorted([Span("b", 1, 1, 1, 2), span]) == [span, Span("b", 1, 1, 1, 2)]
    assert repr(span) == "Span(file='a.yaml', line=1, column=2, end_line=1, end_column=5)"


def test_fast_init_refuses_what_it_cannot_build() -> None:
    @dataclasses.dataclass(frozen=True)
    class WithFactory:
        items: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class WithPostInit:
        x: int

        def __post_init__(self) -> None:
            pass

    for cls in (WithFactory, WithPostInit):
        with pytest.raises(TypeError, match="fast_init cannot"):
            fast_init(cls)


def test_a_spec_lists_its_transitions_and_events_once_and_hands_out_copies() -> None:
    from pathlib import Path

    from statechart.linter import check_file

    spec = check_file(Path(__file__).parent.parent / "specs" / "agent_run.yaml").spec
    assert spec is not None
    every = [t for s in spec.states.values() for t in s.transitions]
    assert spec.transitions() == every and spec.transitions() is not spec.transitions()
    spec.transitions().clear()  # a caller's list is its own
    spec.events().clear()
    assert spec.transitions() == every
    assert spec.events() == list(dict.fromkeys(t.event for t in every if t.event != "*"))
    # `replace` makes a new model, which lists its own states' transitions.
    first = next(iter(spec.states))
    fewer = dataclasses.replace(spec, states={
        name: dataclasses.replace(s, transitions=()) if name == first else s
        for name, s in spec.states.items()})
    assert fewer.transitions() == [t for t in every if t.source != first]
