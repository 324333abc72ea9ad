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
    """The rows list the alternatives (API 1.7): the machine's transitions are read when a run
    first builds a machine, and one the rows do not list is refused then."""
    spec = checked_text(SPEC)
    assert spec is not None
    source = generate(spec)["generated/alts.py"].decode()
    declared = "    review.to(open, event='again')\n"
    assert declared in source
    edited = source.replace(declared, declared + "    review.to(done, event='again')\n")
    module = import_source(edited.encode(), tmp_path, "alts")
    run = module.Alts()  # type: ignore[attr-defined]
    run.close(outcome="o", note="n")  # stepped by the kernel and the rows alone
    with pytest.raises(RuntimeVersionError, match=r"`review` -again-> `done`.*regenerate"):
        assert module.Alts().machine is None  # type: ignore[attr-defined]
    # The same declarations in another order.
    first, second = ("    open.to(done, event='close', cond='is_urgent')\n",
                     "    open.to(review, event='close')\n")
    other = source.replace(first + second, second + first)
    assert other != source
    module = import_source(other.encode(), tmp_path, "alts")
    with pytest.raises(RuntimeVersionError, match=r"another order.*regenerate"):
        assert module.Alts().machine is None  # type: ignore[attr-defined]


# A module generated before the rows listed each alternative (API 1.4, by the compiler of
# 2026-12-06 from OLD_SPEC): its table is bound to its machine's declaration order at import.
OLD_MODULE = Path(__file__).parent / "old_modules" / "alts_api_1_6.py"
OLD_SPEC = SPEC.replace(
    "        - {target: done, set: [outcome, note]}\n",
    "        - {target: done, set: [outcome, note], actions: [log_close]}\n").replace(
    "      again: open\n", "      again: {target: open, actions: [log_again]}\n")


def _alternatives(module: object) -> list[tuple[object, ...]]:
    table = module._SPEC.alternatives  # type: ignore[attr-defined]
    return [(a.source, a.event, a.position, a.target, a.kind, a.guards, a.guarded,
             a.in_states, a.given, a.clears, dict(a.assigns), a.sets)
            for found in table.on.values() for a in found]


def test_a_module_of_the_previous_api_binds_its_machine_s_order_and_runs_the_same(
        tmp_path: Path) -> None:
    old_source = OLD_MODULE.read_bytes()
    assert b"_rt.check_api((1, 4)," in old_source and b"    transitions=(\n" in old_source
    old = import_source(old_source, tmp_path, "alts")
    new = _module(tmp_path, OLD_SPEC)
    assert b"alternatives=(" in generate(checked_text(OLD_SPEC))[  # type: ignore[arg-type]
        "generated/alts.py"]
    assert not old._SPEC.alternatives.listed and new._SPEC.alternatives.listed  # type: ignore[attr-defined]
    assert _alternatives(old) == _alternatives(new)
    assert old._SPEC.alternatives.declared == new._SPEC.alternatives.declared  # type: ignore[attr-defined]
    # The new rows carry the actions; the old table finds them on the machine's transitions.
    close = new._SPEC.alternatives.on[("open", "close")]  # type: ignore[attr-defined]
    assert [a.actions for a in close] == [(), (), (), ("log_close",)]

    def runs(module: object) -> list[object]:
        calls: list[str] = []

        class Logged(module.Alts):  # type: ignore[attr-defined, misc, name-defined]
            def is_urgent(self) -> bool:
                return False

            def is_late(self) -> bool:
                return False

            def log_close(self) -> None:
                calls.append("close")

            def log_again(self) -> None:
                calls.append("again")

        out: list[object] = []
        for machine in (False, True):  # the direct path, then python-statemachine's
            run = Logged()
            if machine:
                assert run.machine is not None
            run.close(outcome="a", note="b")
            out.append([(s.source.value, s.target.value, s.values) for s in run.record.history])
        out.append(calls)
        return out

    assert runs(old) == runs(new) == [[("open", "done", {"outcome": "a", "note": "b"})]] * 2 \
        + [["close", "close"]]
