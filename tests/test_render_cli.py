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


def test_spec_with_errors_exits_1_with_diagnostics(
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    bad = str(ROOT / "tests" / "render_cases" / "hostile_labels.yaml")
    code, out, err = run(capsysbinary, "render", bad)
    assert code == 1 and out == b""
    assert "hostile_labels.yaml:" in err and ": error[invalid-name]: " in err


def test_missing_spec_is_usage_error(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, _, err = run(capsysbinary, "render", "no/such.yaml")
    assert code == 2 and "no such spec file" in err


def test_missing_engine(capsysbinary: pytest.CaptureFixture[bytes],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    from statechart.render import layout

    monkeypatch.setitem(layout.ENGINES, "dot", "no-such-dot-program-xyz")
    code, _, err = run(capsysbinary, "render", AGENT_RUN, "--engine", "dot")
    assert code == 2
    assert err.count("\n") == 1 and "install Graphviz" in err
