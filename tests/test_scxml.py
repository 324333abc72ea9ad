"""SCXML in and out: `statechart render --format scxml` and `statechart import`.

A spec exported and imported again is the same model (the specs of this repository, every
conformance spec, random specs); what an SCXML document has that a spec cannot say is refused
at its line, and nothing is written; hostile XML (entity expansion, external entities) is
refused before it is expanded. Another engine runs the exported documents:
tests/test_scxml_engine.py.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from codegen_support import TRACED, checked_text, traced_spec
from conformance_traces import trace_files
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from test_soundness import _dump, _states_of, done_history_specs

from statechart.cli import main
from statechart.config import Config
from statechart.diagnostics import Span
from statechart.linter import check_file, check_source
from statechart.model import Spec
from statechart.scxml.export import scxml_text
from statechart.scxml.importer import import_scxml

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.yaml"))


def model(spec: Spec | None) -> Any:
    """The model without where things were written (spans, the file, its hash): what must
    survive the round trip. An overlay is compared as the spec it resolves to."""
    def view(value: Any) -> Any:
        if isinstance(value, Span):
            return None
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return (type(value).__name__, {
                f.name: view(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.name not in ("path", "source_sha256", "overlay")})
        if isinstance(value, dict):
            return {k: view(v) for k, v in value.items()}
        if isinstance(value, tuple | list):
            return tuple(view(v) for v in value)
        return value
    assert spec is not None
    return view(spec)


def round_trip(spec: Spec, config: Config | None = None) -> Spec:
    """Export, import, and check the result (which must pass, with `config`)."""
    imported = import_scxml("chart.scxml", scxml_text(spec, ["header"]).encode("utf-8"))
    assert imported.text is not None, [d.message for d in imported.diagnostics]
    back = check_source("back.yaml", imported.text.encode("utf-8"), config)
    assert not back.errors, [d.message for d in back.errors] + [imported.text]
    assert back.spec is not None
    return back.spec


def conformance_specs() -> list[tuple[str, str]]:
    return [(s["name"], s["yaml"]) for _, _, specs in trace_files() for s in specs]


CONFORMANCE = conformance_specs()


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_the_repositorys_specs_come_back_as_the_same_model(path: Path) -> None:
    spec = check_file(path).spec
    assert spec is not None
    assert model(round_trip(spec)) == model(spec)


# Every key of the format that SCXML has no place for, once: it travels in our namespace.
EVERY_KEY = """\
statechart: every_key
version: 3
description: "Quotes \\" and <angle> & ampersands,\\nline breaks\\tand tabs, \\x01 a control"
initial: open
record:
  reason: {enum: [spam, dup], default: spam, description: Why.}
  note: {type: string, context: true, default: "\\"quoted\\""}
  level: {type: number, default: 0.5}
  count: {type: integer, default: 3}
  flag: {type: boolean, default: false}
  due: {type: datetime}
states:
  open:
    description: "\\"starts with a quote"
    tags: [live, paused]
    status: active
    counter: opened
    limit: 4
    requires: [reason]
    clear: [note]
    entry: [a1, a2]
    exit: [a3]
    on:
      close:
        - {target: closed, guard: ok, set: [reason], clear: [note], description: x}
        - {target: closed, assign: {level: 1.5, count: 2, flag: true, note: "12"}}
      hold: {target: held, set: [due]}
    after:
      PT1M: [{target: closed, name: minute, actions: [a1]}]
      90s: closed
  held:
    on: {wake: open}
    always:
      - {target: closed, guard: expired, in: [held], clear: [note], actions: [a3], description: y}
      - {guard: late, assign: {flag: true}}
    after:
      due: {target: open, description: at the time set}
  closed: {final: true, tags: [done]}
rules:
  - {id: no-reopen, never: {from: closed, to: open}, description: "<never>", overridable: true}
  - only: {from: [open, {tag: paused}], to: [closed, held, open]}
  - unreachable: {from: {tag: done}, to: held}
