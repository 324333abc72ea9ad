"""Finding an overlay's bases on disk: the file `extends:` names, the chain of files a spec
extends, and the specs that extend given bases."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from statechart.overlay.nodes import entry, key_name
from statechart.spec_file import SpecFileError, read_spec, specs_root
from statechart.yaml_source import load_bytes
from statechart_runtime.errors import StatechartError

MAX_CHAIN = 16


PACKAGE_PREFIX = "pkg:"
# The package bases found so far: file (absolute, as read) -> `pkg:PACKAGE/PATH`. Generated
# files name such a base by its reference, the same on every machine, not by where the
# package happens to be installed.
_SHIPPED: dict[str, str] = {}


class PackageBaseError(StatechartError):
    """`extends: pkg:PACKAGE/PATH` names a package that is not installed, or no file in it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def package_base(ref: str) -> Path:
    """The file `extends: pkg:PACKAGE/PATH` names: PATH inside the installed Python package
    PACKAGE (its package data, so the base is versioned with the package), found without
    importing the package's code (`importlib.util.find_spec` imports only its parents)."""
    import importlib.util

    package, _, inner = ref[len(PACKAGE_PREFIX):].partition("/")
    if not package or not inner or ".." in Path(inner).parts or Path(inner).is_absolute():
        raise PackageBaseError(f"`extends: {ref}` is not `pkg:PACKAGE/PATH`",
                               "write `extends: pkg:statechart/bases/agent_run.yaml`: a "
                               "package's import name, then the spec's path inside it")
    try:
        found = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        found = None
    folders = list(found.submodule_search_locations or []) if found is not None else []
    if not folders:
        raise PackageBaseError(f"`extends: {ref}`: no installed Python package `{package}`",
                               f"install the distribution that ships `{package}` (pip "
                               "install ...), or check the name: it is the import name")
    for folder in folders:
        candidate = Path(folder) / inner
        if candidate.is_file():
            _SHIPPED[str(candidate.absolute())] = ref
            return candidate
    raise PackageBaseError(f"`extends: {ref}`: package `{package}` ({folders[0]}) has no "
                           f"`{inner}`", f"the specs it ships: {_shipped(Path(folders[0]))}")


def shipped_ref(file: str) -> str | None:
    """The `pkg:` reference of a package base read from `file`, else None."""
    return _SHIPPED.get(str(Path(file).absolute()))


def _shipped(folder: Path) -> str:
    found = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.yaml"))[:12]
    return ", ".join(found) or "none"


def base_path(overlay: Path, ref: str) -> Path:
    if ref.startswith(PACKAGE_PREFIX):
        return package_base(ref)
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
        try:
            current = base_path(current, ref)
        except PackageBaseError:
            break
        root = current.resolve().parent if ref.startswith(PACKAGE_PREFIX) else root
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
