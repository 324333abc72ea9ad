"""`statechart render`: what a user types and sees (exit codes, files, messages)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).resolve().parent.parent
AGENT_RUN = str(ROOT / "specs" / "agent_run.yaml")
NESTED = str(ROOT / "tests" / "render_cases" / "nested_parallel.yaml")


def run(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, str]:
    code = main(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out, err.decode()


def test_svg_to_stdout_has_header_and_parses(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, _ = run(capsysbinary, "render", AGENT_RUN)
    assert code == 0
    root = ET.fromstring(out)
    assert root.tag.endswith("svg")
    assert b"<!-- Generated from " in out and b"DO NOT EDIT. -->" in out


@pytest.mark.parametrize("fmt,start", [("dot", b"// Generated"), ("mermaid", b"stateDiagram-v2")])
def test_text_formats(capsysbinary: pytest.CaptureFixture[bytes], fmt: str, start: bytes) -> None:
    code, out, _ = run(capsysbinary, "render", NESTED, "--format", fmt, "-o", "-")
    assert code == 0 and out.startswith(start)


def test_png_to_file(capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path) -> None:
    target = tmp_path / "out.png"
    code, _, err = run(capsysbinary, "render", AGENT_RUN, "-f", "png", "-o", str(target))
    assert code == 0 and target.read_bytes().startswith(b"\x89PNG")
    assert "wrote" in err


def test_highlight_unknown_state_is_usage_error(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = run(capsysbinary, "render", AGENT_RUN, "--highlight", "runing")
    assert code == 2 and out == b""
    assert "no state `runing`" in err and "did you mean `running`" in err


@pytest.mark.parametrize("record", [{"status": "waiting_for_input"},
                                    {"configuration": ["interrupted", "waiting_for_input"]}])
def test_highlight_from_run_record(capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path,
                                   record: dict) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"runId": "r1", **record}))
    for option in ("--record", "--highlight"):
        code, out, _ = run(capsysbinary, "render", AGENT_RUN, "-f", "mermaid", option, str(path))
        assert code == 0
        assert b'state "waiting_for_input (current)"' in out
        assert b"interrupted #60;#60;paused#62;#62; (current)" in out
        assert b'state "suspended"' in out


def test_bad_record_is_usage_error(capsysbinary: pytest.CaptureFixture[bytes],
                                   tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text("{not json")
    code, _, err = run(capsysbinary, "render", AGENT_RUN, "--record", str(path))
    assert code == 2 and "not JSON" in err


def test_spec_with_errors_is_drawn_as_a_work_in_progress(
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    bad = str(ROOT / "tests" / "render_cases" / "hostile_labels.yaml")
    code, out, err = run(capsysbinary, "render", bad, "-f", "dot")
    assert code == 0 and b"work in progress</B>" in out
    assert "hostile_labels.yaml:" in err and ": error[invalid-name]: " in err
    assert "drawn as a work in progress" in err


def test_missing_spec_is_usage_error(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, _, err = run(capsysbinary, "render", "no/such.yaml")
    assert code == 2 and err == "statechart render: no such file or folder: no/such.yaml\n"


def test_missing_engine(capsysbinary: pytest.CaptureFixture[bytes],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    from statechart.render import layout

    monkeypatch.setitem(layout.ENGINES, "dot", "no-such-dot-program-xyz")
    code, _, err = run(capsysbinary, "render", AGENT_RUN, "--engine", "dot")
    assert code == 1  # the program is missing: not a usage error
    assert err.count("\n") == 1 and "install Graphviz" in err


def test_a_layout_that_times_out_is_a_runtime_error(capsysbinary: pytest.CaptureFixture[bytes]
                                                    ) -> None:
    """It exited 2, the usage-error code, though the command line was fine."""
    code, out, err = run(capsysbinary, "render", AGENT_RUN, "--timeout", "0.001")
    assert (code, out) == (1, b"")
    assert err.startswith("statechart render: graphviz-pure took longer than 0.001s")
    assert err.count("\n") == 1


# Spec text that a terminal would act on: CSI colour, OSC 52 (sets the clipboard), a C1 CSI,
# and a bidi override (reorders what is shown), as YAML escapes in double-quoted scalars.
HOSTILE = r"\e[31mred\e[0m \e]52;c;aGVsbG8=\a \x9b2J \u202Eevil\u202C"


def _raw(text: str) -> list[str]:
    """The characters a terminal or a CI log would interpret rather than show."""
    return [c for c in text if not c.isprintable() and c not in "\n\t"]


def _hostile_spec(tmp_path: Path, state: str = "a") -> Path:
    spec = tmp_path / "hostile.yaml"
    spec.write_text(f'''statechart: hostile
version: 1
description: "spec {HOSTILE}"
initial: "{state}"
states:
  "{state}":
    description: "state {HOSTILE}"
    on: {{go: {{target: b, description: "edge {HOSTILE}"}}}}
  b: {{final: true}}
''')
    return spec


@pytest.mark.parametrize("fmt", ["dot", "svg", "mermaid"])
def test_spec_text_in_a_diagram_is_escaped(capsysbinary: pytest.CaptureFixture[bytes],
                                           tmp_path: Path, fmt: str) -> None:
    code, out, err = run(capsysbinary, "render", str(_hostile_spec(tmp_path)), "-f", fmt)
    assert code == 0, err
    text = out.decode()
    assert _raw(text) == [] and _raw(err) == []
    if fmt != "mermaid":  # Mermaid shows no descriptions
        # Controls become spaces (as before); the bidi override is shown as `check` shows it.
        assert "state [31mred [0m ]52;c;aGVsbG8= 2J " in text
        assert "<U+202E>evil<U+202C>" in text or "&lt;U+202E&gt;evil&lt;U+202C&gt;" in text


def test_spec_text_in_render_errors_is_escaped(capsysbinary: pytest.CaptureFixture[bytes],
                                               tmp_path: Path) -> None:
    spec = str(_hostile_spec(tmp_path, state=r"a\e]52;c;aGVsbG8=\a\u202E"))
    code, out, err = run(capsysbinary, "render", spec)
    assert code == 0 and b"work in progress" in out  # drawn, its names escaped there too
    assert "error[invalid-name]" in err and "a<U+001B>]52;c;aGVsbG8=<U+0007><U+202E>" in err
    assert _raw(err) == [] and _raw(out.decode()) == []


def test_highlight_names_from_a_record_are_escaped(capsysbinary: pytest.CaptureFixture[bytes],
                                                    tmp_path: Path) -> None:
    record = tmp_path / "run.json"
    record.write_text(json.dumps({"status": "x\x1b]52;c;aGVsbG8=\x07\u202e"}))
    for option in ("--record", "--highlight"):
        code, _, err = run(capsysbinary, "render", AGENT_RUN, "-f", "dot", option, str(record))
        assert code == 2 and "no state `x<U+001B>]52;c;aGVsbG8=<U+0007><U+202E>`" in err
        assert _raw(err) == []
    code, _, err = run(capsysbinary, "render", AGENT_RUN, "--highlight", "\x9b2J\u202e")
    assert code == 2 and "<U+009B>2J<U+202E>" in err and _raw(err) == []


def test_resolve_escapes_spec_text_and_keeps_its_value(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    from statechart.linter import check_file

    spec = _hostile_spec(tmp_path)
    code = main(["resolve", str(spec)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert _raw(out) == [] and _raw(err) == []
    # The escapes are YAML's own, so the printed spec reads back as the same spec.
    again = tmp_path / "again.yaml"
    again.write_text(out)
    before, after = check_file(spec).spec, check_file(again).spec
    assert before is not None and after is not None
    assert after.description == before.description and "\u202e" in after.description
    assert after.states["a"].description == before.states["a"].description
    assert [t.description for t in after.transitions()] == \
        [t.description for t in before.transitions()]


def test_resolve_errors_are_escaped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = _hostile_spec(tmp_path, state=r"a\e]52;c;aGVsbG8=\a\u202E")
    code = main(["resolve", str(spec)])
    out, err = capsys.readouterr()
    assert code == 1 and "error[invalid-name]" in err and out == ""
    assert _raw(out) == [] and _raw(err) == []


# Characters XML 1.0 forbids (C0 controls, U+FFFE/U+FFFF noncharacters) or that a viewer acts
# on, as YAML escapes: a description with U+FFFE passed `check` and made an SVG that did not
# parse (fixed when labels.one_line started showing such characters as `<U+FFFE>`).
NOT_XML = r"\x01\x08\x0b\x0c\x1b\x7f\x85\x9b\xad\u200b\u2028\u202e\ufdd0\ufeff\ufffe\uffff" \
          r"\U0001FFFE\U0010FFFF\ue000"


def test_svg_is_well_formed_xml_whatever_the_spec_text(capsysbinary: pytest.CaptureFixture[bytes],
                                                       tmp_path: Path) -> None:
    from statechart.linter import check_file
    from statechart.render import docs

    spec = tmp_path / f"odd{chr(0xfffe)}name.yaml"
    spec.write_text(f'''statechart: odd
version: 1
description: "spec {NOT_XML}"
initial: a
states:
  a:
    description: "state {NOT_XML}"
    on: {{go: {{target: b, description: "edge {NOT_XML}"}}}}
  b: {{final: true}}
''', encoding="utf-8")
    checked = check_file(spec)
    assert checked.spec is not None and not checked.errors
    code, out, err = run(capsysbinary, "render", str(spec))
    assert code == 0, err
    for svg in (out, docs.outputs(checked.spec)["docs/specs/odd.svg"]):
        ET.fromstring(svg)  # raises ParseError when not well-formed
        assert "<U+FFFE>" in svg.decode() or "&lt;U+FFFE&gt;" in svg.decode()


def test_resolve_escapes_the_extends_chain(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    """The header names every file of the `extends` chain; a base's file name is spec text."""
    base = "base\x1b]52;c;aGVsbG8=\x07\u202e"
    (tmp_path / f"{base}.yaml").write_bytes((ROOT / "specs" / "agent_run.yaml").read_bytes())
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text('extends: "base\\e]52;c;aGVsbG8=\\a\\u202E"\nstatechart: overlay\n'
                       'version: 1\n', encoding="utf-8")
    code = main(["resolve", str(overlay)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    header = out.splitlines()[0]
    assert header.startswith("# Resolved from ") and _raw(out) == [] and _raw(err) == []
    assert "base<U+001B>]52;c;aGVsbG8=<U+0007><U+202E>.yaml" in header


def _spec_with_transitions(tmp_path: Path, states: int, events: int) -> Path:
    """A flat spec: `states` states in a chain, each with `events` events to the next one."""
    lines = ["statechart: many", "version: 1", "initial: s0", "states:"]
    for i in range(states):
        target = f"s{i + 1}" if i + 1 < states else "done"
        lines.append(f"  s{i}: {{on: {{{', '.join(f'e{j}: {target}' for j in range(events))}}}}}")
    spec = tmp_path / "many.yaml"
    spec.write_text("\n".join([*lines, "  done: {final: true}"]) + "\n")
    return spec


def test_render_refuses_a_spec_over_the_layout_bound(capsysbinary: pytest.CaptureFixture[bytes],
                                                     tmp_path: Path) -> None:
    """A clear error at once, not a layout that runs for minutes; DOT and Mermaid still work."""
    spec = str(_spec_with_transitions(tmp_path, 101, 10))  # 1,010 transitions
    code, out, err = run(capsysbinary, "render", spec)
    assert (code, out) == (1, b"") and err.count("\n") == 1
    assert err.startswith("statechart render: 1,010 transitions exceed the layout bound of "
                          "1,000: ") and "--format dot or mermaid" in err
    code, out, _ = run(capsysbinary, "render", spec, "-f", "dot")
    assert code == 0 and b"xlabel=" in out and b"nslimit=1" in out
    code, out, _ = run(capsysbinary, "render", AGENT_RUN, "-f", "dot",
                       "--layout-max-transitions", "20")
    assert code == 0
    code, out, err = run(capsysbinary, "render", AGENT_RUN, "--layout-max-transitions", "20")
    assert code == 1 and "30 transitions exceed the layout bound of 20" in err


def test_render_lays_a_medium_spec_out_with_the_fast_settings(
        capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path) -> None:
    spec = str(_spec_with_transitions(tmp_path, 30, 4))  # 120 transitions
    code, out, _ = run(capsysbinary, "render", spec, "-f", "dot")
    assert code == 0 and b"splines=line" in out and b"xlabel=" in out
    code, out, err = run(capsysbinary, "render", spec)
    assert code == 0, err
    ET.fromstring(out)
    code, out, _ = run(capsysbinary, "render", AGENT_RUN, "-f", "dot")  # 26: full settings
    assert code == 0 and b"nslimit" not in out and b"xlabel" not in out


def test_render_layout_runs_under_a_memory_cap(capsysbinary: pytest.CaptureFixture[bytes],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATECHART_LAYOUT_MAX_MEMORY_MB", "1")
    code, out, err = run(capsysbinary, "render", AGENT_RUN)
    assert (code, out) == (1, b"")
    assert "1 MiB memory cap" in err and err.count("\n") == 1
