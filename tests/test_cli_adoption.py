"""The command line as a team adopts it: start-up cost, colour, which stream says what, and the
pre-commit hooks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).parent.parent
BROKEN = ROOT / "tests" / "cases" / "unknown-state" / "typos.yaml"
OK = ROOT / "tests" / "cases" / "ok" / "agent_like.yaml"
HEAVY = ("yaml", "jinja2", "statemachine")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["check", "--help"]])
def test_version_and_help_import_no_heavy_dependency(argv: list[str]) -> None:
    probe = ("import sys\nfrom statechart.cli import main\n"
             f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
             "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    modules = done.stderr.rsplit("MODULES ", 1)[1].split()
    assert done.stdout  # the version or the help was printed
    loaded = [m for m in modules if m.split(".")[0] in HEAVY]
    assert loaded == []
    assert [m for m in modules if m.startswith("statechart.cli.") and m != "statechart.cli.check"] == []


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt", ["full", "concise"])
def test_check_prints_diagnostics_and_summary_on_stdout(
        capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, err = _run(capsys, "check", "--format", fmt, str(OK))
    assert (code, err) == (0, "")
    if fmt == "full":
        assert out == "1 spec checked: no problems.\n"
    code, out, err = _run(capsys, "check", "--format", fmt, str(BROKEN))
    assert (code, err) == (1, "")
    assert "error[unknown-state]" in out
    if fmt == "full":
        assert out.endswith("Found 5 errors and 0 warnings.\n")


def test_diff_summary_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "diff", str(OK), str(OK))
    assert (code, out, err) == (0, "the specs compared: no changes.\n", "")


def test_resolve_keeps_stdout_for_the_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "resolve", str(BROKEN))
    assert (code, out) == (1, "")
    assert "error[unknown-state]" in err


def test_usage_errors_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["check", "no/such.yaml"], ["diff", str(OK)], ["build", "no/such"]):
        code, out, err = _run(capsys, *argv)
        assert (code, out) == (2, "") and err


def _readme_hook_configs() -> list[dict[str, object]]:
    import re

    import yaml

    text = (ROOT / "README.md").read_text()
    section = text.split("## Pre-commit", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert blocks
    return [yaml.safe_load(block) for block in blocks]


def test_readme_pre_commit_snippets_are_true_for_this_repository() -> None:
    hooks = yaml_load(ROOT / ".pre-commit-hooks.yaml")
    ids = {hook["id"] for hook in hooks}
    tags = subprocess.run(["git", "tag"], cwd=ROOT, capture_output=True, text=True,
                          check=False).stdout.split()
    for config in _readme_hook_configs():
        for repo in config["repos"]:  # type: ignore[attr-defined]
            if repo["repo"] == "local":
                by_id = {hook["id"]: hook for hook in hooks}
                for hook in repo["hooks"]:  # every local hook runs what the published one runs
                    published = by_id[hook["id"]]
                    assert hook["entry"] == published["entry"]
                    assert hook.get("files") == published.get("files")
            else:
                # a tag this repository has, or the placeholder the text explains
                assert repo["rev"] in tags or repo["rev"] == "COMMIT_SHA"
                assert {hook["id"] for hook in repo["hooks"]} <= ids


def yaml_load(path: Path) -> list[dict[str, object]]:
    import yaml

    data = yaml.safe_load(path.read_text())
    assert isinstance(data, list)
    return data


def test_pre_commit_hooks_show_the_did_you_mean_hint(tmp_path: Path) -> None:
    import shlex

    (tmp_path / "specs").mkdir()
    spec = tmp_path / "specs" / "typo.yaml"
    spec.write_text(BROKEN.read_text())
    for hook in yaml_load(ROOT / ".pre-commit-hooks.yaml"):
        argv = shlex.split(str(hook["entry"]))
        assert argv[0] == "statechart"
        command = [sys.executable, "-m", "statechart", *argv[1:]]
        if hook.get("pass_filenames", True):
            command.append("specs/typo.yaml")
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 1, (hook["id"], done.stdout, done.stderr)
        assert "= help: did you mean `" in done.stdout, (hook["id"], done.stdout)
