"""The published JSON Schema (for editors) and the checker agree on what is well-formed."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from statechart.cli.schema import schema_text
from statechart.linter import check_file
from statechart.spec_format import json_schema
from statechart.yaml_source import load_bytes, scalar_value

ROOT = Path(__file__).parent.parent
SPECS = sorted((ROOT / "tests" / "cases").glob("*/*.yaml")) + \
    sorted((ROOT / "specs").glob("*.yaml"))
SHAPE_RULES = {"schema", "duplicate-key", "yaml-syntax"}


def _plain(node: yaml.Node) -> object:
    if isinstance(node, yaml.MappingNode):
        return {str(scalar_value(k)): _plain(v) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [_plain(v) for v in node.value]
    return scalar_value(node)


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(json_schema())


def test_docs_copy_is_current() -> None:
    assert (ROOT / "docs" / "spec.schema.json").read_text() == schema_text()


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_schema_agrees_with_checker(path: Path) -> None:
    source, _ = load_bytes(str(path), path.read_bytes())
    if source is None or source.root is None:
        pytest.skip("not a YAML document")
    data = _plain(source.root)
    schema_errors = list(jsonschema.Draft202012Validator(json_schema()).iter_errors(data))
    findings = check_file(path).diagnostics
    shape_findings = [d for d in findings if d.rule in SHAPE_RULES]
    # The schema's name pattern also rejects what the checker reports as invalid-name, and its
    # types what the checker reports as invalid-migration (a map to a list is not a function),
    # and its name and duration patterns what it reports as invalid-work.
    bad_names = any(d.rule in ("invalid-name", "invalid-migration", "invalid-work")
                    for d in findings)
    if shape_findings and not {d.rule for d in shape_findings} <= {"duplicate-key"}:
        assert schema_errors, f"checker found {shape_findings[0].message} but the schema accepts"
    if not shape_findings and not bad_names:
        assert not schema_errors, json.dumps(schema_errors[0].message)
