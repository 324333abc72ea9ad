"""Helpers shared by the benchmark scripts in bench/ (bench_codegen.py, bench_runtime.py).

- `module_source(n, nested)`: the Python module `statechart build` generates for a spec from
  bench/genspec.py (checked first: the generator only ever sees specs that passed `check`);
- `import_seconds(folder, name)`: import `name` from `folder` in a fresh interpreter, with
  python-statemachine already imported, so only the module's own cost is timed (and with
  writing .pyc files allowed, whatever the environment says);
- `time_cold_warm(folder, name, runs)`: the median of `runs` cold imports (no .pyc: compiles
  and writes it) and warm ones (from the .pyc), interleaved.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (ROOT / "compiler", HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from genspec import generate  # noqa: E402

from statechart.codegen import python_module  # noqa: E402
from statechart.linter import check_source  # noqa: E402

IMPORT_SCRIPT = """
import sys, time
sys.path.insert(0, sys.argv[1])
import statemachine, statemachine.orderedset
t = time.perf_counter()
__import__(sys.argv[2])
print(time.perf_counter() - t)
"""


def module_source(n: int, nested: bool = False) -> str:
    kind = "nested" if nested else "flat"
    result = check_source(f"bench_{kind}_{n}.yaml", generate(n, nested).encode())
    assert result.spec is not None and not result.errors, result.errors[:3]
    return python_module.render(result.spec)


# Variables that would stop the child from writing `folder/__pycache__/*.pyc` (this
# project's shells set PYTHONDONTWRITEBYTECODE), so that a "warm" import would be cold again.
NO_PYC_VARIABLES = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


def import_seconds(folder: Path, name: str) -> float:
    env = {k: v for k, v in os.environ.items() if k not in NO_PYC_VARIABLES}
    out = subprocess.run([sys.executable, "-c", IMPORT_SCRIPT, str(folder), name],
                         capture_output=True, text=True, check=True, env=env)
    return float(out.stdout)


def time_cold_warm(folder: Path, name: str, runs: int) -> dict[str, float]:
    """Median seconds to import `folder/name.py` cold (no .pyc) and warm (.pyc present)."""
    cold, warm = [], []
    for _ in range(runs):
        shutil.rmtree(folder / "__pycache__", ignore_errors=True)
        cold.append(import_seconds(folder, name))
        assert list((folder / "__pycache__").glob(f"{name}.*.pyc")), "no .pyc was written"
        warm.append(import_seconds(folder, name))
    return {"cold": statistics.median(cold), "warm": statistics.median(warm)}


# The agent run as the runtime benchmarks were first measured on (version 1: no timers,
# history or context), so figures stay comparable across spec versions and
# bench/handwritten_agent_run.py has one fixed graph to match.
AGENT_RUN_V1 = Path(__file__).resolve().parent / "agent_run_v1.yaml"


def agent_run_v1_module(folder: Path) -> Path:
    """bench/agent_run_v1.yaml generated into `folder`; the module's path."""
    result = check_source(str(AGENT_RUN_V1), AGENT_RUN_V1.read_bytes())
    assert result.spec is not None and not result.errors, result.errors
    path = folder / "agent_run.py"
    path.write_text(python_module.render(result.spec))
    return path
