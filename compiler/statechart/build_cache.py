"""What lets `build` skip the generators of a spec whose outputs are already what they would
make: a manifest of the last build, `.statechart/build-manifest.json` under the project root.

For each spec it holds a key and the files its generators made, each with its SHA-256. A spec
is skipped (its files are planned with the bytes they have) only when its key is the one the
manifest holds AND every file listed is there with the listed hash. The key covers everything
a per-spec output is made from:

- the text of every file the spec was read from (an overlay's bases too), as checked;
- the compiler: its version, and the text of its own sources and the runtime's (templates
  included), so that an edited generator is never taken for the last one; the versions of the
  Python, Jinja2 and Graphviz packages that shape the text;
- the project configuration (root, output folders, kinds built, layout settings, severities,
  every key), the layout bounds in force (configuration, environment, options) and the
  generators that run.

A diagram laid out by Graphviz's `dot` program depends on a program outside Python whose
version the key cannot see: with the `dot` engine, nothing is skipped. Anything wrong with the
manifest (missing, unreadable, another format) only means every spec is generated.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from statechart import __version__
from statechart.config import Config

MANIFEST = ".statechart/build-manifest.json"
FORMAT = 1
# The distributions whose versions shape generated text (templates, escaping, the layout).
_DISTRIBUTIONS = ("jinja2", "graphviz", "graphviz-pure", "pyyaml", "python-statemachine")
_SOURCE_SUFFIXES = frozenset({".py", ".j2", ".json", ".toml"})


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@cache
def compiler_fingerprint() -> str:
    """The compiler as it is installed: version, sources (its own and the runtime's), and the
    versions of what shapes its text. Read once per process (a few milliseconds)."""
    import statechart
    import statechart_runtime

    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0".encode())
    for name in _DISTRIBUTIONS:
        try:
            digest.update(f"{name}={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=-\0".encode())
    for package in (statechart, statechart_runtime):
        base = Path(package.__file__ or "").parent
        for path in sorted(p for p in base.rglob("*") if p.suffix in _SOURCE_SUFFIXES
                           and "__pycache__" not in p.parts):
            digest.update(path.relative_to(base).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def spec_key(sources: tuple[tuple[str, str], ...], spec_path: str, config: Config,
             layout: object, generators: list[str]) -> str | None:
    """The key of one spec's outputs (see the module's docstring); None when its outputs
    cannot be reused (the `dot` engine)."""
    if getattr(layout, "engine", None) == "dot":
        return None
    settings = {k: v for k, v in asdict(config).items() if k != "file"}
    text = json.dumps({
        "compiler": compiler_fingerprint(),
        "config": settings,
        "layout": repr(layout),
        "generators": generators,
        "spec": spec_path,
        "sources": [list(s) for s in sources],
    }, sort_keys=True, default=_plain)
    return sha256(text.encode())


def _plain(value: object) -> object:
    """JSON for what the configuration holds besides JSON's own types (sets in order)."""
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def load(root: Path) -> dict[str, dict[str, Any]]:
    """The manifest's entries (spec path -> {key, files}); empty when there is none or it
    cannot be read."""
    try:
        data = json.loads((root / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT \
            or not isinstance(data.get("specs"), dict):
        return {}
    return data["specs"]  # type: ignore[no-any-return]


def reuse(root: Path, entry: object, key: str) -> dict[str, bytes] | None:
    """The files of `entry` as they are, when `entry` has `key` and every file is there with
    the hash the last build wrote; else None (generate)."""
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    files = entry.get("files")
    if not isinstance(files, dict) or not files:
        return None
    out: dict[str, bytes] = {}
    for rel, digest in files.items():
        try:
            data = (root / rel).read_bytes()
        except OSError:
            return None
        if sha256(data) != digest:
            return None
        out[rel] = data
    return out


def entry(key: str, files: dict[str, bytes]) -> dict[str, Any]:
    return {"key": key, "files": {rel: sha256(data) for rel, data in sorted(files.items())}}


def text(specs: dict[str, dict[str, Any]]) -> bytes:
    """The manifest's bytes (deterministic: sorted keys)."""
    return (json.dumps({"format": FORMAT, "specs": specs}, indent=1, sort_keys=True)
            + "\n").encode()
