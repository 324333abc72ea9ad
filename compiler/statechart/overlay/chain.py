"""Finding an overlay's bases on disk: the file `extends:` names, the chain of files a spec
extends, and the specs that extend given bases."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from statechart.overlay.nodes import entry, key_name
from statechart.spec_file import SpecFileError, read_spec, specs_root
from statechart.yaml_source import load_bytes

MAX_CHAIN = 16


def base_path(overlay: Path, ref: str) -> Path:
    folder = overlay.parent
    if "/" in ref or ref.endswith((".yaml", ".yml")):
        return folder / ref
    for suffix in (".yaml", ".yml"):
        if (folder / f"{ref}{suffix}").exists():
            return folder / f"{ref}{suffix}"
    return folder / f"{ref}.yaml"


def bases_of(path: Path) -> list[Path]:
    """The files the spec at `path` extends, its own base first, as real paths; as far as they
    can be read (a chain that breaks is reported by `resolve`, when the spec is checked)."""
    out: list[Path] = []
    current, root = path, specs_root(path)
    while len(out) <= MAX_CHAIN:
        try:
            raw = read_spec(current, root)
        except (OSError, SpecFileError):
            break
        if b"extends" not in raw:  # most specs: no need to parse them
            break
        source, _ = load_bytes(str(current), raw)
        found = entry(source.root, "extends") if source is not None and source.root else None
        ref = key_name(found[1]) if found is not None else None
        if ref is None:
            break
        current = base_path(current, ref)
        if current.resolve() in out:
            break
        out.append(current.resolve())
    return out


def extending(bases: Iterable[Path], candidates: Iterable[Path]) -> dict[Path, Path]:
    """The `candidates` that extend one of `bases`, directly or through other overlays, each
    with the base of `bases` it extends (as given)."""
    wanted = {b.resolve(): b for b in bases}
    out: dict[Path, Path] = {}
    for candidate in candidates:
        if candidate.resolve() in wanted:
            continue
        base = next((wanted[b] for b in bases_of(candidate) if b in wanted), None)
        if base is not None:
            out[candidate] = base
    return out
