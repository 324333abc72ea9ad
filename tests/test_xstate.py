"""XState v5 machine configs out (`statechart render --format xstate`) and in (`statechart
import machine.json`): the exporter is the one the conformance tooling records its golden
traces with, so the traces replay through it in XState itself (node and the `xstate` npm
package of tests/conformance/, `npm ci` there); an imported config is the same spec again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from codegen_support import TRACED as DEAD_STATES_ALLOWED
from codegen_support import traced_spec
from conformance_traces import FAMILIES, family_of, trace_files

from statechart.xstate.export import machine_config

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = ROOT / "tests" / "conformance"

# Skipped without node and XState, except in CI (`CI` set: .ci/run installs them), where
# these tests fail instead, so that CI runs every test.
needs_xstate = pytest.mark.skipif(
    not os.environ.get("CI") and (shutil.which("node") is None
                                  or not (CONFORMANCE / "node_modules" / "xstate").is_dir()),
    reason="needs node and `npm ci` in tests/conformance")


def traced() -> list[tuple[str, int, dict[str, Any]]]:
    return [(family_of(path), trace_format, s)
            for path, trace_format, specs in trace_files() for s in specs]


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
        spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
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


def round_trip(spec: Any, config: Any = None) -> Any:
    """The spec as an XState config, imported again and checked (which must pass; with
    `config`, as that configuration says)."""
    from statechart.linter import check_source
    from statechart.xstate.export import config_text
    from statechart.xstate.importer import import_xstate

    imported = import_xstate("machine.json", config_text(spec, ["header"]).encode())
    assert imported.text is not None, [d.message for d in imported.diagnostics]
    back = check_source("back.yaml", imported.text.encode(), config)
    assert not back.errors, [d.message for d in back.errors] + [imported.text]
    return back.spec


@pytest.mark.parametrize("path", sorted((ROOT / "specs").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_repositorys_specs_come_back_as_the_same_model(path: Path) -> None:
    from test_scxml import model

    from statechart.linter import check_file

    spec = check_file(path).spec
    assert model(round_trip(spec)) == model(spec)


def _different_models(traced: list[tuple[str, int, dict[str, Any]]]) -> list[str]:
    """The traced specs whose model changes on the way to XState's config and back."""
    from test_scxml import model

    different = []
    for _, _, trace in traced:
        # dead states allowed, as the conformance tests check these specs (codegen_support)
        spec = traced_spec(trace["yaml"], f"{trace['name']}.yaml")
        if model(round_trip(spec, DEAD_STATES_ALLOWED)) != model(spec):
            different.append(trace["name"])
    return different


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_conformance_specs_come_back_as_the_same_model(family: str) -> None:
    """So the imported machines replay the conformance traces as the specs do: 0
    divergences (the same model; test_conformance.py replays the model's runs). Every third
    traced spec of each family (all of them with `-m slow`)."""
    chosen = [t for t in TRACED if t[0] == family][::3]
    assert chosen and _different_models(chosen) == []


@pytest.mark.slow
def test_every_conformance_spec_comes_back_as_the_same_model() -> None:
    assert _different_models(TRACED) == []


# A machine as a front end writes it: relative targets, shorthand transitions, a wildcard key,
# a history state without an id, guards and actions as names and objects, tags as a string.
FRONT_END = {
    "id": "checkout",
    "initial": "cart",
    "states": {
        "cart": {"on": {"CHECKOUT": "payment", "error.*": "failed"}},
        "payment": {
            "initial": "card",
            "tags": "busy",
            "states": {
                "card": {"on": {"NEXT": "review", "BACK": "#checkout.cart"}},
                "review": {"on": {"NEXT": {"target": "card", "guard": {"type": "canEdit"}}},
                           "after": {"60000": "#checkout.payment.card"}},
                "hist": {"type": "history", "history": "deep", "target": "review"},
            },
            "on": {"PAUSE": {"target": "#checkout.paused", "actions": ["save",
                                                                       {"type": "log"}]},
                   "error.*": [{"target": "#checkout.cart", "guard": "retryable"},
                               {"target": "failed"}]},
        },
        "paused": {"on": {"RESUME": "payment.hist"}, "always": [
            {"target": "failed", "guard": "expired"}]},
        "failed": {"type": "final", "description": "gave up"},
    },
}


