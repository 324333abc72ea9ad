"""`statechart import` of documents as other engines and editors write them: the project's
configuration applies as in `check`, and the SCXML constructs a spec says another way (several
events on one transition, document order, an initial history, deep history defaults) import
to a spec that builds and behaves as the document."""

from __future__ import annotations

from pathlib import Path

import pytest
from scxml_oracle import divergences

from statechart.cli import main
from statechart.linter import check_source
from statechart.scxml.importer import import_scxml

DOOR = """<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" name="door" initial="a">
  <state id="a"><transition event="go" target="b"/></state>
  <state id="b"/>
  <state id="c"><transition event="back" target="a"/></state>
</scxml>
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("config", [
    "[severity]\nno-path-to-final = 'ignore'\ntrap-state = 'ignore'\n"
    "unreachable-state = 'ignore'\n",
    "[per-file-ignores]\n'specs/door.yaml' = ['no-path-to-final', 'trap-state', "
    "'unreachable-state']\n",
], ids=["severity", "per-file-ignores"])
def test_import_reports_and_exits_as_check_does_on_the_file_it_wrote(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        config: str) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "door.scxml").write_text(DOOR)
    monkeypatch.chdir(tmp_path)
    # Without the configuration, the spec's problems are errors: written, exit 1.
    code, _, err = _run(capsys, "import", "door.scxml", "-o", "specs/door.yaml")
    assert code == 1 and "error[unreachable-state]" in err
    assert _run(capsys, "check", "specs/door.yaml")[0] == 1
    (tmp_path / "statechart.toml").write_text(config)
    code, out, err = _run(capsys, "import", "door.scxml", "-o", "specs/door.yaml")
    assert (code, out, err) == (0, "", "wrote specs/door.yaml\n")
    assert _run(capsys, "check", "specs/door.yaml")[0] == 0


def test_import_takes_the_configuration_named(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    chart, spec = tmp_path / "door.scxml", tmp_path / "door.yaml"
    chart.write_text(DOOR)
    lax = tmp_path / "elsewhere" / "statechart.toml"
    lax.parent.mkdir()
    lax.write_text("[severity]\nno-path-to-final = 'warning'\n"
                                       "trap-state = 'warning'\nunreachable-state = 'warning'\n")
    code, _, err = _run(capsys, "import", str(chart), "-o", str(spec), "--config",
                        str(lax), "--format", "concise")
    assert code == 0 and "warning[unreachable-state]" in err and "error[" not in err
    code, _, _ = _run(capsys, "import", str(chart), "-o", str(spec), "--config",
                      str(lax), "--strict")
    assert code == 1
    code, _, err = _run(capsys, "import", str(chart), "--config", str(tmp_path / "none.toml"))
    assert code == 2 and "none.toml" in err


ORDER = """<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" name="order" initial="a">
  <state id="a">
    <transition event="go" cond="g" target="b"/>
    <transition event="go.far stop" cond="h" target="d"/>
    <transition event="*" target="c"/>
    <transition event="go" target="d"/>
    <transition event="error" cond="h" target="b"/>
  </state>
  <state id="b">
    <transition event="error" cond="h" target="c"/>
    <transition event="error.tool" target="d"/>
    <transition event="error.tool" cond="g" target="a"/>
    <transition event="error" cond="h" target="a"/>
    <transition event="back" target="a"/>
    <transition event="back" target="c"/>
    <transition event="end" target="z"/>
  </state>
  <state id="c"><transition event="back next" target="a"/><transition event="end" target="z"/>
  </state>
  <state id="d"><transition event="back" target="a"/><transition event="end" target="z"/></state>
  <final id="z"/>
</scxml>
"""


def test_document_order_imports_to_a_spec_that_behaves_as_the_document(tmp_path: Path) -> None:
    """What SCXML never takes is dropped with a comment at its line; a family's transitions
    written before a member's are listed under the member too; several events are split."""
    imported = import_scxml("order.scxml", ORDER.encode())
    assert imported.text is not None
    text = imported.text
    for line in (6, 7, 13, 15):  # after `*`, after `go`'s unguarded; `error` h again; `back`
        assert f"the transition of line {line} is dropped: SCXML never takes it" in text, line
    assert check_source("order.yaml", text.encode()).errors == []
    for g in (False, True):
        for h in (False, True):
            assert divergences(ORDER, {"g": g, "h": h}, tmp_path, seed=int(g) * 2 + h) == []


def test_an_event_list_is_one_alternative_per_event() -> None:
    imported = import_scxml("c.scxml", (
        b'<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="a">'
        b'<state id="a"><transition event="go stop.* halt" target="b"/></state>'
        b'<final id="b"/></scxml>'))
    assert imported.text is not None
    spec = check_source("c.yaml", imported.text.encode()).spec
    assert spec is not None
    assert [(t.event, t.target) for t in spec.states["a"].transitions] == [
        ("go", "b"), ("stop", "b"), ("halt", "b")]


