"""The spec tables' one table of transition alternatives (statechart_runtime.chart.alternatives,
issue 28): one `Alternative` per alternative, in document order per (source, event), with its
kind, guards, `in:`, sets, clears and constants, as a generated module's rows and machine give
them; and a machine that declares a transition its rows do not list is refused at import."""

from __future__ import annotations

from pathlib import Path

import pytest
from codegen_support import checked_text, generate, import_source

from statechart_runtime.errors import RuntimeVersionError

SPEC = """\
statechart: alts
version: 1
initial: open
record:
  outcome: {type: string}
  note: {type: string}
states:
  open:
    initial: idle
    on:
      close:
        - {target: done, guard: is_urgent, assign: {outcome: urgent}}
        - {target: review, in: [busy]}
        - {target: done, guard: is_late, set: [outcome], clear: [note]}
        - {target: done, set: [outcome, note]}
      poke: {internal: true, target: busy}
    states:
      idle:
        on:
          work: busy
      busy:
        on:
          rest: idle
  review:
    on:
      back: {target: open, history: deep}
      again: open
  done: {final: true}
"""


def _module(tmp_path: Path, text: str = SPEC) -> object:
    spec = checked_text(text)
    assert spec is not None
    return import_source(generate(spec)["generated/alts.py"], tmp_path, "alts")


def test_each_alternative_is_one_entry_in_document_order(tmp_path: Path) -> None:
    module = _module(tmp_path)
    table = module._SPEC.alternatives  # type: ignore[attr-defined]
    close = table.on[("open", "close")]
    assert [(a.position, a.target, a.guard_names, a.in_states) for a in close] == [
        (0, "done", ("is_urgent",), ()),
        (1, "review", (), ("busy",)),
        (2, "done", ("is_late",), ()),
        (3, "done", (), ()),
    ]
    # Three alternatives share the key (open, close, done): the rows merge what the caller
    # gives and what they clear; the constants are each one's own.
    assert table.keyed[("open", "close", "done")] == (close[0], close[2], close[3])
    assert close[0].given == ("outcome", "note") and close[0].sets == ("note",)
    assert {k: v[1] for k, v in close[0].assigns.items()} == {"outcome": "urgent"}
    assert close[3].sets == ("outcome", "note") and close[3].assigns == {}
    assert close[2].clears == ("note",)
    assert [a.guarded for a in close] == [True, False, True, False]
    assert table.on[("open", "poke")][0].kind == "internal"
    back = table.on[("review", "back")][0]
    assert (back.target, back.kind, back.move) == ("open", "deep", ("review", "open", "deep"))
    assert table.kinds(("review", "back", "open")) == frozenset({"deep"})
    assert table.kinds(("review", "again", "open")) == frozenset({None})
    assert table.sources["close"] == frozenset({"open"})
    assert table.fields["close"] == ("outcome", "note")
    assert table.eventless == frozenset()


def test_selection_takes_the_table_s_alternatives_in_order(tmp_path: Path) -> None:
    module = _module(tmp_path)

    class NotUrgent(module.Alts):  # type: ignore[attr-defined, misc, name-defined]
        def is_urgent(self) -> bool:
            return False

    # `busy` active: the second alternative (`in: [busy]`) is the first enabled one.
    run = NotUrgent()
    run.work()
    run.close()
    assert run.record.history[-1].target.value == "review"
    # `busy` not active: the third (`is_late`); what it sets is its key's (the rows merge
    # the alternatives with one source, event and target), so `note` too, after its clear.
    run = NotUrgent()
    run.close(outcome="late", note="n")
    step = run.record.history[-1]
    assert (step.target.value, step.values) == ("done", {"outcome": "late", "note": "n"})
    # The first (`is_urgent`, the default yes) assigns its constant.
    run = module.Alts()  # type: ignore[attr-defined]
    run.close(note="n")
    assert run.record.history[-1].values == {"outcome": "urgent", "note": "n"}


def test_a_machine_that_declares_a_transition_the_rows_do_not_list_is_refused(
        tmp_path: Path) -> None:
    spec = checked_text(SPEC)
    assert spec is not None
    source = generate(spec)["generated/alts.py"].decode()
    declared = "    review.to(open, event='again')\n"
    assert declared in source
    edited = source.replace(declared, declared + "    review.to(done, event='again')\n")
    with pytest.raises(RuntimeVersionError, match=r"`review` -again-> `done`.*regenerate"):
        import_source(edited.encode(), tmp_path, "alts")
