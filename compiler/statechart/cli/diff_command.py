"""The work of `statechart diff` (`statechart.cli.diff` parses the arguments and imports
this only when the command runs, so that `statechart diff --help` imports no compiler)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from statechart.cli import colour, missing_paths, project_config
from statechart.cli.check import output_format
from statechart.diagnostics import Diagnostic, Span
from statechart.diff import Change, diff_specs
from statechart.diff import reporters as diff_reporters
from statechart.linter import SPEC_SUFFIXES, check_source
from statechart.model import Spec
from statechart.report import inert
from statechart.spec_file import SpecFileError, read_spec, specs_root
from statechart_runtime.errors import StatechartError

REPORTERS = diff_reporters()


class _Usage(StatechartError):
    """A usage error (`run` prints it after the usage line, exit 2). A `StatechartError`
    (`statechart_runtime.errors`) like every error the project raises on purpose."""


class _Result:
    """What all compared pairs produce together: the diagnostics and the texts for snippets."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.sources: dict[str, str] = {}
        self.pairs = 0

    def change(self, change: Change) -> None:
        self.diagnostics.append(change.diagnostic())

    def compare(self, old_name: str, old_raw: bytes, new_name: str, new_raw: bytes,
                relabel: tuple[str, str] | None = None) -> None:
        """Check both texts first: a diff of a broken spec would report nonsense.

        `relabel` (prefix, replacement) renames files in positions: an old spec checked from a
        temporary copy of the ref's specs folder is reported as `REF:path`.
        """
        self.pairs += 1
        first = len(self.diagnostics)
        old, new = check_source(old_name, old_raw), check_source(new_name, new_raw)
        for name, raw in ((old_name, old_raw), (new_name, new_raw)):
            self.sources[name] = raw.decode("utf-8", "replace")
        if old.errors or new.errors or old.spec is None or new.spec is None:
            self.diagnostics.extend(old.errors + new.errors)
        else:
            for c in diff_specs(old.spec, new.spec, overlay=_extends(new.spec, old_name)):
                self.change(c)
        if relabel is not None:
            prefix, label = relabel
            self.sources[label + old_name[len(prefix):]] = self.sources.pop(old_name)
            self.diagnostics[first:] = [
                replace(d, span=replace(d.span, file=label + d.span.file[len(prefix):]))
                if d.span.file.startswith(prefix) else d for d in self.diagnostics[first:]]

    def added(self, path: str, raw: bytes) -> None:
        self.pairs += 1
        result = check_source(path, raw)
        self.sources[path] = raw.decode("utf-8", "replace")
        if result.errors:
            self.diagnostics.extend(result.errors)
        else:
            self.change(Change("spec-added", "new spec", Span.point(path, 1, 1)))


def _extends(spec: Spec, base: str) -> bool:
    """Whether `spec` is an overlay whose direct base is the file `base`."""
    if spec.overlay is None or len(spec.overlay.chain) < 2:
        return False
    try:
        return Path(spec.overlay.base).resolve() == Path(base).resolve()
    except OSError:
        return False


def _base_of(overlay: str) -> str:
    """The file the overlay at `overlay` extends (`--base`)."""
    result = check_source(overlay, read_spec(overlay))
    spec = result.spec
    if spec is None or spec.overlay is None:
        if result.errors:
            raise _Usage(f"{overlay} does not pass `statechart check`: run it first")
        raise _Usage(f"{overlay} has no `extends`: --base compares an overlay with its base")
    return spec.overlay.base


def _git(*argv: str) -> bytes:
    try:
        done = subprocess.run(["git", *argv], capture_output=True, check=False)
    except OSError as exc:
        raise _Usage(f"cannot run git: {exc}") from None
    if done.returncode != 0:
        raise _Usage(done.stderr.decode("utf-8", "replace").strip() or f"git {argv[0]} failed")
    return done.stdout


def _paths(output: bytes) -> list[str]:
    """The NUL-separated fields of a `git ... -z` listing, as file names. Without -z git quotes
    a name with non-ASCII, `"`, `\\` or a tab ("caf\\303\\251.yaml"), and that name would
    match no file: a changed spec would be skipped. os.fsdecode gives the name this file system
    uses (undecodable bytes survive as surrogates)."""
    return [os.fsdecode(field) for field in output.split(b"\0") if field]


def _materialize(ref: str, path: Path, raw: bytes, tmp: Path) -> Path:
    """Write the specs folder holding `path` as it was at `ref` under `tmp`."""
    root = specs_root(path)
    try:
        relative_root = root.relative_to(Path.cwd().resolve())
    except ValueError:
        relative_root = path.parent
    listing = _git("ls-tree", "-r", "-z", "--name-only", ref, "--",
                   f"./{relative_root.as_posix()}")
    for name in _paths(listing):
        if name.endswith(SPEC_SUFFIXES):
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_git("show", f"{ref}:./{name}"))
    old_path = tmp / path
    old_path.parent.mkdir(parents=True, exist_ok=True)
    old_path.write_bytes(raw)
    return old_path