migrations:
  - from_version: 1
    states: {waiting: held, done: closed}
    fields: {why: reason, old: null}
    fill: [level]
  - from_version: 2
    fields: {gone: null}
"""


def test_every_key_comes_back() -> None:
    spec = checked_text(EVERY_KEY)
    assert spec is not None
    assert model(round_trip(spec)) == model(spec)


# Every conformance spec (timers, `in:`, transition actions, targetless and internal
# transitions, completion, history) round trips; every tenth in the default run.
@pytest.mark.parametrize("name,text", [
    (n, t) if i % 10 == 0 else pytest.param(n, t, marks=pytest.mark.slow)
    for i, (n, t) in enumerate(CONFORMANCE)], ids=[n for n, _ in CONFORMANCE])
def test_conformance_specs_come_back_as_the_same_model(name: str, text: str) -> None:
    spec = traced_spec(text, f"{name}.yaml")
    assert spec is not None
    assert model(round_trip(spec, TRACED)) == model(spec)


@st.composite
def decorated_specs(draw: st.DrawFn) -> str:
    """A spec with completion, history, targetless and internal transitions
    (`done_history_specs`), and on random states and transitions what SCXML has no place for
    or writes differently: descriptions of any text, actions, timers (delays written in
    either syntax, named or not), tags, limits, record fields with defaults, `assign:`,
    `clear:`, `in:` conditions."""
    tree = yaml.load(draw(done_history_specs()), Loader=yaml.CBaseLoader)
    states = sorted(name for name, _ in _states_of(tree))
    leaves = sorted(name for name, body in _states_of(tree) if isinstance(body, dict)
                    and "states" not in body and body.get("final") != "true")
    text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
    tree.setdefault("record", {}).update({"note": {"type": "string", "default": draw(text), "context": "true"},
                      "level": {"type": "number", "context": "true",
                                "default": draw(st.sampled_from(["1.5", "-2", "0"]))}})
    for name, body in _states_of(tree):
        if not isinstance(body, dict):
            continue
        if draw(st.integers(0, 3)) == 0:
            body["description"] = draw(text)
        if draw(st.integers(0, 3)) == 0:
            body["exit"] = draw(st.lists(st.sampled_from(["log_it", "notify"]), min_size=1,
                                         max_size=2, unique=True))
        for alternatives in (body.get("on") or {}).values():
            for alt in alternatives if isinstance(alternatives, list) else [alternatives]:
                if not isinstance(alt, dict):
                    continue
                choice = draw(st.integers(0, 5))
                if choice == 0:
                    alt["actions"] = ["notify"]
                elif choice == 1:
                    alt["assign"] = {"note": draw(text)}
                elif choice == 2:
                    alt["clear"] = ["note"]
                elif choice == 3:  # a state active whenever the source is (in-never-active)
                    alt["in"] = [name]
                elif choice == 4:
                    alt["description"] = draw(text)
        if name in leaves and draw(st.integers(0, 2)) == 0:
            after: dict[str, Any] = {}
            for key in draw(st.lists(st.sampled_from(["1500ms", "PT2S", "3s", "1m"]),
                                     min_size=1, max_size=2, unique=True)):
                alt = {"target": draw(st.sampled_from(states))}
                if draw(st.booleans()):
                    alt["name"] = f"t{len(after)}_{name}"[:60]
                after[key] = alt
            body["after"] = after
    text_out = _dump(tree)
    assume(checked_text(text_out) is not None)
    return text_out


# Fixed examples, no shrinking (as test_soundness: a shrink of these specs runs for minutes).
RANDOM = settings(deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                         HealthCheck.data_too_large])


@settings(RANDOM, max_examples=8)
@given(text=decorated_specs())
def test_random_specs_come_back_as_the_same_model(text: str) -> None:
    spec = checked_text(text)
    assert spec is not None
    assert model(round_trip(spec)) == model(spec), text


@pytest.mark.slow
@settings(RANDOM, max_examples=150)
@given(text=decorated_specs())
def test_random_specs_come_back_as_the_same_model_long(text: str) -> None:
    test_random_specs_come_back_as_the_same_model.hypothesis.inner_test(text)  # type: ignore[attr-defined]


# -- the command line ------------------------------------------------------------------------
def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_render_then_import_on_the_command_line(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    chart, spec = tmp_path / "agent_run.scxml", tmp_path / "agent_run.yaml"
    code, out, err = run(capsys, "render", str(ROOT / "specs" / "agent_run.yaml"),
                         "--format", "scxml", "-o", str(chart))
    assert (code, out) == (0, "") and err == f"wrote {chart}\n"
    text = chart.read_text()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!-- Generated from ')
    assert "DO NOT EDIT" in text.split("<scxml")[0]
    code, out, err = run(capsys, "import", str(chart), "-o", str(spec))
    assert (code, out) == (0, "") and err == f"wrote {spec}\n"
    assert model(check_file(spec).spec) == model(check_file(ROOT / "specs" / "agent_run.yaml")
                                                 .spec)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent_run.scxml", "agent_run.yaml"]
    # Deterministic: the same bytes again.
    run(capsys, "render", str(ROOT / "specs" / "agent_run.yaml"), "-f", "scxml", "-o",
        str(tmp_path / "again.scxml"))
    assert (tmp_path / "again.scxml").read_text() == text


def test_a_spec_with_errors_is_not_exported(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("statechart: broken\nversion: 1\ninitial: a\nstates:\n"
                      "  a: {on: {go: b}}\n")
    code, out, err = run(capsys, "render", str(broken), "-f", "scxml")
    assert (code, out) == (1, "")
    assert "unknown-state" in err and "SCXML is written only for a spec without errors" in err


FOREIGN = """\
<?xml version="1.0" encoding="UTF-8"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:qt="http://www.qt.io/2015/02/scxml-ext"
       version="1.0" name="Door Lock" datamodel="ecmascript">
  <qt:editorinfo geometry="0;0;100;100"/>
  <state id="b1.1">
    <onentry><log label="entering"/><assign location="count" expr="count + 1"/></onentry>
    <transition event="open" cond="isAllowed" target="b1.2"/>
    <transition event="open" cond="In('b1.1') &amp;&amp; ready" target="b1.2"/>
    <transition event="open" target="locked"/>
  </state>
  <state id="b1.2">
    <onentry><send event="timeout" delay="1.5s" id="t1"/></onentry>
    <onexit><cancel sendid="t1"/></onexit>
    <transition event="timeout" target="locked"/>
    <transition event="error.hw" cond="retries &lt; 3" target="b1.1">
      <log label="retry" expr="retries"/>
    </transition>
  </state>
  <state id="locked">
    <initial><transition target="bolted"/></initial>
    <state id="bolted"><transition event="unbolt" target="free"/></state>
    <state id="free">
      <transition event="finish" target="closed"/>
      <transition event="again" target="bolted" type="internal"/>
    </state>
    <transition event="reset" target="locked.h"/>
    <history id="locked.h" type="deep"><transition target="bolted"/></history>
  </state>
  <final id="closed"/>
