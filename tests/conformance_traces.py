"""The conformance traces of `tests/conformance/traces/` (recorded with XState by
`tests/conformance/make_traces.py`), read once per test process.

Six test modules replay or convert them; each reading and decoding the 25 gzipped files for
itself was most of a test process's collection time (about 6 s of 17 here, paid again by every
pytest-xdist worker).
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

TRACES = Path(__file__).parent / "conformance" / "traces"
# The trace families: file prefix -> format. Format 2 steps have a fifth field, the internal
# events taken; format 3 sequences also advance the clock (tests/conformance/README.md).
FAMILIES = {"part": 1, "done-history": 2, "timers": 3, "lang": 3, "in": 3, "always": 3,
            "defaults": 3, "multi": 3, "descriptors": 3}


@functools.cache
def _read() -> tuple[tuple[Path, int, tuple[dict[str, Any], ...]], ...]:
    out = []
    for path in sorted(TRACES.glob("*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            part = json.load(f)
        out.append((path, int(part["format"]), tuple(part["specs"])))
    return tuple(out)


def trace_files() -> list[tuple[Path, int, list[dict[str, Any]]]]:
    """Each trace file in name order: its path, its format, and its specs, each a new dict
    (a caller may add keys to its own; the sequences inside are shared: do not change them)."""
    return [(path, trace_format, [dict(spec) for spec in specs])
            for path, trace_format, specs in _read()]


def family_of(path: Path) -> str:
    """A trace file's family: its name before the number (`done-history-03.json.gz`)."""
    return path.name.rsplit("-", 1)[0]