def _verify_ref(ref: str) -> None:
    try:
        _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except _Usage:
        raise _Usage(f"`{ref}` is not a git revision here") from None


def _at_ref(ref: str, path: str) -> bool:
    """Whether `path` (a file or folder, as a pathspec from here) holds anything at `ref`."""
    return bool(_paths(_git("ls-tree", "-r", "-z", "--name-only", ref, "--", path)))


def _against(ref: str, paths: list[str], result: _Result) -> None:
    # --relative: paths as seen from here, also the form `git show REF:./path` takes.
    # -z: STATUS NUL PATH NUL, each name as it is (see `_paths`).
    fields = _paths(_git("diff", "--name-status", "--no-renames", "--relative", "-z", ref, "--",
                         *paths))
    changed = list(zip(fields[::2], fields[1::2], strict=True))
    untracked = _git("ls-files", "--others", "--exclude-standard", "-z", "--", *paths)
    changed += [("A", p) for p in _paths(untracked)]
    for status, path in sorted(changed, key=lambda c: c[1]):
        if not path.endswith(SPEC_SUFFIXES):
            continue
        old_name = f"{ref}:{path}"
        if status == "D":
            result.pairs += 1
            result.change(Change("spec-removed", f"spec `{path}` was deleted",
                                 Span.point(old_name, 1, 1), for_runs=True, for_callers=True,
                                 help="stored runs of it can no longer be loaded"))
        elif status == "A":
            result.added(path, read_spec(path))
        else:
            old_raw = _git("show", f"{ref}:./{path}")
            if b"extends" not in old_raw:
                result.compare(old_name, old_raw, path, read_spec(path))
                continue
            # An overlay's base must be read as it was at REF too: check the old text inside a
            # temporary copy of the ref's specs folder.
            with tempfile.TemporaryDirectory() as tmp:
                old_path = _materialize(ref, Path(path), old_raw, Path(tmp))
                result.compare(str(old_path), old_raw, path, read_spec(path),
                               relabel=(tmp + os.sep, f"{ref}:"))


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args.format)  # a bad STATECHART_OUTPUT_FORMAT: before any work
    result = _Result()
    try:
        if args.against and args.base:
            raise _Usage("--base and --against do not combine: `diff --against GIT_REF "
                         "OVERLAY` shows how an overlay (merged onto its base) changed since "
                         "GIT_REF; `diff --base OVERLAY` what it changes against its base now")
        if args.against:
            config = project_config("diff", args, args.paths)
            if config is None:
                return 2
            paths = args.paths or config.spec_paths()
            _verify_ref(args.against)
            # A spec deleted since the ref is missing here but is what the diff is about.
            if missing_paths("diff", paths,
                             found_elsewhere=lambda p: _at_ref(args.against, p)):
                return 2
            _against(args.against, paths, result)
        elif args.base:
            if args.paths:
                raise _Usage("--base takes the overlay only: `statechart diff --base OVERLAY`")
            if missing_paths("diff", [args.base], files=True):
                return 2
            base = _base_of(args.base)
            result.compare(base, read_spec(base), args.base, read_spec(args.base))
        else:
            if len(args.paths) != 2:
                raise _Usage("give OLD and NEW, --base OVERLAY, or --against GIT_REF")
            if missing_paths("diff", args.paths, files=True):
                return 2
            old, new = args.paths
            result.compare(old, read_spec(old), new, read_spec(new))
    except _Usage as exc:
        print(f"usage: statechart diff OLD NEW | --base OVERLAY | --against GIT_REF [PATH ...]\n"
              f"statechart diff: {exc}", file=sys.stderr)
        return 2
    except (OSError, SpecFileError) as exc:
        print(f"statechart diff: {inert(str(exc))}", file=sys.stderr)
        return 2
    # Pair by pair, each in diff_specs' order; a base's change seen again through an overlay
    # is the same line twice, shown once.
    diagnostics = list(dict.fromkeys(result.diagnostics))
    sys.stdout.write(colour.report(REPORTERS, fmt, diagnostics,
                                   result.sources if fmt == "full" else {},
                                   colour.enabled(args.color, sys.stdout)))
    if fmt == "full" and not diagnostics:
        what = f"{result.pairs} spec{'s' * (result.pairs != 1)}" if args.against else "the specs"
        print(f"{what} compared: no changes." if result.pairs else
              f"no spec changed since {args.against}.")
    return 1 if any(d.severity == "error" for d in diagnostics) and not args.exit_zero else 0

