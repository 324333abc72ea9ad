"""`statechart init [DIR]`: start a project (`statechart.scaffold`): an example spec, the
editor schema, `[tool.statechart]` in `pyproject.toml`, a pre-commit configuration.

Exit codes: 0 written; 1 nothing written, because a file is already there (named) or cannot be
written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from statechart.report import inert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=".", metavar="DIR",
                        help="the project folder (default: this one; created when missing)")


def run(args: argparse.Namespace) -> int:
    from statechart import writes
    from statechart.scaffold import EXAMPLE, ScaffoldError, project_files

    root = Path(args.dir)
    if root.exists() and not root.is_dir():
        print(f"statechart init: {inert(args.dir)} is a file, not a folder", file=sys.stderr)
        return 2
    try:
        files = project_files(root)
        root.mkdir(parents=True, exist_ok=True)
        existed = (root / "pyproject.toml").exists()
        writes.write_all(root.resolve(), files)
    except ScaffoldError as exc:
        print(f"statechart init: {inert(str(exc))}", file=sys.stderr)
        return 1
    except writes.WriteError as exc:
        print(f"statechart init: {inert(str(exc))}; nothing written", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"statechart init: cannot create {inert(args.dir)}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    for rel in sorted(files):
        verb = "added [tool.statechart] to" if rel == "pyproject.toml" and existed else "created"
        print(f"{verb} {inert(rel)}")
    go = "" if args.dir == "." else f"cd {inert(args.dir)} && "
    print(f"next: {go}statechart check && statechart build   (writes generated/{EXAMPLE}.py "
          "and docs/specs/); `statechart new NAME` adds a spec")
    return 0