</scxml>
"""


def test_a_foreign_chart_is_imported_with_comments(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    chart = tmp_path / "door.scxml"
    chart.write_text(FOREIGN)
    code, out, err = run(capsys, "import", str(chart))
    assert (code, err) == (0, ""), err
    spec = checked_text(out)
    assert spec is not None
    assert spec.name == "door_lock" and spec.initial == "b1_1"
    assert list(spec.states) == ["b1_1", "b1_2", "locked", "bolted", "free", "closed"]
    first = spec.states["b1_1"]
    assert [(t.event, t.guard, t.in_states, t.target) for t in first.transitions] == [
        ("open", "isAllowed", (), "b1_2"), ("open", "ready", ("b1_1",), "b1_2"),
        ("open", None, (), "locked")]
    assert first.entry[0] == "entering" and len(first.entry) == 2
    retry, timer = spec.states["b1_2"].transitions  # `on:` first, then `after:`
    assert (timer.trigger, timer.delay_ms, timer.timer_id, timer.target) == (
        "after", 1500, "timeout", "locked")
    assert retry.event == "error.hw" and retry.guard == "retries_3" and len(retry.actions) == 1
    assert spec.states["locked"].initial == "bolted"
    assert [(t.event, t.history, t.target) for t in spec.states["locked"].transitions] == [
        ("reset", "deep", "locked")]
    # `again` is internal in SCXML only when its target is inside its compound source: not
    # here (free is atomic), so it stays external, and a comment says so.
    assert spec.states["free"].transitions[1].kind == "external"
    for comment in ("# SCXML id `b1.1`", "# SCXML name `Door Lock`",
                    "# guard `retries_3` stands for cond `retries < 3`: write it as a method",
                    '<assign location="count" expr="count + 1">',
                    'type="internal" dropped'):
        assert comment in out, comment


REFUSED = """\
<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="a">
  <datamodel><data id="x" expr="1"/></datamodel>
  <state id="a">
    <invoke type="http" src="https://example.com/job"/>
    <transition event="go" target="b"><raise event="inner"/></transition>
    <transition event="go stop" target="b"/>
  </state>
  <state id="b">
    <onentry><send event="ping" target="#_parent"/><script>x = 1</script></onentry>
    <transition event="*" target="a"/>
  </state>
