"""Helpers shared by the code generation tests: generate a spec, import the result, and
walk the generated machine at random while checking it against python-statemachine."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
from statemachine.exceptions import TransitionNotAllowed

from statechart.codegen import python_module, record_schema
from statechart.config import Config
from statechart.linter import check_file, check_source
from statechart.model import Spec

_counter = 0


def checked_spec(path: str | Path) -> Spec:
    result = check_file(path)
    assert not result.errors, [d.message for d in result.errors]
    assert result.spec is not None
    return result.spec


def checked_text(text: str, path: str = "spec.yaml") -> Spec | None:
    """The model of a spec text, or None when `check` reports an error."""
    result = check_source(path, text.encode("utf-8"))
    return None if result.errors or result.spec is None else result.spec


# The conformance traces' specs were made to pass `check` when its graph did not know that a
# descendant's transition hides its ancestor's for the same event: in some of them, that
# leaves states no run reaches (or that cannot finish), which `check` now reports. XState
# runs them all the same, and a trace only goes where runs go, so these are warnings here.
TRACED = Config(Path.cwd(), severity={"unreachable-state": "warning",
                                       "no-path-to-final": "warning",
                                       "trap-state": "warning"})


def traced_spec(text: str, path: str) -> Spec | None:
    """The model of a conformance trace's spec (`checked_text`, dead states allowed)."""
    result = check_source(path, text.encode("utf-8"), TRACED)
    return None if result.errors or result.spec is None else result.spec


def generate(spec: Spec) -> dict[str, bytes]:
    return {**python_module.outputs(spec), **record_schema.outputs(spec)}


def import_source(source: bytes, folder: Path, stem: str) -> ModuleType:
    """Write and import a generated module under a unique name."""
    global _counter
    _counter += 1
    name = f"_gen_{stem}_{_counter}"
    path = folder / f"{name}.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look the module up while building the class
    spec.loader.exec_module(module)
    return module


def parts(module: ModuleType) -> tuple[type, type, type]:
    """(facade, record, event enum) of a generated module."""
    base = "".join(p[:1].upper() + p[1:] for p in module.SPEC_NAME.split("_"))
    return getattr(module, base), getattr(module, base + "Record"), getattr(module, base + "Event")


def sample(module: ModuleType, annotation: str) -> Any:
    kind = annotation.split(" | ")[0]
    simple = {"_Str": "text \"'\\\n é", "_Int": 7, "_Float": 2.5, "_Bool": True,
              "_DateTime": dt.datetime(2025, 5, 1, 12, 30, tzinfo=dt.UTC),
              "_Json": {"rows": [1, 2.5, "é", None], "ok": True}}
    if kind in simple:
        return simple[kind]
    enum_class = getattr(module, kind.lstrip("_"))
    return next(iter(enum_class))


def method_name(module: ModuleType, event: str) -> str:
    """The facade method of `event`: its name, or the Python name the module maps it to."""
    return module._SPEC.event_ids.get(event, event)  # type: ignore[no-any-return]


def event_kwargs(module: ModuleType, run: Any, event: str) -> dict[str, Any]:
    method = getattr(type(run), method_name(module, event))
    return {name: sample(module, ann) for name, ann in method.__annotations__.items()
            if name != "return"}


def validator(schema_bytes: bytes) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_bytes)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def psm_configuration(run: Any) -> set[str]:
    return {str(v) for v in run.machine.configuration_values}


def record_configuration(run: Any) -> set[str]:
    return {s.value for s in run.configuration}


def walk(module: ModuleType, schema: jsonschema.Draft202012Validator, steps: int = 60,
         seed: int = 0) -> int:
    """Send random events (and, for a spec with timers, let random time pass and fire the
    due timers); after each one the record must agree with python-statemachine, validate
    against the schema, and survive a JSON round trip and a restore."""
    facade, record_class, events = parts(module)
    rng = random.Random(seed)
    now = [dt.datetime(2025, 1, 1, tzinfo=dt.UTC)]

    def clock() -> dt.datetime:
        return now[0]

    run = facade(run_id="walk", clock=clock)
    moves = 0
    base = facade.__name__
    refusals = (TransitionNotAllowed, getattr(module, base + "LimitExceeded"),
                getattr(module, base + "MissingField"))
    internal = module._SPEC.internal
    choices = [e.value for e in events if e.value not in internal]
    if module._SPEC.timers:
        choices.append(None)  # let time pass
    for _ in range(steps):
        if run.is_terminated:
            break
        event = rng.choice(choices)
        if event is None:
            now[0] += dt.timedelta(seconds=rng.choice((0.2, 1, 40, 1000, 8000, 90000)))
            if not run.fire_due():
                continue
        else:
            try:
                getattr(run, method_name(module, event))(**event_kwargs(module, run, event))
            except refusals:
                assert record_configuration(run) == psm_configuration(run)
                continue
        moves += 1
        assert record_configuration(run) == psm_configuration(run), event
        data = json.loads(run.record.to_json())
        errors = [e.message for e in schema.iter_errors(data)]
        assert not errors, errors
        again = record_class.from_json(run.record.to_json())
        assert again == run.record
        restored = facade.restore(again, clock=clock)
        assert psm_configuration(restored) == psm_configuration(run)
        run = restored
    return moves
