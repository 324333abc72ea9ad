"""Overlays: a spec that says `extends: BASE` is merged onto its base before it is built.

The merge works on YAML nodes, not on the model, so the merged tree goes through the same
builder and rules as any spec; every node remembers the file it came from (`Merged.files`), so
a problem is reported where it was written, in the base or in the overlay.

What an overlay can do, and nothing else (nothing disappears by omission):
- add states, explicitly, under `add: {states: ...}` (at the top level, or inside an existing
  state by naming it there with only `states:`);
- change an existing state, wherever it is nested, by naming it under `states:`: its `on:`
  events and `after:` timers are added or replaced one by one; `tags`, `requires`, `entry`,
  `exit`, `clear` are extended; other keys (`status`, `counter`, ...) replaced. A name the
  base does not have is an error (a typo must not silently become a new state);
- add record fields and rules; replace a base rule by its `id` only where the base marks it
  `overridable: true` (the base's other rules stay in force: an overlay cannot weaken them);
- remove states, transitions (`STATE.EVENT`; a timer: `STATE.after.15m`, or
  `STATE.after.NAME` for a timer with a `name:`), record fields and
  overridable rules, explicitly, under `remove:`. Removals apply before additions, so
  remove-then-add replaces.

This module holds the entry, `resolve`, which reads the chain and applies each overlay in turn;
its modules: `merged` (what resolving gives), `nodes` (YAML node helpers), `chain` (finding the
bases on disk), `base` (what the merge steps share), and one per part of an overlay: `states`,
`record_rules`, `removals`.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from statechart.diagnostics import Diagnostic
from statechart.overlay.base import ID
from statechart.overlay.chain import (
    MAX_CHAIN,
    PACKAGE_PREFIX,
    PackageBaseError,
    base_path,
    bases_of,
    extending,
)
from statechart.overlay.merged import Change, Merged
from statechart.overlay.nodes import (
    copy_tree,
    duplicate_keys,
    empty_map,
    entry,
    key_name,
    set_entry,
)
from statechart.overlay.record_rules import RecordAndRulesMerge, base_rules_of
from statechart.overlay.removals import Removal
from statechart.overlay.states import StateMerge, added_states
from statechart.spec_file import SpecFileError, read_spec, specs_root
from statechart.yaml_source import Source, load_bytes, span_of


class _Resolver(StateMerge, RecordAndRulesMerge, Removal):
    """Every step of applying an overlay to the tree merged so far."""


def resolve(source: Source, removals: bool = True) -> tuple[Merged | None, list[Diagnostic]]:
    """Merge `source` onto its chain of bases. Returns (None, []) when it extends nothing.
    With `removals` False, every `remove:` of the chain is left out (the linter compares the
    two to find what a removal breaks in a base)."""
    root = source.root
    extends = entry(root, "extends") if isinstance(root, yaml.MappingNode) else None
    if extends is None:
        return None, []
    problems: list[Diagnostic] = []
    files: dict[int, str] = {}
    chain = [source]
    seen = [Path(source.path).resolve()]
    current = source
    package_root: Path | None = None  # once the chain enters a package: the package's folder
    ext: tuple[yaml.Node, yaml.Node] | None = extends
    while ext is not None:
        ref = key_name(ext[1])
        where = span_of(current.path, ext[1])
        if ref is None:
            problems.append(Diagnostic(ID, "error", "`extends` must name a spec", where,
                                       "write `extends: agent_run` or a relative path"))
            return None, problems
        try:
            path = base_path(Path(current.path), ref)
        except PackageBaseError as exc:
            problems.append(Diagnostic(ID, "error", str(exc), where, exc.hint))
            return None, problems
        resolved = path.resolve()
        # A base an installed package ships is read where the package is; any other base is
        # a spec of the same specs folder.
        in_package = ref.startswith(PACKAGE_PREFIX) or package_root is not None
        if ref.startswith(PACKAGE_PREFIX):
            package_root = resolved.parent
        root_dir = package_root if in_package and package_root is not None else \
            specs_root(Path(source.path))
        if not resolved.is_relative_to(root_dir):
            problems.append(Diagnostic(ID, "error", f"`extends: {ref}` points outside {root_dir}",
                                       where, "a base must be a spec in the same specs folder"))
            return None, problems
        if resolved in seen:
            cycle = " -> ".join(p.name for p in [*seen, resolved])
            problems.append(Diagnostic(ID, "error", f"`extends` forms a cycle: {cycle}", where,
                                       "remove `extends` from one of these specs"))
            return None, problems
        if len(chain) > MAX_CHAIN:
            problems.append(Diagnostic(ID, "error", f"more than {MAX_CHAIN} specs extend each "
                                       "other in a chain", where, "flatten the chain"))
            return None, problems
        try:
            raw = read_spec(path, root_dir)
        except SpecFileError as exc:
            problems.append(Diagnostic(ID, "error", f"`extends: {ref}`: {exc}", where, exc.hint))
            return None, problems
        except OSError:
            problems.append(Diagnostic(ID, "error", f"`extends: {ref}`: no spec at {path}", where,
                                       "name a spec in the same folder, without `.yaml`"))
            return None, problems
        base, _ = load_bytes(str(path), raw)
        if base is None or not isinstance(base.root, yaml.MappingNode):
            problems.append(Diagnostic(ID, "error", f"base spec {path} cannot be read",
                                       where, f"run `statechart check {path}`"))
            return None, problems
        chain.append(base)
        seen.append(resolved)
        current, ext = base, entry(base.root, "extends")

    # An overlay's own duplicate keys would vanish in the merge (the later one replaces the
    # earlier): report them here, as the builder does for a spec without `extends`.
    for link in chain[:-1]:
        problems.extend(duplicate_keys(link))
    # Merge from the root base up: each overlay onto the result so far.
    alive: list[yaml.Node] = []
    merged = copy_tree(chain[-1].root, chain[-1].path, files, alive)  # type: ignore[arg-type]
    resolver = _Resolver(files, problems)
    resolver.removals = removals
    for overlay in reversed(chain[:-1]):
        resolver.overlay_path = overlay.path
        if overlay is not source:  # a middle link: record where its nodes came from
            overlay = Source(overlay.path, overlay.text,
                             copy_tree(overlay.root, overlay.path, files,  # type: ignore[arg-type]
                                        alive))
        merged = _apply(resolver, merged, overlay)  # type: ignore[arg-type]
    if entry(root, "statechart") is None:  # type: ignore[arg-type]
        problems.append(Diagnostic(ID, "error", "an overlay needs its own `statechart` name",
                                   span_of(source.path, root),  # type: ignore[arg-type]
                                   "its generated module must not overwrite the base's"))
    # The text of every file of the chain, so that the source hash changes with any of them.
    text = "".join(part.text for part in chain)
    return Merged(Source(source.path, text, merged), files, [s.path for s in chain],
                  resolver.changes, alive, chain), problems


def _apply(resolver: _Resolver, base: yaml.MappingNode, overlay: Source) -> yaml.MappingNode:
    root = overlay.root
    assert isinstance(root, yaml.MappingNode)
    base_rules = base_rules_of(base)
    resolver.added = added_states(root)
    removal = entry(root, "remove")
    if removal is not None and resolver.removals:
        resolver.remove(base, removal[1], base_rules)
    for k, v in root.value:
        key = key_name(k)
        if key in ("extends", "remove"):
            continue
        if key == "add":
            resolver.add(base, v)
            continue
        if key == "states":
            top = entry(base, "states")
            if top is None or not isinstance(top[1], yaml.MappingNode):
                set_entry(base, k, empty_map(v))
                top = entry(base, "states")
            resolver.merge_states(base, top[1], v)  # type: ignore[index,arg-type]
        elif key == "record":
            resolver.add_fields(base, k, v)
        elif key == "rules":
            resolver.add_rules(base, k, v, base_rules)
        else:
            set_entry(base, k, v)
    # Drop the base's `extends`: the merged tree is complete.
    base.value[:] = [(k, v) for k, v in base.value if key_name(k) != "extends"]
    return base


__all__ = ["ID", "MAX_CHAIN", "Change", "Merged", "base_path", "bases_of", "duplicate_keys",
           "extending", "resolve"]
