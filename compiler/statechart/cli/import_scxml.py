"""`statechart import FILE.scxml|MACHINE.json [-o SPEC.yaml]`: an SCXML document, or an
XState v5 machine config (JSON), as a spec.

stdout is the spec (or `-o FILE`, written whole or not at all); what the document has that a
spec cannot say is reported on stderr in `check`'s formats (rule `scxml-import`, exit 1,
nothing written). The spec written is then checked as `check` checks that file, with the
project's configuration (severities, per-file ignores): the same findings and exit code (exit 1
when there are errors: the file is written, to be fixed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from statechart.cli import add_config_argument, colour, missing_paths, project_config
from statechart.report import REPORTERS, inert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scxml", metavar="FILE", help="the SCXML document (*.scxml), or an "
                        "XState v5 machine config (*.json)")
    parser.add_argument("-o", "--output", metavar="SPEC", default=None,
                        help="write the spec here (replaced whole, only when the import "
                             "succeeds); default: stdout")
    parser.add_argument("--format", choices=list(REPORTERS), default=None,
                        help="format of the problems on stderr (as `check`'s; default: full)")
    parser.add_argument("--strict", action="store_true",
                        help="warnings in the spec written fail the import too (exit 1), as "
                             "`check --strict`")
    add_config_argument(parser)
    colour.add_argument(parser)


def run(args: argparse.Namespace) -> int:
    from statechart import writes
    from statechart.cli.check import output_format
    from statechart.linter import check_file, check_source
    from statechart.scxml.importer import import_scxml
    from statechart.scxml.xml_tree import MAX_BYTES

    fmt = output_format(args.format)
    if missing_paths("import", [args.scxml], files=True):
        return 2
    # The configuration `check` would use on the file written: found from it (or from the
    # document when the spec goes to stdout).
    config = project_config("import", args, [args.output or args.scxml])
    if config is None:
        return 2
    try:
        with open(args.scxml, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        print(f"statechart import: cannot read {inert(args.scxml)}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    # An XState machine config is JSON; anything else is read as SCXML.
    if Path(args.scxml).suffix.lower() == ".json":
        from statechart.xstate.importer import import_xstate

        imported = import_xstate(args.scxml, data)
    else:
        imported = import_scxml(args.scxml, data)
    coloured = colour.enabled(args.color, sys.stderr)
    if imported.text is None:
        sources = {args.scxml: data.decode("utf-8", "replace")}
        sys.stderr.write(colour.report(REPORTERS, fmt, imported.diagnostics, sources, coloured))
        if fmt == "full":
            print(f"statechart import: nothing written: {inert(args.scxml)} has what a spec "
                  "cannot say", file=sys.stderr)
        return 1
    target = args.output or "<stdout>"
    if args.output:
        try:
            writes.write_atomic(Path(args.output), imported.text.encode("utf-8"))
        except writes.WriteError as exc:
            print(f"statechart import: {inert(str(exc))}", file=sys.stderr)
            return 1
        print(f"wrote {inert(args.output)}", file=sys.stderr)
        # `check` on the file written: its findings, with the configuration, are the import's
        checked = check_file(args.output, config)
    else:
        checked = check_source(target, imported.text.encode("utf-8"), config)
        sys.stdout.write(imported.text)
    if checked.diagnostics:
        sources = {target: imported.text}
        sys.stderr.write(colour.report(REPORTERS, fmt, checked.diagnostics, sources, coloured))
    warnings = len(checked.diagnostics) - len(checked.errors)
    return 1 if checked.errors or (args.strict and warnings) else 0
