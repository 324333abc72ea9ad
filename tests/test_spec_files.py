"""Which files are read as specs: regular files only, symlinks only within the specs folder,
and never more than the size limit (`statechart.spec_file`), through every command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from statechart.cli import main
from statechart.yaml_source import MAX_BYTES

ROOT = Path(__file__).resolve().parents[1]
AGENT_RUN = ROOT / "specs" / "agent_run.yaml"
CLI = [sys.executable, "-m", "statechart"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}

@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "agent_run.yaml").write_text(AGENT_RUN.read_text())
    monkeypatch.chdir(tmp_path)
    return tmp_path

def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err

# -- symlinks ----------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["specs/", "specs/env.yaml"])
def test_a_symlink_to_the_environment_is_refused_and_never_shown(
        project: Path, where: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CI_TOKEN", "sekrit-canary-value")
    (project / "specs" / "env.yaml").symlink_to("/proc/self/environ")
    code, out, err = cli(capsys, "check", where)
    assert code == 1
    assert "sekrit-canary-value" not in out + err
    assert "error[yaml-syntax]: file is a symlink to /proc/" in out
    assert "outside the specs folder" in out

def test_a_symlink_to_a_file_outside_the_specs_folder_is_refused(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = project / "secret.yaml"
    secret.write_text("password: hunter2\n")
    (project / "specs" / "leak.yaml").symlink_to(secret)
    for argv in (["check", "specs"], ["check", "specs/leak.yaml"],
                 ["diff", "specs/agent_run.yaml", "specs/leak.yaml"]):
        code, out, err = cli(capsys, *argv)
        assert code in (1, 2) and "hunter2" not in out + err
        assert "outside the specs folder" in out + err

def test_a_symlink_that_stays_inside_the_specs_folder_is_read(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "specs" / "shared").mkdir()
    (project / "specs" / "shared" / "base.yaml").write_text(
        AGENT_RUN.read_text().replace("statechart: agent_run", "statechart: base"))
    (project / "specs" / "alias.yaml").symlink_to("shared/base.yaml")
    assert cli(capsys, "check", "specs/alias.yaml")[0] == 0

# -- FIFOs and other non-regular files ---------------------------------------------------------

def run_with_timeout(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # A subprocess with a timeout: a reader blocked on a FIFO must fail this test, not hang it.
    return subprocess.run([*CLI, *argv], cwd=project, env=ENV, capture_output=True, text=True,
                          timeout=60, check=False)

def test_a_fifo_named_in_extends_is_refused_not_waited_on(project: Path) -> None:
    os.mkfifo(project / "specs" / "base.yaml")
    (project / "specs" / "team.yaml").write_text("extends: base\nstatechart: team\n")
    done = run_with_timeout(project, "check", "--format", "concise", "specs/team.yaml")
    assert done.returncode == 1
    assert "error[overlay]: `extends: base`:" in done.stdout
    assert "a FIFO (named pipe), not a regular file" in done.stdout

@pytest.mark.parametrize("argv", [
    ["check", "--format", "concise", "specs/pipe.yaml"],
    ["check", "specs/pipe.yaml"],  # full format: its snippet must not read it either
    ["diff", "specs/agent_run.yaml", "specs/pipe.yaml"],
    ["resolve", "specs/pipe.yaml"],
    ["build", "specs/pipe.yaml"],
])
def test_a_fifo_spec_is_refused_by_every_command(project: Path, argv: list[str]) -> None:
    os.mkfifo(project / "specs" / "pipe.yaml")
    done = run_with_timeout(project, *argv)
    assert done.returncode in (1, 2)
    assert "a FIFO (named pipe), not a regular file" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr

def test_a_device_spec_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "specs" / "zero.yaml").symlink_to("/dev/zero")  # never ends if read
    code, out, _ = cli(capsys, "check", "--format", "concise", "/dev/zero")
    assert code == 1 and "a character device, not a regular file" in out

# -- size --------------------------------------------------------------------------------------

def test_an_oversized_spec_is_refused_before_it_is_read(project: Path) -> None:
    big = project / "specs" / "big.yaml"
    with big.open("wb") as f:  # sparse: 160 MiB that cost no disk
        f.truncate(160 * 1024 * 1024)
    # The peak memory of the process running `check` (VmHWM: of this program only, not of the
    # forked test runner before it), printed after the command.
    script = ("import re, sys; from statechart.cli import main;"
              "code = main(['check', '--format', 'concise', 'specs/big.yaml']);"
              "status = open('/proc/self/status').read();"
              "print(re.search(r'VmHWM:\\s*(\\d+) kB', status).group(1), file=sys.stderr);"
              "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", script], cwd=project, env=ENV,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert f"file is 167,772,160 bytes, over the {MAX_BYTES:,}-byte limit" in done.stdout
    peak_kib = int(done.stderr.split()[-1])
    assert peak_kib < 100 * 1024, peak_kib  # the interpreter and the tool, not the file