def test_a_machine_written_by_hand_imports_to_a_spec_that_behaves_as_it(tmp_path: Path) -> None:
    from statechart.linter import check_source
    from statechart.xstate.importer import import_xstate

    imported = import_xstate("checkout.json", json.dumps(FRONT_END).encode())
    assert imported.text is not None, [d.message for d in imported.diagnostics]
    text = imported.text
    for line in ("CHECKOUT: payment", "tags: [busy]", "RESUME: {target: payment, history: deep}",
                 "history_default: {deep: review}", "\"1m\": card",
                 "NEXT: {target: card, guard: canEdit}", "actions: [save, log]",
                 "- {target: cart, guard: retryable}", "always: {target: failed, guard: "
                 "expired}"):
        assert line in text, (line, text)
    checked = check_source("checkout.yaml", text.encode())
    assert not checked.errors, [d.message for d in checked.errors]


def test_what_a_spec_cannot_say_is_refused_with_its_path() -> None:
    from statechart.xstate.importer import import_xstate

    config = json.loads(json.dumps(FRONT_END))
    config["context"] = {"count": 0}
    config["states"]["cart"]["invoke"] = {"src": "loadCart"}
    config["states"]["cart"]["on"]["CHECKOUT"] = {"target": "nowhere"}
    imported = import_xstate("checkout.json", json.dumps(config).encode())
    assert imported.text is None
    assert sorted(d.message.split(":")[0] for d in imported.diagnostics) == [
        "cart.invoke", "cart.on.CHECKOUT.0", "context"]
    assert "`invoke` has no equivalent" in " ".join(d.message for d in imported.diagnostics)
    broken = import_xstate("bad.json", b'{"states": ')
    assert [d.message.split(":")[0] for d in broken.diagnostics] == ["not JSON"]


@needs_xstate
@pytest.mark.parametrize("guards", [
    {"canEdit": True, "retryable": True, "expired": False},
    {"canEdit": False, "retryable": False, "expired": True}], ids=["yes", "no"])
def test_the_imported_hand_written_machine_runs_as_in_xstate(tmp_path: Path,
                                                             guards: dict[str, bool]) -> None:
    """The same random events through XState (the config as written) and through our runtime
    (the imported spec): the same active states after every event."""
    import random

    from codegen_support import generate, import_source, parts

    from statechart.linter import check_source
    from statechart.xstate.importer import import_xstate
    from statechart_runtime.api import EventNotAccepted

    imported = import_xstate("checkout.json", json.dumps(FRONT_END).encode())
    assert imported.text is not None
    spec = check_source("checkout.yaml", imported.text.encode()).spec
    assert spec is not None
    # The events the spec lists, and members of the family of `error` it does not list, which
    # XState's `error.*` takes and a run takes too (docs/scxml.md, "Event families").
    events = ["CHECKOUT", "NEXT", "BACK", "PAUSE", "RESUME", "error", "error.net",
              "error.net.timeout"]
    rng = random.Random(7)
    sequences = [[rng.choice(events) for _ in range(10)] for _ in range(30)]
    [result] = run_in_xstate([{"name": "checkout", "machine": FRONT_END, "guards": guards,
                               "actions": ["save", "log"], "sequences": sequences,
                               "internal": False, "timers": False}])
    module = import_source(generate(spec)["generated/checkout.py"], tmp_path, "checkout")
    body: dict[str, Any] = {g: _answer(v) for g, v in guards.items()}
    body.update({a: (lambda self: None) for a in ("save", "log")})
    facade = type("Scripted", (parts(module)[0],), body)
    for n, (sequence, steps) in enumerate(zip(sequences, result["sequences"], strict=True)):
        run = facade(run_id=f"r{n}")
        for event, step in zip(sequence, steps, strict=False):
            try:
                run.send(event)
            except EventNotAccepted:
                pass
            theirs = sorted(state_id.split(".")[-1] for state_id in step[1])
            assert sorted(s.value for s in run.configuration) == theirs, (n, event)


def _answer(value: bool) -> Any:
    """A guard method that always answers `value`."""
    def guard(self: Any) -> bool:
        return value
    return guard
