"""Objects named `MODULE:OBJECT` on a command line (`statechart runs work --handlers`,
`--listener`): imported, or a ValueError that says what is wrong."""

from __future__ import annotations

import importlib
from typing import Any


def named_object(where: str, option: str, expected: str, example: str) -> Any:
    """OBJECT of MODULE for `where` (`MODULE:OBJECT`), given to `option`, which expects
    `expected` (for the messages, with an `example`); None when MODULE has no OBJECT."""
    module_name, _, attr = where.partition(":")
    if not module_name or not attr:
        raise ValueError(f"{option} {where!r}: expected MODULE:OBJECT ({expected}), e.g. "
                         f"{example}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"{option} {where!r}: cannot import {module_name!r} ({exc}); is it "
                         "on PYTHONPATH?") from None
    return getattr(module, attr, None)
