"""The command line as a team adopts it: start-up cost, colour, which stream says what, and the
pre-commit hooks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
