"""The command line as a team adopts it: start-up cost, colour, which stream says what, and the
pre-commit hooks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from statechart.cli import main

ROOT = Path(__file__).parent.parent
BROKEN = ROOT / "tests" / "cases" / "unknown-state" / "typos.yaml"
OK = ROOT / "tests" / "cases" / "ok" / "agent_like.yaml"
HEAVY = ("yaml", "jinja2", "statemachine")


# What checking a spec needs: none of it is imported to print a version or a help text.
COMPILER = ("statechart.linter", "statechart.build", "statechart.diff", "statechart.rules",
            "statechart.yaml_source", "statechart.overlay", "statechart.codegen")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["check", "--help"],
                                  ["build", "--help"], ["diff", "--help"], ["render", "--help"],
                                  ["import", "--help"]])
def test_version_and_help_import_no_heavy_dependency(argv: list[str]) -> None:
    probe = ("import sys\nfrom statechart.cli import main\n"
             f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
             "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    modules = done.stderr.rsplit("MODULES ", 1)[1].split()
    assert done.stdout  # the version or the help was printed
    loaded = [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(COMPILER)]
    assert loaded == []
    commands = {m for m in modules if m.startswith("statechart.cli.")}
    # the command's own module; `render` shares `build`'s layout options
    own = {f"statechart.cli.{argv[0]}"} | ({"statechart.cli.build"} if argv[0] == "render"
                                           else set())
    own |= {"statechart.cli.import_scxml"} if argv[0] == "import" else set()
    assert commands <= {"statechart.cli.colour", *own}


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


SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def no_colour_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


@pytest.mark.usefixtures("no_colour_env")
@pytest.mark.parametrize("argv", [
    ["check", "--format", "full", str(BROKEN)],
    ["check", "--format", "concise", str(BROKEN)],
    ["diff", "--format", "full", str(BROKEN), str(OK)],
])
def test_color_always_and_never(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    _, plain, _ = _run(capsys, *argv)
    _, never, _ = _run(capsys, *argv, "--color", "never")
    _, always, _ = _run(capsys, *argv, "--color", "always")
    assert "\x1b" not in plain and never == plain  # captured output is not a terminal
    assert "\x1b[1;31merror\x1b[0m[\x1b[1munknown-state\x1b[0m]" in always
    assert SGR.sub("", always) == plain  # colour adds escapes and changes nothing else
    if "full" in argv:
        assert "\x1b[1;36mhelp:\x1b[0m did you mean" in always
        assert "\x1b[1;31m^" in always  # the caret
    assert "\x1b[36m" in always  # the location


@pytest.mark.usefixtures("no_colour_env")
def test_environment_and_the_option(capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in _run(capsys, "check", str(BROKEN))[1]
    assert "\x1b[" not in _run(capsys, "check", "--color", "never", str(BROKEN))[1]
    monkeypatch.setenv("FORCE_COLOR", "")  # empty: not set
    assert "\x1b[" not in _run(capsys, "check", str(BROKEN))[1]
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" not in _run(capsys, "check", str(BROKEN))[1]
    assert "\x1b[" in _run(capsys, "check", "--color", "always", str(BROKEN))[1]


@pytest.mark.usefixtures("no_colour_env")
@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_machine_formats_are_never_coloured(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = _run(capsys, "check", "--format", fmt, "--color", "always", str(BROKEN))[1]
    assert out and "\x1b" not in out


@pytest.mark.usefixtures("no_colour_env")
def test_colour_never_comes_from_spec_text(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    spec = tmp_path / "evil.yaml"
    spec.write_text(BROKEN.read_text().replace("initial: idel", 'initial: "idel\\e[32m\\u202e"'))
    for fmt in ("full", "concise"):
        out = _run(capsys, "check", "--format", fmt, "--color", "always", str(spec))[1]
        assert "<U+001B>[32m<U+202E>" in out
        assert "\u202e" not in out and "\x1b[32m" not in out  # only our own colours are sent
        assert not any(c for c in SGR.sub("", out) if not c.isprintable() and c != "\n")


def test_build_check_diff_is_coloured(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "ok.yaml").write_text(OK.read_text())
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "build", "--check", "--full-diff", "--color", "always")
    assert code == 1 and "\x1b[32m+" in out and "missing" in out
    code, out, _ = _run(capsys, "build", "--check", "--color", "never")
    assert code == 1 and "\x1b" not in out


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("env,coloured", [({}, True), ({"NO_COLOR": "1"}, False)])
def test_auto_colours_a_real_terminal(env: dict[str, str], coloured: bool) -> None:
    import os
    import pty

    leader, follower = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    try:
        done = subprocess.run([sys.executable, "-m", "statechart", "check", str(BROKEN)],
                              stdout=follower, stderr=subprocess.PIPE, env={**environ, **env},
                              check=False, timeout=60)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    out = b"".join(chunks).decode()
    assert done.returncode == 1 and "unknown-state" in out
    assert ("\x1b[1;31merror\x1b[0m" in out) is coloured
    # a pipe is not a terminal: the same command piped is plain
    piped = subprocess.run([sys.executable, "-m", "statechart", "check", str(BROKEN)],
                           capture_output=True, text=True, env=environ, check=False)
    assert "\x1b" not in piped.stdout