</scxml>
"""


def test_what_a_spec_cannot_say_is_refused_at_its_line(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    chart, spec = tmp_path / "odd.scxml", tmp_path / "odd.yaml"
    chart.write_text(REFUSED)
    spec.write_text("kept\n")
    code, out, err = run(capsys, "import", str(chart), "-o", str(spec), "--format", "concise")
    assert (code, out) == (1, "")
    assert spec.read_text() == "kept\n"  # nothing written
    found = [list(m) for m in re.findall(r":(\d+):\d+: error\[scxml-import\]: ([^:]+):", err)]
    assert found == [["2", "<datamodel>"], ["4", "<invoke> in `a`"], ["5", "<raise>"],
                     ["9", "<send>"], ["9", "<script>"]], err
    code, _, err = run(capsys, "import", str(chart))  # the full format: a snippet and a help
    assert code == 1 and "help: start it from an entry action" in err
    assert "nothing written" in err


EVENTLESS = """\
<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="triaged">
  <state id="triaged">
    <transition event="cancel" target="closed"/>
    <transition cond="is_urgent" target="urgent"><log label="page_on_call"/></transition>
    <transition cond="ready and In('triaged')" target="routine"/>
    <transition event="" target="closed"/>
  </state>
  <state id="urgent">
    <initial><transition target="paged"/></initial>
    <state id="paged"><transition event="close" target="closed"/></state>
    <history id="h"><transition target="paged"/></history>
  </state>
  <state id="routine"><transition event="reopen" target="h"/></state>
  <final id="closed"/>
