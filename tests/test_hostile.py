"""The hostile corpus (tests/hostile/): every file is checked without raising, within a hang
guard, and gets positioned diagnostics with the rule ids its entry in expected.json names.

Inputs too big to commit (a 20 MB spec, a multi-megabyte single line) are generated here into
tmp_path. `make_corpus.py` in the corpus folder regenerates the committed files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statechart.linter import FileResult, check_file, check_source
from statechart.rules import RULES

CORPUS = Path(__file__).parent / "hostile"
EXPECTED: dict[str, dict] = json.loads((CORPUS / "expected.json").read_text("utf-8"))["files"]
FILES = sorted(p.name for p in CORPUS.glob("*.yaml"))
HANG_GUARD_S = 30.0  # not a speed test: a hang (a check under 1 s idle; 10 s seen on a loaded machine)

# Files whose entry has `known_bug` expose a reported checker bug. While the bug is open their
# expectations are xfail(strict=True): fixing the bug makes the test pass and strict xfail
# fails, the signal to delete the `known_bug` line from expected.json.
XFAIL_KNOWN_BUGS = True


def _timed_check(path: Path) -> tuple[FileResult, float]:
    start = time.perf_counter()
    result = check_file(path)
    return result, time.perf_counter() - start


def _lines(raw: bytes) -> list[str]:
    text = raw.decode("utf-8", "replace").removeprefix("\ufeff")
    return text.split("\n")


def assert_well_formed(result: FileResult, raw: bytes) -> None:
    """Every diagnostic: a known rule id, a severity, a message and a position inside the file
    (lines counted at "\\n" like editors and CI annotations do)."""
    lines = _lines(raw)
    for d in result.diagnostics:
        where = f"{d.rule} {d.span.line}:{d.span.column} {d.message!r}"
        assert d.rule in RULES, where
        assert d.severity in ("error", "warning"), where
        assert d.message, where
        assert isinstance(d.help, str), where
        assert d.span.file == result.path, where
        assert 1 <= d.span.line <= len(lines), f"line outside the file ({len(lines)}): {where}"
        assert 1 <= d.span.column <= len(lines[d.span.line - 1]) + 1, \
            f"column outside line {d.span.line} ({len(lines[d.span.line - 1])} chars): {where}"
        assert (d.span.end_line, d.span.end_column) >= (d.span.line, d.span.column), where


def check_expectations(name: str, result: FileResult) -> None:
    exp = EXPECTED[name]
    got_rules = {d.rule for d in result.diagnostics}
    report = "\n".join(f"  {d.rule}@{d.span.line}:{d.span.column} {d.message} | {d.help}"
                       for d in result.diagnostics)
    if "rules" in exp:
        assert got_rules == set(exp["rules"]), f"{name}:\n{report}"
        if not exp["rules"]:
            assert result.diagnostics == [] and result.spec is not None, report
    else:
        missing = set(exp.get("rules_include", ())) - got_rules
        assert not missing, f"{name}: missing {missing}\n{report}"
        assert result.errors, f"{name}: expected at least one error\n{report}"
    starts = {f"{d.rule}@{d.span.line}:{d.span.column}" for d in result.diagnostics}
    for at in exp.get("at", ()):
        assert at in starts, f"{name}: no {at}\n{report}"
    for text in exp.get("help", ()):
        assert any(text in d.help for d in result.diagnostics), f"{name}: help {text!r}\n{report}"
    for text in exp.get("message", ()):
        assert any(text in d.message for d in result.diagnostics), \
            f"{name}: message {text!r}\n{report}"


def _params() -> list[object]:
    out = []
    for name in FILES:
        bug = EXPECTED.get(name, {}).get("known_bug")
        marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug and XFAIL_KNOWN_BUGS else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def test_every_file_has_an_expectation() -> None:
    assert set(FILES) == set(EXPECTED)
    assert len(FILES) >= 40


@pytest.mark.parametrize("name", _params())
def test_hostile_file(name: str) -> None:
    path = CORPUS / name
    result, seconds = _timed_check(path)
    assert seconds < HANG_GUARD_S, f"{name} took {seconds:.1f} s"
    assert_well_formed(result, path.read_bytes())
    check_expectations(name, result)


# -- targeted repros of bugs found with the corpus (kept small, one fact each) ---------------

HEADER = "statechart: x\nversion: 1\ninitial: a\nstates:\n"


@pytest.mark.parametrize("states", [
    "  a: {on: {go: b}}\n  b: {states: {}}\n  z: {final: true}\n",
    "  a: {on: {go: b}}\n  b: {states: []}\n  z: {final: true}\n",
    "  a: {on: {go: b}}\n  b: {initial: c, states: 7}\n  z: {final: true}\n",
], ids=["empty-map", "list", "scalar"])
def test_compound_state_without_usable_children_does_not_crash(states: str) -> None:
    # Graph.__init__ took `state.children[0]` of a compound state with no children: IndexError.
    result = check_source("t.yaml", (HEADER + states).encode())
    assert "schema" in {d.rule for d in result.diagnostics}


def test_duplicate_child_is_not_called_a_non_child() -> None:
    # `down: {initial: wait, states: {wait: ...}}` where `wait` also exists elsewhere: the
    # duplicate is reported, but "initial state `wait` is not a child of `down`" (help
    # "children: " empty) is false about the file as written.
    result = check_file(CORPUS / "duplicate_state_nested.yaml")
    messages = [d.message for d in result.diagnostics]
    assert not any("is not a child of" in m for m in messages), messages


@pytest.mark.parametrize("src", [b"statechart: x\nversion: .inf\n", b".inf: x\n",
                                 b"-.Inf: x\n", b"+.INF: x\n"])
def test_infinity_scalars_do_not_crash(src: bytes) -> None:
    # scalar_value turned `.inf` into ".inf" again before float(): ValueError (found by
    # tests/test_property_check.py).
    result = check_source("t.yaml", src)
    assert result.diagnostics


@pytest.mark.parametrize("src", [b"[", b"statechart: x\nversion: 1\ni", b"a: {b"])
def test_error_at_end_of_file_without_newline_is_inside_the_file(src: bytes) -> None:
    # libyaml reports an error at the end of input as (last line + 1):1 when the file has no
    # final newline: a line that editors and CI annotations do not have.
    result = check_source("t.yaml", src)
    assert_well_formed(result, src)


# -- generated inputs, too large to commit ---------------------------------------------------

def _flat_spec(n: int, description: str = "") -> str:
    lines = ["statechart: big", "version: 1", "initial: s0", "states:"]
    for i in range(n):
        lines.append(f"  s{i}:")
        if description:
            lines.append(f"    description: {description}")
        lines.append(f"    on: {{go{i}: s{i + 1}}}" if i + 1 < n else f"    on: {{go{i}: done}}")
    lines.append("  done: {final: true}")
    return "\n".join(lines) + "\n"


def test_twenty_megabyte_spec_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    text = _flat_spec(1000, description="x" * 20_000)
    assert len(text) > 20_000_000
    path.write_text(text, encoding="utf-8")
    result, seconds = _timed_check(path)
    assert seconds < HANG_GUARD_S
    assert [(d.rule, d.span.line, d.span.column) for d in result.diagnostics] == \
        [("yaml-syntax", 1, 1)]
    assert "limit" in result.diagnostics[0].message


def test_huge_single_line_valid_spec(tmp_path: Path) -> None:
    # The whole spec on one line (a flow mapping, about 1 MB): valid, no findings.
    n = 20_000
    states = ", ".join(f"s{i}: {{on: {{go: s{i + 1}}}}}" for i in range(n - 1))
    text = (f"{{statechart: line, version: 1, initial: s0, states: {{{states}, "
            f"s{n - 1}: {{on: {{go: done}}}}, done: {{final: true}}}}}}")
    assert "\n" not in text and len(text) > 500_000
    path = tmp_path / "line.yaml"
    path.write_text(text, encoding="utf-8")
    result, seconds = _timed_check(path)
    assert seconds < HANG_GUARD_S
    assert result.diagnostics == []


def test_huge_single_line_with_an_error_at_its_end(tmp_path: Path) -> None:
    description = "y" * 2_000_000
    text = (HEADER + f"  a:\n    description: {description}\n    on: {{go: nowhere}}\n"
            "  z: {final: true}\n")
    path = tmp_path / "line.yaml"
    path.write_text(text, encoding="utf-8")
    result, seconds = _timed_check(path)
    assert seconds < HANG_GUARD_S
    assert_well_formed(result, path.read_bytes())
    assert "unknown-state@7:14" in {f"{d.rule}@{d.span.line}:{d.span.column}"
                                    for d in result.diagnostics}


def test_deep_flow_nesting_a_million_levels(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("states: " + "[" * 1_000_000 + "]" * 1_000_000 + "\n", encoding="utf-8")
    result, seconds = _timed_check(path)
    assert seconds < HANG_GUARD_S
    assert {d.rule for d in result.diagnostics} == {"yaml-syntax"}
    assert_well_formed(result, path.read_bytes())


# -- the command line over the whole corpus --------------------------------------------------

def _statechart() -> list[str]:
    exe = Path(sys.executable).with_name("statechart")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("statechart")
    if found:
        return [found]
    return [sys.executable, "-m", "statechart"]


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "github", "sarif"])
def test_cli_on_the_whole_corpus(fmt: str) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)
    env.pop("STATECHART_OUTPUT_FORMAT", None)
    start = time.perf_counter()
    proc = subprocess.run([*_statechart(), "check", "--format", fmt, str(CORPUS)],
                          capture_output=True, env=env, timeout=120)
    seconds = time.perf_counter() - start
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr[-3000:]
    assert proc.returncode == 1, (proc.returncode, stderr[-2000:])
    assert seconds < 60
    stdout = proc.stdout.decode("utf-8")  # the output itself must be valid UTF-8
    if fmt == "json":
        found = json.loads(stdout)
        files = {Path(d["file"]).name for d in found}
        expected_bad = {n for n, e in EXPECTED.items() if e.get("rules", ["x"]) != []}
        assert expected_bad <= files
        assert all(d["rule"] in RULES for d in found)
    elif fmt == "sarif":
        sarif = json.loads(stdout)
        assert sarif["runs"][0]["results"]


@pytest.mark.parametrize("fmt", ["full", "concise", "github"])
def test_cli_text_output_is_inert(fmt: str) -> None:
    """A hostile spec must not reach the terminal: no ESC sequences, NUL, bidi overrides or
    line separators copied from the file into text output (messages or source snippets)."""
    import unicodedata

    names = ["control_escape.yaml", "bidi_override.yaml", "invisible_chars.yaml",
             "nul_byte.yaml", "binary_garbage.yaml", "utf16be_no_bom.yaml",
             "line_separator_in_scalar.yaml"]
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)
    proc = subprocess.run([*_statechart(), "check", "--format", fmt,
                           *(str(CORPUS / n) for n in names)],
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 1
    out = proc.stdout.decode("utf-8")
    bad = sorted({f"U+{ord(c):04X}" for c in out
                  if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")})
    assert not bad, f"raw characters copied to {fmt} output: {bad}"
