"""The console's routes, matched on the path as the client sent it: a run id is one path
segment, with a `/` in it sent as `%2F` (the console's links quote ids so), and no id is ever
taken for a fixed part of a path. Starlette matches on the decoded path, where the page of
run `x/live` (`/runs/x%2Flive`) and the live fragment of run `x` (`/runs/x/live`) are the
same text; here only `%2F` and `%25` stay encoded while matching, and each parameter is
decoded after. (No path names a fixed segment where an id goes: bulk cancel is `/cancel`,
not `/runs/cancel`.)
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from starlette.routing import Match, Route
from starlette.types import Scope

_KEPT = re.compile(r"(%2[fF]|%25)")


def sent_path(scope: Scope) -> str:
    """The request's path with every escape decoded but `%2F` and `%25`: from `raw_path`
    when the server gives it and it decodes to `path` (else `path`, with its `%` escaped,
    so that decoding it again gives it back)."""
    path: str = scope["path"]
    raw = scope.get("raw_path")
    if raw:
        pieces = _KEPT.split(raw.decode("latin-1"))
        sent = "".join(piece.upper() if n % 2 else unquote(piece)
                       for n, piece in enumerate(pieces))
        if unquote(sent) == path:
            return sent
    return path.replace("%", "%25")


class SentPathRoute(Route):
    """A route matched on `sent_path`; its parameters decoded."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return super().matches(scope)
        match, child = super().matches({**scope, "path": sent_path(scope)})
        if match is not Match.NONE:
            params: dict[str, Any] = child["path_params"]
            for name in self.param_convertors:
                params[name] = unquote(params[name])
        return match, child
