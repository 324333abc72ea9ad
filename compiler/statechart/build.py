"""`statechart build`: check every spec, then write what the generators produce.

Core only: it returns data and never prints (the CLI does). The steps:

1. `plan`: check each spec (`linter.check_file`); with any error, stop with nothing planned.
   Otherwise run every generator of `outputs.PER_SPEC` and `outputs.ALL_SPECS` (a registry
   entry that cannot be loaded is a problem: an output nobody can produce is neither written
   nor "up to date") and find the orphans: files under the output folders that start with our
   header (`generated_header`) and name a spec that no longer exists, or a spec of this build
   that no longer produces them (its `statechart:` name changed).
   Whole-set generators (the index) always see every spec of the folders the build covers: a
   build of some files (`build specs/agent_run.yaml`) also checks, quietly, the other specs
   of those files' folders, so the index still lists them all; when one of those has errors,
   the whole-set outputs are left as they are and a note says so.
   A file a generator could not make for a reason outside the spec (`OutputUnavailable`: the
   diagram's layout timed out or ran out of memory) is `unavailable`, not a problem: the
   other files are still planned, and that file is left as it is (never an orphan).
2. `apply`: write each planned file that is missing or different, atomically and all
   together (`writes`: one build at a time, every temp file written before any is renamed),
   so that a build killed or failing at any point leaves every file either old or new, never
   truncated, and a failure before the renames leaves every file old; delete the orphans. The
   CLI still fails when a file was unavailable.
3. `stale`: the `--check` mode; what `apply` would change, as unified diffs, writing nothing.

Every path a generator returns must stay inside the root: it is built from the spec's
validated name, and checked again here before anything is written. The root, the output
folders and which kinds of output are built come from the project configuration
(`statechart.config`); the generators read it from `outputs.project()`.
"""

from __future__ import annotations

import difflib
import gc
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from statechart import build_cache, outputs, writes
from statechart.config import Config
from statechart.diagnostics import Diagnostic
from statechart.generated_header import (
    generated_files,
    is_whole_set,
    project_files,
    read_header,
)
from statechart.linter import FileResult, check_file, spec_files, unique
from statechart.model import Spec
from statechart.render import bounds

Action = Literal["created", "updated", "unchanged", "deleted"]


@dataclass
class Problem:
    """Something that stops the build that is not a spec diagnostic (a generator's refusal,
    two specs writing one file, a path outside the root)."""

    path: str
    message: str
    output: str | None = None  # the generated file concerned, when there is one


@dataclass
class Plan:
    root: Path
    config: Config
    results: list[FileResult] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)  # relative POSIX path -> content
    orphans: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # outputs left alone, and why
    # Files that could not be made this time (layout limits): left as they are; build fails.
    unavailable: list[Problem] = field(default_factory=list)
    # The manifest entries of the specs built (statechart.build_cache): `apply` keeps them.
    cache: dict[str, dict[str, object]] = field(default_factory=dict)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return unique(self.results)

    @property
    def ok(self) -> bool:
        return not self.problems and not any(r.errors for r in self.results)


def _generators(registry: dict[str, str],
                plan: Plan) -> list[tuple[str, Callable[..., dict[str, bytes]]]]:
    out = []
    for name, ref in registry.items():
        try:
            out.append((name, outputs.load(ref)))
        # Any failure, not only ImportError: a generator module can raise anything while it
        # is imported, and skipping it would let `--check` call its outputs up to date.
        except Exception as exc:
            plan.problems.append(Problem("(all specs)", f"generator `{name}` cannot be loaded "
                                         f"from `{ref}`: {type(exc).__name__}: {exc}"))
    return out


def _safe(root: Path, rel: str) -> Path:
    path = (root / rel).resolve()
    if Path(rel).is_absolute() or ".." in Path(rel).parts or not path.is_relative_to(root):
        raise ValueError(f"output path {rel!r} is outside {root}")
    return root / rel


def output_dirs(config: Config) -> tuple[str, ...]:
    """The folders `build` writes into (and searches for orphans): each configured folder
    once, a folder inside another one left out."""
    folders = sorted(set(config.folders.values()))
    return tuple(f for f in folders
                 if not any(f != o and Path(f).is_relative_to(o) for o in folders))


