"""`statechart schema [--write]`: the JSON Schema of the spec format, for editors: printed, or
written to the file the project configuration's `editor-schema` names (the file `build` also
keeps current and `build --check` compares)."""

from __future__ import annotations

import argparse
import sys

from statechart.cli import add_config_argument, project_config
from statechart.report import inert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--write", action="store_true",
                        help="write it to the configuration's `editor-schema` file instead of "
                             "printing it (`statechart init` sets one up)")
    add_config_argument(parser)


def schema_text() -> str:
    from statechart.spec_format import editor_schema_text

    return editor_schema_text()


def run(args: argparse.Namespace) -> int:
    if not args.write:
        print(schema_text(), end="")
        return 0
    from statechart import writes

    config = project_config("schema", args, [])
    if config is None:
        return 2
    if config.editor_schema is None:
        where = config.file.name if config.file else "pyproject.toml"
        print("statechart schema --write: the project configuration names no file for it; set "
              f"`editor-schema = \"specs/spec.schema.json\"` in {where} ([tool.statechart]), "
              "or print it: statechart schema > FILE", file=sys.stderr)
        return 2
    path = config.root / config.editor_schema
    data = schema_text().encode()
    try:
        unchanged = path.read_bytes() == data
    except OSError:
        unchanged = False
    if unchanged:
        print(f"unchanged {inert(config.editor_schema)}", file=sys.stderr)
        return 0
    try:
        writes.write_atomic(path, data)
    except writes.WriteError as exc:
        print(f"statechart schema: {inert(str(exc))}", file=sys.stderr)
        return 1
    print(f"wrote {inert(config.editor_schema)}", file=sys.stderr)
    return 0
