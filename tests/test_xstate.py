"""XState v5 machine configs out (`statechart render --format xstate`) and in (`statechart
import machine.json`): the exporter is the one the conformance tooling records its golden
traces with, so the traces replay through it in XState itself (node and the `xstate` npm
package of tests/conformance/, `npm ci` there); an imported config is the same spec again."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from codegen_support import checked_text

from statechart.xstate.export import machine_config

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = ROOT / "tests" / "conformance"
TRACES = CONFORMANCE / "traces"
FAMILIES = {"part": 1, "done-history": 2, "timers": 3, "lang": 3, "in": 3, "always": 3,
            "defaults": 3, "multi": 3, "descriptors": 3}

needs_xstate = pytest.mark.skipif(
    shutil.which("node") is None or not (CONFORMANCE / "node_modules" / "xstate").is_dir(),
    reason="needs node and `npm ci` in tests/conformance")


def traced() -> list[tuple[str, int, dict[str, Any]]]:
    out = []
    for path in sorted(TRACES.glob("*.json.gz")):
        family = path.name.rsplit("-", 1)[0]
        with gzip.open(path, "rt", encoding="utf-8") as f:
            part = json.load(f)
        out += [(family, part["format"], s) for s in part["specs"]]
    return out


def run_in_xstate(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = subprocess.run(["node", str(CONFORMANCE / "xstate_runner.mjs")],
                          input=json.dumps(jobs), capture_output=True, text=True, check=False,
                          cwd=CONFORMANCE)
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


def _ours(event: str, keys: dict[str, dict[int, str]]) -> str:
    """XState's `after.MS.STATE` as our `after.KEY.STATE` (a state's delays are distinct)."""
    if not event.startswith("after."):
        return event
    _, ms, state = event.split(".", 2)
    return f"after.{keys[state][int(ms)]}.{state}"


def replay(traces: list[tuple[str, int, dict[str, Any]]],
           config_of: Any = None) -> list[str]:
    """Run each traced spec's config (the exporter's, or `config_of(spec)`'s) in XState with
    the trace's sequences: what differs from the recorded steps."""
    jobs, specs = [], []
    for _, fmt, trace in traces:
        spec = checked_text(trace["yaml"], f"{trace['name']}.yaml")
        assert spec is not None
        specs.append(spec)
        jobs.append({"name": trace["name"],
                     "machine": (config_of or machine_config)(spec),
                     "guards": trace["guards"], "actions": trace["actions"],
                     "sequences": [s["events"] for s in trace["sequences"]],
                     "internal": fmt >= 2, "timers": fmt >= 3})
    out = []
    for (_, _, trace), spec, result in zip(traces, specs, run_in_xstate(jobs), strict=True):
        keys: dict[str, dict[int, str]] = {}
        for t in spec.timers():
            if t.delay_ms is not None and t.after_key is not None:
                keys.setdefault(t.source, {})[t.delay_ms] = t.after_key
        if result["initial"] != trace["initial"]:
            out.append(f"{trace['name']}: initial {result['initial']} != {trace['initial']}")
            continue
        for i, (steps, recorded) in enumerate(zip(result["sequences"], trace["sequences"],
                                                  strict=True)):
            steps = [[*step[:4], [_ours(e, keys) for e in step[4]]] if len(step) > 4 else step
                     for step in steps]
            if steps != recorded["steps"]:
                out.append(f"{trace['name']} sequence {i}")
    return out


TRACED = traced()


@needs_xstate
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_exported_configs_replay_the_conformance_traces(family: str) -> None:
    """Every tenth traced spec of each family (all of them with `-m slow`)."""
    chosen = [t for t in TRACED if t[0] == family][::10]
    assert chosen and replay(chosen) == []


@needs_xstate
@pytest.mark.slow
def test_every_exported_config_replays_the_conformance_traces() -> None:
    assert replay(TRACED) == []


ACCEPTS = """
import { readFileSync } from 'node:fs';
import { createActor, createMachine } from 'xstate';
const out = {};
for (const [name, config] of Object.entries(JSON.parse(readFileSync(0, 'utf8')))) {
  const actor = createActor(createMachine(config));
  actor.start();
  out[name] = actor.getSnapshot().value;
  actor.stop();
}
process.stdout.write(JSON.stringify(out));
"""


def started_in_xstate(configs: dict[str, Any]) -> dict[str, Any]:
    """Each config through `createMachine` and a started actor: its first state value."""
    done = subprocess.run(["node", "--input-type=module", "-e", ACCEPTS],
                          input=json.dumps(configs), capture_output=True, text=True,
                          check=False, cwd=CONFORMANCE)
    assert done.returncode == 0, done.stderr
    value: dict[str, Any] = json.loads(done.stdout)
    return value


@needs_xstate
def test_render_writes_a_config_create_machine_accepts(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from statechart.cli import main

    configs = {}
    for path in sorted((ROOT / "specs").glob("*.yaml")):
        out = tmp_path / f"{path.stem}.json"
        assert main(["render", str(path), "--format", "xstate", "-o", str(out)]) == 0
        text = out.read_text()
        assert "DO NOT EDIT" in text.split('"states"')[0]
        configs[path.stem] = json.loads(text)
        # deterministic: the same bytes again
        main(["render", str(path), "--format", "xstate", "-o", str(tmp_path / "again.json")])
        assert (tmp_path / "again.json").read_text() == text
    capsys.readouterr()
    assert started_in_xstate(configs)["agent_run"] == "created"


def test_a_spec_with_errors_is_not_written(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    from statechart.cli import main

    broken = tmp_path / "broken.yaml"
    broken.write_text("statechart: broken\nversion: 1\ninitial: a\nstates:\n  a: {on: {go: b}}\n")
    assert main(["render", str(broken), "-f", "xstate", "-o", str(tmp_path / "b.json")]) == 1
    assert "An XState config is written only for a spec without errors" in \
        capsys.readouterr().err
    assert not (tmp_path / "b.json").exists()