def plan(paths: Iterable[str | os.PathLike[str]], config: Config | None = None) -> Plan:
    """The build of the specs under `paths` for the project `config` (default: the defaults,
    rooted at the current directory)."""
    config = config or Config(Path.cwd().resolve())
    with outputs.using(config), _collector_paused():
        return _plan(list(paths), config)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The garbage collector off while the specs are checked and generated (as `check` has
    it): the generators make millions of small objects without cycles while every model is
    alive, so each full collection walks them all for nothing (a first build of a
    10,000-state spec spent about a third of its time there). What cycles there are (Jinja2's
    compiled templates) are collected once it is back on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _plan(paths: list[str | os.PathLike[str]], config: Config) -> Plan:
    result = Plan(config.root.resolve(), config)
    specs: list[Spec] = []
    for file in spec_files(paths):
        checked = check_file(file, config)
        result.results.append(checked)
        if checked.spec is not None and not checked.errors:
            specs.append(checked.spec)
    clean = [r for r in result.results if r.spec is not None and not r.errors]
    if not result.results:
        result.problems.append(Problem(" ".join(map(str, paths)), "no spec files found"))
    if not result.ok:
        return result
    per_spec = _generators(_built(outputs.PER_SPEC, config), result)
    all_specs = _generators(_built(outputs.ALL_SPECS, config), result)
    if not result.ok:  # a generator is missing: nothing may be written or called up to date
        return result
    whole_set = _whole_set(paths, clean, config) if all_specs else clean
    if whole_set is None:
        result.notes.extend(
            f"`{name}` not written: another spec in the folders of {' '.join(map(str, paths))}"
            " has errors (check it, or build the whole folder)" for name, _ in all_specs)
        all_specs = []
    if "diagrams" in config.build and any(name == "docs" for name, _ in per_spec):
        # The page says why it has no picture; the build's output says it too.
        limits = bounds.current()
        result.notes.extend(f"no diagram for {spec.path}: {limits.omitted(spec)} (its page says "
                            "so; `layout-max-transitions` raises the bound)"
                            for spec in specs if limits.settings(spec) is None)
    owner: dict[str, str] = {}

    def add(source: str, produced: dict[str, bytes]) -> None:
        for rel, data in produced.items():
            try:
                _safe(result.root, rel)
            except ValueError as exc:
                result.problems.append(Problem(source, str(exc)))
                continue
            if rel in owner and owner[rel] != source:
                result.problems.append(Problem(source, f"{rel} is also written for "
                                                       f"{owner[rel]}; rename one spec"))
                continue
            owner[rel] = source
            result.files[rel] = data

    incomplete: set[str] = set()  # specs with a file unavailable: their old files stay

    def unavailable(source: str, name: str, exc: outputs.OutputUnavailable) -> None:
        result.unavailable.append(Problem(source, f"{name}: {exc}", exc.path))
        incomplete.add(source)
        add(source, exc.produced)

    last = build_cache.load(result.root)
    layout = bounds.current()
    refs = [f"{name}={outputs.PER_SPEC.get(name, '')}" for name, _ in per_spec]
    for checked in clean:
        spec = checked.spec
        assert spec is not None
        shown = outputs.spec_display_path(spec)
        key = build_cache.spec_key(checked.sources, shown, config, layout, refs) \
            if per_spec else None
        reused = build_cache.reuse(result.root, last.get(shown), key) if key else None
        if reused is not None:  # what its generators would make: statechart.build_cache
            add(spec.path, reused)
            result.cache[shown] = last[shown]
            continue
        made: dict[str, bytes] | None = {}
        for name, generate in per_spec:
            try:
                produced = generate(spec)
            except outputs.OutputUnavailable as exc:
                unavailable(spec.path, name, exc)
                made = None
                continue
            except ValueError as exc:  # CodegenError and friends: the spec, not a crash
                result.problems.append(Problem(spec.path, f"{name}: {exc}"))
                made = None
                continue
            add(spec.path, produced)
            if made is not None:
                made.update(produced)
        if key and made:
            result.cache[shown] = build_cache.entry(key, made)
    for name, generate in all_specs:
        try:
            add("(all specs)", generate(whole_set))
        except outputs.OutputUnavailable as exc:
            unavailable("(all specs)", name, exc)
        except ValueError as exc:
            result.problems.append(Problem("(all specs)", f"{name}: {exc}"))
    if config.editor_schema is not None:  # the spec format's schema, kept with the outputs
        from statechart.spec_format import editor_schema_text

        add("(editor schema)", {config.editor_schema: editor_schema_text().encode()})
    if result.ok:
        # A spec whose file could not be made did not "stop producing" it: not an orphan.
        built = {outputs.spec_display_path(s) for s in specs if s.path not in incomplete}
        result.orphans = find_orphans(result.root, set(result.files), built,
                                      output_dirs(config), whole_set=bool(all_specs))
    return result


def _built(registry: dict[str, str], config: Config) -> dict[str, str]:
    """The generators of `registry` that make a kind of output the project builds."""
    return {name: ref for name, ref in registry.items()
            if outputs.KINDS.get(name, frozenset(config.build)) & config.build}


def _whole_set(paths: Iterable[str | os.PathLike[str]], results: list[FileResult],
               config: Config) -> list[FileResult] | None:
    """The check results of every spec of the folders the build covers: `results`, plus the
    other specs in the folders of the files named (as `build FOLDER` finds them), or None when
    one of those has errors."""
    folders = [Path(p).parent for p in paths if not Path(p).is_dir()]
    if not folders:
        return results
    named = {Path(r.path).resolve() for r in results}
    out = list(results)
    for file in spec_files(dict.fromkeys(folders)):
        if file.resolve() in named:
            continue
        named.add(file.resolve())
        checked = check_file(file, config)
        if checked.spec is None or checked.errors:
            return None
        out.append(checked)
    return out