HISTORIES = """<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" name="hist" initial="idle">
  <state id="idle">
    <transition event="start" target="work"/>
    <transition event="peek" target="hs"/>
    <transition event="stop" target="end"/>
  </state>
  <state id="work" initial="hd">
    <history id="hd" type="deep"><transition target="plan"/></history>
    <history id="hs" type="shallow"><transition target="reading"/></history>
    <state id="plan"><transition event="next" target="review"/></state>
    <state id="review">
      <state id="reading"><transition event="next" target="checking"/></state>
      <state id="checking"><transition event="next" target="reading"/></state>
    </state>
    <transition event="pause" target="idle"/>
  </state>
  <final id="end"/>
</scxml>
"""


def test_an_initial_history_and_a_deeper_shallow_default_behave_as_the_document(
        tmp_path: Path) -> None:
    """`initial="hd"` (a <history>): every transition into `work` enters it by that history;
    `hs`'s default, a grandchild, is its shallow `history_default:`."""
    imported = import_scxml("hist.scxml", HISTORIES.encode())
    assert imported.text is not None, [d.message for d in imported.diagnostics]
    assert "start: {history: deep, target: work}" in imported.text
    assert "initial: plan" in imported.text
    assert "history_default: {shallow: reading}" in imported.text
    assert divergences(HISTORIES, {}, tmp_path, sequences=40) == []


def test_an_initial_history_entered_with_its_parent_is_refused_at_its_line() -> None:
    """Entered by default as its parent's initial, after the start, the state would need its
    history there too: the spec cannot say that."""
    chart = HISTORIES.replace('name="hist" initial="idle"', 'name="hist" initial="outer"') \
        .replace('<state id="idle">', '<state id="outer"><state id="idle">') \
        .replace('<final id="end"/>', '</state><final id="end"/>') \
        .replace('<transition event="pause" target="idle"/>',
                 '<transition event="pause" target="outer"/>')
    imported = import_scxml("hist.scxml", chart.encode())
    assert imported.text is not None, imported.diagnostics  # `work` is not `outer`'s default
    chart = chart.replace('<state id="outer">', '<state id="outer" initial="work">')
    imported = import_scxml("hist.scxml", chart.encode())
    assert [(d.span.line, d.message) for d in imported.diagnostics] == [
        (7, "<state> `hd` of `work` (entered by default with `outer`): an initial <history> of "
            "a state entered by default as part of its parent's default entry has no "
            "equivalent")]


def test_a_delay_in_a_unit_scxml_does_not_have_is_named_as_such() -> None:
    imported = import_scxml("t.scxml", (
        b'<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="a">\n'
        b'<state id="a"><onentry><send event="t" delay="2h"/></onentry>\n'
        b'<transition event="t" target="b"/></state><final id="b"/></scxml>'))
    assert [(d.span.line, d.message, d.help) for d in imported.diagnostics] == [
        (2, "<send> delay `2h`: a delay in a unit SCXML does not have (its delays are CSS "
            "times: a number of `s` or `ms`)",
         'write it in seconds or milliseconds: `delay="7200s"` for two hours')]


def test_an_event_whose_transitions_are_all_dropped_stays_one_the_spec_lists(
        tmp_path: Path) -> None:
    """`*` before `foo`: SCXML takes `*` for `foo`; the spec keeps `foo` (with `*`'s
    alternative), so that a run is not told the spec has no such event."""
    chart = ('<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="a">\n'
             '<state id="a"><transition event="*" target="b"/>\n'
             '<transition event="foo" target="c"/>\n'
             '<transition event="bar" target="c"/></state>\n'
             '<state id="b"><transition event="back" target="a"/>'
             '<transition event="go" target="c"/></state>\n'
             '<state id="c"><transition event="back" target="a"/>'
             '<transition event="end" target="z"/></state><final id="z"/></scxml>\n')
    imported = import_scxml("star.scxml", chart.encode())
    assert imported.text is not None
    assert "foo: b" in imported.text and "bar: b" in imported.text
    assert divergences(chart, {}, tmp_path) == []


def test_an_initial_deeper_than_a_child_imports_when_the_way_down_is_the_default(
        tmp_path: Path) -> None:
    chart = ('<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="b1">\n'
             '<state id="a"><transition event="go" target="b"/></state>\n'
             '<state id="b"><state id="b1"><transition event="next" target="b2"/></state>\n'
             '<state id="b2"><transition event="back" target="a"/>'
             '<transition event="end" target="z"/></state></state><final id="z"/></scxml>\n')
    imported = import_scxml("deep.scxml", chart.encode())
    assert imported.text is not None and "initial: b\n" in imported.text
    assert divergences(chart, {}, tmp_path) == []
