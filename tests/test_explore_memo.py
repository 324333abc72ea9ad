"""The explorer computes a step once per thing it reads (`Space._branches`): a snapshot that
differs from the one a step was computed from in a field the step reads takes the step again,
and one that differs in fields it does not read takes the known step with its own values."""

from __future__ import annotations

from codegen_support import checked_text

from statechart.codegen.spec_tables import spec_tables
from statechart_runtime.testing.explore import Snapshot, Space

SPEC = """\
statechart: memo
version: 1
description: Closing needs a reason; attempts are counted on the way.
initial: editing
record:
  reason:
    type: string
    description: Why it was closed.
  attempts:
    type: integer
    description: How many times it was bumped.
states:
  editing:
    on:
      note: {target: editing, set: [reason]}
      bump: {target: editing, set: [attempts]}
      finish: closed
      guarded: [{target: closed, guard: ready}, {target: editing, set: [attempts]}]
  closed:
    final: true
    requires: [reason]
"""


def _space() -> Space:
    spec = checked_text(SPEC)
    assert spec is not None
    return Space(spec_tables(spec))


def _after(space: Space, snap: Snapshot, event: str, **guards: bool) -> Snapshot:
    found = space.send(snap, event, guards)
    assert found is not None, event
    return found[1]


def test_a_step_that_reads_a_field_is_taken_again_when_the_field_differs() -> None:
    space = _space()
    start = space.start()
    # `closed` requires `reason`: refused while it is unset (a required field: None) ...
    assert space.send(start, "finish", {}) is None
    noted = _after(space, start, "note")
    # ... and taken once it is set, though the step from `editing` was known already.
    after = _after(space, noted, "finish")
    assert after.configuration == ("closed",)
    assert after.values == {"reason": "<reason>"}


def test_a_known_step_keeps_the_values_it_does_not_read() -> None:
    space = _space()
    start = space.start()
    bumped = _after(space, start, "bump")
    assert bumped.values == {"attempts": 0}
    # `note` from `editing` is computed from `start` (no values), then looked up from
    # `bumped`, whose `attempts` it does not read: the snapshot keeps it.
    _after(space, start, "note")
    known = len(space.known)
    noted = _after(space, bumped, "note")
    assert len(space.known) == known  # looked up, not computed
    assert noted.values == {"attempts": 0, "reason": "<reason>"}


def test_each_guard_answer_finds_its_own_branch() -> None:
    space = _space()
    noted = _after(space, space.start(), "note")
    yes = space.send(noted, "guarded", {"ready": True})
    no = space.send(noted, "guarded", {"ready": False})
    assert yes is not None and no is not None
    assert yes[1].configuration == ("closed",) and dict(yes[0].guards) == {"ready": True}
    assert no[1].configuration == ("editing",) and dict(no[0].guards) == {"ready": False}
    assert no[1].values == {"reason": "<reason>", "attempts": 0}
    # the same answers from a snapshot that differs in what the step does not read
    bumped = _after(space, noted, "bump")
    again = space.send(bumped, "guarded", {})  # a guard not named says yes
    assert again is not None and again[1].configuration == ("closed",)
    assert again[1].values == {"reason": "<reason>", "attempts": 0}
