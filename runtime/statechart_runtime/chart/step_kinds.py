"""How a step took its transition (`Step.kind`), and its one codec.

None: an external transition; `shallow`/`deep`: it entered its target by history; `internal`:
it did not exit its source; `targetless`: it exited and entered nothing (its target is its
source); `multi`: it entered several targets (the step names the first). A record's JSON holds
a history kind under `history` and the others under `kind` (docs/runs.md, "The record"); a run
store's step row holds the kind itself (NULL for None). Both are read and written here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from statechart_runtime.chart.chart import INTERNAL, MULTI, TARGETLESS

HISTORY_KINDS = ("shallow", "deep")
OTHER_KINDS = (INTERNAL, TARGETLESS, MULTI)
KINDS = (*HISTORY_KINDS, *OTHER_KINDS)
# The keys a step's JSON object may hold its kind under (at most one of them).
KEYS = ("history", "kind")


def to_json(kind: str | None) -> dict[str, str]:
    """A step's kind as its JSON object holds it: `{"history": "deep"}`, `{"kind":
    "internal"}`, `{}` for an external step."""
    if kind is None:
        return {}
    return {"history" if kind in HISTORY_KINDS else "kind": kind}


def from_json(step: Mapping[str, Any], where: str,
              invalid: Callable[[str, str], Exception]) -> str | None:
    """The kind of a step's JSON object (its keys checked already: at most one of KEYS);
    `invalid(where, why)` for a value that is not one."""
    kind = step.get("history")
    if kind not in (None, *HISTORY_KINDS):
        raise invalid(where + ".history", f"expected `shallow` or `deep`, got {kind!r}")
    if "kind" in step:
        kind = step["kind"]
        if kind not in OTHER_KINDS:
            raise invalid(where + ".kind", "expected `internal`, `targetless` or `multi`, got "
                          f"{kind!r}")
    return kind


def checked(kind: object, where: str, invalid: Callable[[str, str], Exception]) -> str | None:
    """A kind as a `Step` object (or a store's column) holds it, checked."""
    if kind not in (None, *KINDS):
        raise invalid(where + ".kind", "expected `shallow`, `deep`, `internal`, `targetless` or "
                      f"`multi`, got {kind!r}")
    return kind


def in_words(kind: str | None) -> str:
    """How a step of `kind` takes its transition, in words."""
    return f"by {kind} history" if kind in HISTORY_KINDS else \
        f"as {'an' if kind != TARGETLESS else 'a'} {kind or 'external'} transition"
