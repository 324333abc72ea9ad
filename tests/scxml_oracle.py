"""Whether an imported spec behaves as its SCXML document: python-statemachine runs the
document itself (`statemachine.io.load`), our runtime runs the generated module of the spec
`statechart import` made of it, and both are sent the same random events with the same guard
answers; the configurations must agree after every step.

The departures of python-statemachine from SCXML (docs/scxml.md) make it a fair oracle only
for charts without parallel states and without timers: callers pick such documents. An event
a state does not take is ignored by SCXML; our run refuses it (`EventNotAccepted`) and stays
where it is, which is the same configuration. Only the events the spec lists are sent: a
run refuses an event its spec does not list, even one a descriptor takes (docs/scxml.md)."""

from __future__ import annotations

import contextlib
import io
import random
import types
from pathlib import Path
from typing import Any

from codegen_support import generate, import_source, parts
from statemachine.io import load

from statechart.linter import check_source
from statechart.scxml.importer import import_scxml
from statechart_runtime.api import EventNotAccepted


def spec_events(spec: Any) -> list[str]:
    """The events a run of the spec can be sent: those it lists, without the ones it raises
    itself, and a member of the family of each (`go.x` under `go`: taken by the transitions
    that take `go`, as SCXML's descriptors take it: docs/scxml.md, "Event families")."""
    listed = sorted(e for e in spec.events() if not e.startswith(("done.", "after.")))
    return listed + [f"{e}.member" for e in listed]


def _psm_configuration(machine: Any) -> list[str]:
    return sorted(str(v) for v in machine.configuration_values)


def divergences(text: str, guards: dict[str, bool], folder: Path, *, sequences: int = 20,
                length: int = 8, seed: int = 0) -> list[str]:
    """What differs between the document in python-statemachine and the imported spec in our
    runtime; [] when they agree on every step. Raises AssertionError when the document does
    not import or the spec does not build."""
    imported = import_scxml("doc.scxml", text.encode("utf-8"))
    assert imported.text is not None, [d.message for d in imported.diagnostics]
    checked = check_source("doc.yaml", imported.text.encode("utf-8"))
    assert not checked.errors and checked.spec is not None, (
        [d.message for d in checked.errors], imported.text)
    spec = checked.spec
    module = import_source(generate(spec)[f"generated/{spec.name}.py"], folder, spec.name)
    facade = parts(module)[0]
    body: dict[str, Any] = {g: _answer(v) for g, v in guards.items()}
    body.update({a: (lambda self: None) for a in spec.actions()})
    ours_class = type("Oracle" + facade.__name__, (facade,), body)
    theirs_class = load(text, format="scxml")
    events = spec_events(spec)
    rng = random.Random(seed)
    out: list[str] = []
    for n in range(sequences):
        with contextlib.redirect_stdout(io.StringIO()):  # <log> prints
            theirs = theirs_class(model=types.SimpleNamespace(**guards))
        ours = ours_class(run_id=f"r{n}")
        for step in range(length):
            event = rng.choice(events)
            with contextlib.redirect_stdout(io.StringIO()):
                with contextlib.suppress(Exception):  # an event no state takes
                    theirs.send(event)
            with contextlib.suppress(EventNotAccepted):
                ours.send(event)
            mine = sorted(s.value for s in ours.configuration)
            if mine != _psm_configuration(theirs):
                out.append(f"sequence {n} step {step} `{event}`: ours {mine}, the document's "
                           f"{_psm_configuration(theirs)}")
                break
    return out


def _answer(value: bool) -> Any:
    """A guard method that always answers `value`."""
    def guard(self: Any) -> bool:
        return value
    return guard
