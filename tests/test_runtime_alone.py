"""An application that only runs generated modules needs the runtime, not the compiler.

`runtime/` is its own distribution (`statechart-runtime`, depending only on
python-statemachine); these tests prove generated modules import and run with the compiler and
its dependencies unimportable, that the runtime's wheel carries nothing else, and that a module
refuses a runtime whose API it was not built for.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import statechart_runtime

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted([*ROOT.glob("generated/*.py"), *ROOT.glob("tests/golden/*/*.py")])
COMPILER_ONLY = ("statechart", "yaml", "jinja2", "jsonschema", "graphviz", "graphviz_pure",
                 "rfc3339_validator")

BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"{{name}} is blocked: the runtime must not need it")
sys.meta_path.insert(0, Block())
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, check=False)


def test_every_generated_module_imports_without_the_compiler() -> None:
    code = BLOCK.format(blocked=set(COMPILER_ONLY)) + f"""
import importlib.util
for i, path in enumerate({[str(p) for p in MODULES]!r}):
    spec = importlib.util.spec_from_file_location(f"m{{i}}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
loaded = {{m.split(".")[0] for m in sys.modules}}
assert not loaded & {set(COMPILER_ONLY)!r}, loaded & {set(COMPILER_ONLY)!r}
print(len({[str(p) for p in MODULES]!r}))
"""
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == len(MODULES) >= 10


def test_the_agent_run_runs_and_persists_without_the_compiler() -> None:
    code = BLOCK.format(blocked=set(COMPILER_ONLY)) + """
sys.path.insert(0, "generated")
import agent_run as m
run = m.AgentRun(run_id="r1")
run.triage(); run.start(); run.call_tool(toolCallId="c1")
run.interrupt(interruptReason=m.AgentRunInterruptReason.approval)
again = m.AgentRun.restore(m.AgentRunRecord.from_json(run.record.to_json()))
import datetime as dt
again.await_approval(approvalId="a1", approvalDeadline=dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
again.approve(approvedBy="alice"); again.proceed(); again.tool_result(); again.complete()
print(again.status.value, again.is_terminated)
"""
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["completed", "True"]


def test_the_runtime_wheel_needs_only_python_statemachine(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(tmp_path),
                            str(ROOT / "runtime")], capture_output=True, text=True,
                           timeout=300, check=False)
    if built.returncode != 0 and "No module named setuptools" in built.stderr:
        pytest.fail("setuptools is missing from the test environment: " + built.stderr)
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("statechart_runtime-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(archive.read(n).decode() for n in names if n.endswith("/METADATA"))
        entry_points = next(archive.read(n).decode() for n in names
                            if n.endswith("/entry_points.txt"))
    # The spec coverage plugin comes with the runtime (docs/testing-coverage.md).
    assert entry_points.split() == ["[pytest11]", "statechart_cov", "=",
                                    "statechart_runtime.testing.pytest_plugin"]
    packages = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert packages == {"statechart_runtime"}
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]
    # The optional extras: PostgreSQL for the run store (psycopg_pool: the asynchronous
    # store's pool), the run console
    # (Starlette, Jinja2, uvicorn, python-multipart), hypothesis for
    # statechart_runtime.testing.event_sequences, OpenTelemetry for statechart_runtime.otel.
    assert requires == ["python-statemachine<3.3,>=3.2.2",
                        "psycopg[binary]>=3.1; extra == \"postgres\"",
                        "psycopg_pool>=3.2; extra == \"postgres\"",
                        "starlette>=0.40; extra == \"console\"",
                        "jinja2>=3.1; extra == \"console\"",
                        "uvicorn>=0.30; extra == \"console\"",
                        "python-multipart>=0.0.9; extra == \"console\"",
                        "opentelemetry-api>=1.27; extra == \"otel\"",
                        "opentelemetry-sdk>=1.27; extra == \"otel\"",
                        "opentelemetry-exporter-prometheus>=0.66b0; extra == \"otel\"",
                        "prometheus-client>=0.20; extra == \"otel\"",
                        "hypothesis>=6.100; extra == \"testing\""]


def test_runtime_versions_agree() -> None:
    project = tomllib.loads((ROOT / "runtime" / "pyproject.toml").read_text())["project"]
    assert project["version"] == statechart_runtime.__version__


def test_a_module_refuses_a_runtime_with_another_api() -> None:
    code = """
import sys
sys.path.insert(0, "generated")
import statechart_runtime
statechart_runtime.API_VERSION = (statechart_runtime.API_VERSION[0] + 1, 0)
try:
    import agent_run
except ImportError as exc:
    print(type(exc).__name__, exc)
"""
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("RuntimeVersionError agent_run was generated by "
                                    "statechart-compiler ")
    assert "regenerate it with `statechart build`" in result.stdout


def test_from_json_refuses_duplicate_keys_and_deep_nesting() -> None:
    code = """
import sys
sys.path.insert(0, "generated")
import agent_run as m
text = m.AgentRun(run_id="r1").record.to_json()
for bad in (text.replace('"runId": "r1"', '"runId": "r1", "runId": "r2"'),
            text.replace('"counts": {', '"counts": {"x": ' + "[" * 100000 + "]" * 100000 + ', ')):
    try:
        m.AgentRunRecord.from_json(bad)
    except m.AgentRunInvalidRecord as exc:
        print(exc)
"""
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["runId: duplicate key",
                                          "(record): JSON nested too deeply"]
