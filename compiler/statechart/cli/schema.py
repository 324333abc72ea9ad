"""`statechart schema`: print the JSON Schema of the spec format."""

from __future__ import annotations

import argparse
import json

from statechart.spec_format import json_schema


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def run(args: argparse.Namespace) -> int:
    print(schema_text(), end="")
    return 0
