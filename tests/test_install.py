"""Installing outside the repository: every hint and the README's Install section name things
pip can install (the two distributions, from the git URL or a built wheel, with their extras),
and the built wheels work in a fresh environment."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from statechart import REPOSITORY, RUNTIME_REQUIREMENT, __version__

ROOT = Path(__file__).resolve().parent.parent
COMPILER = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = tomllib.loads((ROOT / "runtime" / "pyproject.toml").read_text())["project"]

BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}")
sys.meta_path.insert(0, Block())
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, check=False)


def _installable(requirement: str) -> Requirement:
    """`requirement` parsed, checked against the distributions of this repository: its name
    and extras are theirs, and a git URL's subdirectory holds the one named."""
    parsed = Requirement(requirement)
    project = {COMPILER["name"]: (COMPILER, ROOT), RUNTIME["name"]: (RUNTIME, ROOT / "runtime")}
    if parsed.name not in project:  # a third-party package: one of our extras requires it
        extras = [*COMPILER["optional-dependencies"]["postgres"],
                  *RUNTIME["optional-dependencies"]["postgres"]]
        assert requirement in extras
        return parsed
    meta, folder = project[parsed.name]
    assert parsed.extras <= set(meta.get("optional-dependencies", {}))
    if parsed.url:
        assert parsed.url.startswith(f"git+{REPOSITORY}")
        sub = re.search(r"#subdirectory=(.+)$", parsed.url)
        assert (ROOT / sub.group(1) if sub else ROOT) == folder
    return parsed


def test_a_generated_module_without_the_runtime_names_what_to_install() -> None:
    done = _python(BLOCK.format(blocked="statechart_runtime")
                   + "sys.path.insert(0, 'generated')\nimport agent_run\n")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("ImportError: agent_run needs the statechart-runtime package: pip install "
                    f"'{RUNTIME_REQUIREMENT}'")
    assert _installable(RUNTIME_REQUIREMENT).name == "statechart-runtime"


def test_the_postgres_store_without_psycopg_names_what_to_install() -> None:
    done = _python(BLOCK.format(blocked="psycopg") + (
        "from statechart_runtime.store import open_store\n"
        "from statechart_runtime.errors import StoreError\n"
        "try:\n    open_store('postgresql://u@localhost/db')\n"
        "except StoreError as exc:\n    print(exc)\n"))
    assert done.returncode == 0, done.stderr
    hint = done.stdout.split(": pip install ", 1)[1]
    assert hint.startswith("'psycopg[binary]>=3.1' (the `postgres` extra of statechart-runtime "
                           "and statechart-compiler)")
    _installable(shlex.split(hint)[0])


def test_the_readme_install_lines_name_installable_things() -> None:
    section = (ROOT / "README.md").read_text().split("## Install", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in re.findall(r"^pip install .*$", section, re.MULTILINE)]
    assert len(lines) == 3
    named = []
    for line in lines:
        (argument,) = shlex.split(line)[2:]
        if argument.startswith("dist/"):  # a wheel built by the README's `pip wheel` line
            wheel = argument.split("[")[0]
            name = Path(wheel).name.split("-")[0].replace("_", "-")
            assert Path(wheel).name == f"{name.replace('-', '_')}-{__version__}-py3-none-any.whl"
            named.append(name)
        else:
            named.append(_installable(argument).name)
    assert sorted(set(named)) == ["statechart-compiler", "statechart-runtime"]
    assert "python3 -m pip wheel --no-deps . ./runtime -w dist" in section
    assert RUNTIME["version"] == COMPILER["version"] == __version__


@pytest.mark.slow  # two wheels built, a fresh environment installed: a minute
def test_the_built_wheels_install_and_run_in_a_fresh_environment(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(dist), str(ROOT),
                            str(ROOT / "runtime")], capture_output=True, text=True,
                           timeout=600, check=False)
    assert built.returncode == 0, built.stderr
    wheels = {p.name.split("-")[0]: p for p in dist.glob("*.whl")}
    assert set(wheels) == {"statechart_compiler", "statechart_runtime"}
    project = tmp_path / "project"
    # The compiler's wheel: the quick start in an empty folder.
    tool = tmp_path / "tool"
    venv.create(tool, with_pip=True)
    bin_dir = tool / ("Scripts" if os.name == "nt" else "bin")

    def run(*argv: str | Path, cwd: Path = tmp_path) -> str:
        done = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        return done.stdout

    run(bin_dir / "python", "-m", "pip", "install", "-q", wheels["statechart_compiler"])
    run(bin_dir / "statechart", "init", project)
    assert run(bin_dir / "statechart", "build", cwd=project).count("created") >= 4
    # The wheel ships the agent run as a base: an overlay of it checks in the fresh tool.
    (project / "specs" / "platform_run.yaml").write_text(
        "extends: pkg:statechart/bases/agent_run.yaml\nstatechart: platform_run\n")
    run(bin_dir / "statechart", "check", "specs/platform_run.yaml", cwd=project)
    # The runtime's wheel alone runs the generated module.
    app = tmp_path / "app"
    venv.create(app, with_pip=True)
    app_bin = app / ("Scripts" if os.name == "nt" else "bin")
    run(app_bin / "python", "-m", "pip", "install", "-q", wheels["statechart_runtime"])
    out = run(app_bin / "python", "-c", "from generated.order import Order\nrun = Order()\n"
              "run.pay(paymentId='p-1')\nprint(run.status)", cwd=project)
    assert out == "OrderState.paid\n"
    assert "statechart" not in run(app_bin / "python", "-m", "pip", "list").replace(
        "statechart-runtime", "")