def find_orphans(root: Path, planned: set[str], built: set[str] | None = None,
                 folders: tuple[str, ...] | None = None, whole_set: bool = False) -> list[str]:
    """Generated files (`generated_header`) under `folders` (default: the default output
    folders) whose spec is gone, and, anywhere in the project (`project_files`), those whose
    spec is in `built` (the specs this build generates from, as their headers name them) but
    did not produce them this time: a spec renamed, or an output folder of the configuration
    changed. With `whole_set` (the whole-set generators ran), a whole-set output (the index,
    the code folder's `__init__.py`) that this build did not produce, anywhere in the project,
    too. Never a file without our header. Paths in headers are relative to the root
    (`outputs.spec_display_path`)."""
    built = built or set()
    folders = folders or output_dirs(Config(root))
    out = []
    for path, header in generated_files(root / folder for folder in folders):
        rel = path.relative_to(root).as_posix()
        if rel in planned:
            continue
        if any(header.names(spec) for spec in built) or not header.spec_exists(root):
            out.append(rel)
    if not built:
        return out
    for path in project_files(root):
        rel = path.relative_to(root).as_posix()
        if rel in planned or rel in out:
            continue
        named = read_header(path)
        if (named is not None and any(named.names(spec) for spec in built)) \
                or (named is None and whole_set and is_whole_set(path)):
            out.append(rel)
    return sorted(out)


def _current(root: Path, rel: str) -> bytes | None:
    """The file as it is, or None when there is none (a file or a folder in the way counts as
    none: `apply` then fails on it with a message, `--check` calls it missing)."""
    try:
        return (root / rel).read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def apply(p: Plan, on_wait: Callable[[], None] | None = None) -> list[tuple[str, Action]]:
    """Write what changed and delete the orphans, holding the build lock (`on_wait` is called
    when another build holds it). Refuses a plan with problems; raises writes.WriteError."""
    if not p.ok:
        raise ValueError("the plan has errors; nothing may be written")
    with writes.locked(p.root, exclusive=True, on_wait=on_wait):
        writes.remove_leftover_temps(
            p.root, (*output_dirs(p.config), str(Path(build_cache.MANIFEST).parent)))
        done: list[tuple[str, Action]] = []
        changed: dict[str, bytes] = {}
        for rel in sorted(p.files):
            _safe(p.root, rel)
            current = _current(p.root, rel)
            if current == p.files[rel]:
                done.append((rel, "unchanged"))
            else:
                changed[rel] = p.files[rel]
                done.append((rel, "created" if current is None else "updated"))
        writes.write_all(p.root, changed)
        _keep_manifest(p)
        for rel in p.orphans:
            try:
                (p.root / rel).unlink(missing_ok=True)
            except OSError as exc:
                raise writes.error(p.root, f"every output is written, but the orphan {rel} "
                                           "could not be deleted", exc) from None
            done.append((rel, "deleted"))
    return done


def _keep_manifest(p: Plan) -> None:
    """The manifest with this build's entries (after the outputs: a build stopped between
    the two leaves entries that no longer match, so the next build generates again)."""
    if not p.cache:
        return
    specs = {**build_cache.load(p.root), **p.cache}
    data = build_cache.text(specs)
    if _current(p.root, build_cache.MANIFEST) != data:
        writes.write_all(p.root, {build_cache.MANIFEST: data})


Staleness = Literal["missing", "stale", "orphaned"]


def stale(p: Plan, on_wait: Callable[[], None] | None = None) -> list[tuple[str, Staleness, str]]:
    """What `apply` would change, each with a unified diff; writes nothing. Reads under the
    shared build lock, so never while a build is halfway through its renames."""
    out: list[tuple[str, Staleness, str]] = []
    with writes.locked(p.root, exclusive=False, on_wait=on_wait):
        for rel in sorted(p.files):
            current = _current(p.root, rel)
            if current == p.files[rel]:
                continue
            kind: Staleness = "missing" if current is None else "stale"
            out.append((rel, kind, _diff(rel, current, p.files[rel])))
        for rel in p.orphans:
            out.append((rel, "orphaned", _diff(rel, _current(p.root, rel), None)))
    return out


def change_summary(p: Plan, rel: str) -> list[str] | None:
    """For a stale output: which states, transitions and fields its old and new versions
    describe differently (`output_summary`), or None when its type is not read so."""
    from statechart.output_summary import summary

    current = _current(p.root, rel)
    if current is None or rel not in p.files:
        return None
    return summary(rel, current, p.files[rel])


def _diff(rel: str, old: bytes | None, new: bytes | None) -> str:
    def lines(data: bytes | None) -> list[str]:
        if data is None:
            return []
        return data.decode("utf-8", errors="replace").splitlines(keepends=True)

    if (old is not None and b"\0" in old) or (new is not None and b"\0" in new):
        return f"Binary file {rel} differs\n"
    diff = difflib.unified_diff(lines(old), lines(new),
                                "/dev/null" if old is None else f"a/{rel}",
                                "/dev/null" if new is None else f"b/{rel}")
    return "".join(d if d.endswith("\n") else d + "\n\\ No newline at end of file\n"
                   for d in diff)
