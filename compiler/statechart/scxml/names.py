"""Names for what an SCXML document calls otherwise: a spec's names are identifiers, unique
across states, events, guards and actions (docs/spec-format.md), and SCXML ids are not
(`b1.1`, `error.tool`, a `cond` expression).
"""

from __future__ import annotations

from statechart.names import IDENTIFIER, suggestion

MAX = 64


class Names:
    """Gives each (kind, SCXML text) one name of the spec, the same every time it is asked,
    unique across the kinds that share one namespace (state, event, guard, action)."""

    def __init__(self) -> None:
        self.given: dict[tuple[str, str], str] = {}
        self.taken: set[str] = set()

    def name(self, kind: str, text: str) -> tuple[str, bool]:
        """The name for `text`, and whether it differs from `text` (then the YAML says so)."""
        found = self.given.get((kind, text))
        if found is not None:
            return found, found != text
        if IDENTIFIER.match(text) and text not in self.taken:
            name = text
        else:
            name = self._unique(derived(kind, text))
        self.given[(kind, text)] = name
        self.taken.add(name)
        return name, name != text

    def _unique(self, stem: str) -> str:
        name, n = stem, 1
        while name in self.taken:
            n += 1
            suffix = f"_{n}"
            name = stem[:MAX - len(suffix)] + suffix
        return name


def derived(kind: str, text: str) -> str:
    """An identifier made from `text` (`statechart.names.suggestion`: `b1.1` -> `b1_1`,
    `x > 3` -> `x_3`); a name taken by a thing of another kind gets the kind: `idle_event`."""
    if IDENTIFIER.match(text):
        return f"{text}_{kind}"[:MAX]
    return suggestion(text)
