"""`statechart check`, `rule` and `schema` as a user runs them: output formats and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from statechart.cli import main
from statechart.cli.rule import rules_markdown
from statechart.rules import RULES, documentation

ROOT = Path(__file__).parent.parent
CASES = ROOT / "tests" / "cases"
BROKEN = CASES / "unknown-state" / "typos.yaml"
WARN_ONLY = CASES / "unused-field" / "never_set.yaml"
OK = CASES / "ok" / "agent_like.yaml"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_specs_folder_passes(capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(capsys, "check")
    assert (code, err) == (0, "")
    assert "no problems" in out


def test_full_format_shows_source_line_caret_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(BROKEN))
    assert code == 1
    assert f"--> {BROKEN}:6:14" in out
    assert "6 |     on: {go: runing}" in out
    assert "  |              ^^^^^^" in out
    assert "help: did you mean `running`?" in out
    assert out.rstrip().endswith("Found 5 errors and 0 warnings.")


def test_json_format_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--format", "json", str(BROKEN), str(WARN_ONLY))
    items = json.loads(out)
    assert code == 1
    assert {tuple(sorted(i)) for i in items} == {tuple(sorted(
        ["file", "line", "column", "end_line", "end_column", "rule", "severity", "message",
         "help"]))}
    first = items[0]
    assert (first["line"], first["column"], first["rule"]) == (3, 10, "unknown-state")
    assert first["end_column"] == 14  # `idel` spans 4 columns
    assert {i["severity"] for i in items} == {"error", "warning"}


def test_concise_format(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--format", "concise", str(BROKEN))
    assert out.splitlines()[0] == (
        f"{BROKEN}:3:10: error[unknown-state]: initial state `idel` is not a state of this spec")


def test_github_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--format", "github", str(BROKEN))
    line = out.splitlines()[0]
    assert line.startswith(f"::error title=unknown-state,file={BROKEN},line=3,col=10,")
    assert "%0Ahelp: did you mean `idle`?" in line


def test_sarif(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--format", "sarif", str(BROKEN))
    log = json.loads(out)
    result = log["runs"][0]["results"][0]
    assert log["version"] == "2.1.0"
    assert result["ruleId"] == "unknown-state"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]} == set(RULES)


@pytest.mark.parametrize("name", ["a b#%25 c.yaml", "x?y[1]\u00e9.yaml"])
def test_sarif_uri_is_percent_encoded(capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      name: str) -> None:
    """`artifactLocation.uri` is a URI reference: a `#`, `%`, `?` or space in a file name is
    encoded, so the name reads back whole (it read back as `specs/a b`)."""
    from urllib.parse import unquote, urlsplit

    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / name).write_bytes(BROKEN.read_bytes())
    monkeypatch.chdir(tmp_path)
    _, out, _ = run(capsys, "check", "--format", "sarif", f"specs/{name}")
    uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    parts = urlsplit(uri)
    assert (parts.scheme, parts.query, parts.fragment) == ("", "", "")
    assert unquote(parts.path) == f"specs/{name}"


def test_warnings_fail_only_with_strict(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check", str(WARN_ONLY))[0] == 0
    assert run(capsys, "check", "--strict", str(WARN_ONLY))[0] == 1


def test_a_broken_file_does_not_stop_the_others(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    (tmp_path / "a_garbage.yaml").write_bytes(b"\x00\xff\xfe garbage")
    (tmp_path / "b_broken.yaml").write_text(BROKEN.read_text())
    (tmp_path / "c_ok.yml").write_text(OK.read_text())
    code, out, _ = run(capsys, "check", "--format", "concise", str(tmp_path))
    *lines, summary = out.splitlines()
    files = {line.split(":")[0] for line in lines}
    assert code == 1
    assert summary == "Found 6 errors and 0 warnings."
    assert files == {str(tmp_path / "a_garbage.yaml"), str(tmp_path / "b_broken.yaml")}


def test_missing_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--format", "concise", "no/such.yaml", str(OK))
    assert (code, out) == (2, "")  # every command alike: tests/test_cli_paths.py
    assert err == "statechart check: no such file or folder: no/such.yaml\n"


def test_usage_error_exits_2() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["check", "--format", "xml"])
    assert exc.value.code == 2


def test_rule_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rule", "terminal-exit")
    assert code == 0
    assert out.startswith("terminal-exit (error)\n\nA final state has transitions of its own.")
    code, _, err = run(capsys, "rule", "terminal-exits")
    assert code == 2
    assert "did you mean `terminal-exit`?" in err


@pytest.mark.parametrize("rule_id", list(RULES))
def test_every_rule_is_documented(rule_id: str) -> None:
    doc = documentation(rule_id)
    for section in ("What:", "Why:", "Example:", "Fix:"):
        assert section in doc, f"{rule_id} lacks {section}"


def test_rules_md_is_generated_from_docstrings() -> None:
    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown()


def test_console_script_and_module_entry() -> None:
    done = subprocess.run([sys.executable, "-m", "statechart", "check", "--format", "concise",
                           str(BROKEN)], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stdout.count("error[") == 5


def test_a_spec_named_index_is_refused_since_its_page_is_the_index(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = tmp_path / "index.yaml"
    spec.write_text(OK.read_text().replace("statechart: full_demo", "statechart: index"))
    code, out, _ = run(capsys, "check", "--format", "concise", str(spec))
    assert code == 1
    assert "error[invalid-name]: spec name `index` is reserved" in out