</scxml>
"""


def test_an_eventless_transition_is_imported_as_always(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    """A `<transition>` without `event` (or with an empty one) is an alternative of the
    state's `always:`, in document order; the transitions of `<initial>` and `<history>` are
    defaults, not eventless transitions."""
    chart = tmp_path / "triage.scxml"
    chart.write_text(EVENTLESS)
    code, out, err = run(capsys, "import", str(chart))
    assert (code, err) == (0, ""), err
    spec = checked_text(out)
    assert spec is not None
    triaged = spec.states["triaged"]
    assert [(t.trigger, t.event, t.guard, t.in_states, t.target, t.actions)
            for t in triaged.transitions] == [
        ("event", "cancel", None, (), "closed", ()),
        ("always", "always", "is_urgent", (), "urgent", ("page_on_call",)),
        ("always", "always", "ready", ("triaged",), "routine", ()),
        ("always", "always", None, (), "closed", ())]
    assert [t.trigger for s in ("urgent", "paged", "routine") for t in
            spec.states[s].transitions] == ["event", "event"]  # close, reopen
    # Exported again, the eventless ones are `<transition>`s without `event`.
    exported = scxml_text(spec, ["header"])
    assert '<transition cond="is_urgent" target="urgent">' in exported
    assert '<transition target="closed"/>' in exported
    assert 'event="always"' not in exported


def _chart(states: str) -> str:
    return (f'<scxml xmlns="{SCXML}" version="1.0">\n{states}</scxml>\n')


SCXML = "http://www.w3.org/2005/07/scxml"


@pytest.mark.parametrize("states,line,says", [
    ('<state id="p" initial="c">\n <state id="b"><state id="d"/><state id="c"/></state>\n'
     '</state>\n', 2, "initial `c` of `p`: an initial state deeper than a child that a state "
     "on the way does not enter by its own default"),
    ('<parallel id="p"><history id="h"><transition target="a1 b1"/></history>\n'
     ' <state id="a"><state id="a1"/></state><state id="b"><state id="b1"/></state>'
     '</parallel>\n', 2, "a history whose default enters several states"),
    ('<state id="p"><history id="h"><transition target="a"/></history>\n'
     ' <state id="a"/><state id="b"/>\n <transition event="go" target="h b"/></state>\n', 4,
     "a transition into a history and other states at once"),
    ('<state id="a"><onentry><send event="t" delay="1s"/></onentry></state>\n'
     '<state id="b"><transition event="t" target="a"/></state>\n', 3,
     "`t` on `b`, sent by `a` (line 2): a timer's event handled on another state"),
    ('<state id="a"><onentry><send event="t" delayexpr="wait"/></onentry>\n'
     ' <transition event="t" target="a"/></state>\n', 2, "a timer whose delay is an expression"),
    ('<state id="a"><onentry>\n <send event="t" delay="1s"/>\n <send event="u" delay="1000ms"/>'
     '\n</onentry><transition event="t" target="a"/></state>\n', 4,
     "a second timer of a state with the same delay"),
    ('<state id="p"><state id="a"/>\n <transition event="done.state.q" target="a"/></state>\n',
     3, "a completion event handled on another state"),
])
def test_each_refusal_names_its_element_and_line(states: str, line: int, says: str) -> None:
    imported = import_scxml("chart.scxml", _chart(states).encode())
    assert imported.text is None
    assert [(d.rule, d.span.line) for d in imported.diagnostics] == [("scxml-import", line)]
    assert says in imported.diagnostics[0].message, imported.diagnostics[0].message


@pytest.mark.parametrize("document,says", [
    ('<?xml version="1.0"?>\n<!DOCTYPE scxml [\n <!ENTITY a "aaaaaaaaaa">\n'
     ' <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n<scxml version="1.0">&b;</scxml>\n',
     "has a DTD"),
    ('<?xml version="1.0"?>\n<!DOCTYPE scxml SYSTEM "file:///etc/passwd">\n<scxml/>\n',
     "has a DTD"),
    ('<scxml xmlns="http://www.w3.org/2005/07/scxml">&secret;</scxml>\n', "undefined entity"),
    ('<scxml xmlns="http://www.w3.org/2005/07/scxml"><state id="a"></scxml>\n',
     "mismatched tag"),
    ('<svg xmlns="http://www.w3.org/2000/svg"/>\n', "not <scxml>"),
])
def test_hostile_or_broken_xml_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          document: str, says: str) -> None:
    chart = tmp_path / "bad.scxml"
    chart.write_text(document)
    code, out, err = run(capsys, "import", str(chart), "-o", str(tmp_path / "out.yaml"))
    assert (code, out) == (1, "")
    assert f"{chart}:" in err and "error[scxml-import]" in err and says in err
    assert not (tmp_path / "out.yaml").exists()


def test_a_missing_file_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    code, out, err = run(capsys, "import", str(tmp_path / "none.scxml"))
    assert (code, out) == (2, "")
    assert "statechart import: no such file or folder" in err
