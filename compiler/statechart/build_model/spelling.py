"""Spelling suggestions for a name the spec (or a command) does not know: `closest`,
`did_you_mean`, and `listing` for the names there are."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str], *, words: bool = False) -> str | None:
    """The choice `word` most likely misspells, or None when none is close. With `words`
    (state names), a choice that shares a word with `word`, written alike, counts too: a
    state renamed or reworded keeps a word of its name (`held` for `on_hold`,
    `awaiting_payment` for `payment_pending`)."""
    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close or not words:
        return close[0] if close else None
    best, score = None, 0.74
    for choice in choices:
        for part in (p for p in word.lower().split("_") if len(p) >= 3):
            for other in choice.lower().split("_"):
                ratio = difflib.SequenceMatcher(None, part, other).ratio()
                if ratio > score:
                    best, score = choice, ratio
    return best


def did_you_mean(word: str, choices: Iterable[str], *, words: bool = False) -> str:
    close = closest(word, choices, words=words)
    return f"did you mean `{close}`?" if close else ""


def listing(what: str, names: Iterable[str], limit: int = 12) -> str:
    """`states: a, b, c, ... (7 more)`: the first `limit` names, and how many were left out."""
    names = list(names)
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"{what}: {', '.join(names[:limit])}{more}"
