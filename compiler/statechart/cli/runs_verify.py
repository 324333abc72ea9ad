"""`statechart runs verify --store URL --spec SPEC [--spec-new NEW]`: replay every stored run
of SPEC against it (and against a proposed new version), reported as `check` reports
(statechart.runs_verify does the work).
"""

from __future__ import annotations

import argparse
import sys

from statechart.cli import colour, missing_paths
from statechart.cli.runs import Usage, compiled, location, open_existing


def verify_runs(args: argparse.Namespace) -> int:
    from statechart.cli.check import output_format
    from statechart.linter import check_file
    from statechart.runs_verify import Against, reporters, verify

    paths = [args.spec, *([args.spec_new] if args.spec_new else [])]
    if missing_paths("runs verify", paths, files=True):
        return 2
    fmt = output_format(args.format)
    results = [check_file(p) for p in paths]
    errors = [d for r in results for d in r.errors]
    show = colour.enabled(args.color, sys.stdout)
    if errors:
        sources = _sources(paths) if fmt == "full" else {}
        sys.stdout.write(colour.report(reporters(), fmt, errors, sources, show))
        return 0 if args.exit_zero else 1
    spec = results[0].spec
    new = results[1].spec if args.spec_new else None
    assert spec is not None  # a spec without errors has a model
    if new is not None and new.name != spec.name:
        raise Usage(f"{args.spec_new} is spec `{new.name}`, {args.spec} is `{spec.name}`: "
                    "--spec-new is a new version of the same spec")
    against = Against(args.spec, compiled(spec))
    proposed = Against(args.spec_new, compiled(new), proposed=True) if new else None
    with open_existing(args.store) as store:
        found = verify(store, location(args.store), against, proposed)
    sys.stdout.write(colour.report(reporters(), fmt, found.diagnostics, {}, show))
    if fmt == "full" and not found.diagnostics:
        if found.runs == 0:
            print(f"no runs of `{spec.name}` in the store: nothing to verify.")
        else:
            also = f" and {args.spec_new}" if args.spec_new else ""
            print(f"{found.runs} run{'s' * (found.runs != 1)} of `{spec.name}` verified "
                  f"against {args.spec}{also}: no problems.")
    return 1 if any(d.severity == "error" for d in found.diagnostics) and not args.exit_zero \
        else 0


def _sources(paths: list[str]) -> dict[str, str]:
    """The spec texts for `full`'s snippets, read as the checker read them."""
    from statechart.spec_file import SpecFileError, read_spec

    out: dict[str, str] = {}
    for path in paths:
        try:
            out[path] = read_spec(path).decode("utf-8-sig", "replace")
        except (OSError, SpecFileError):
            pass
    return out
