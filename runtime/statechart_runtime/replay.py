"""Moved to `statechart_runtime.run.replay` (replay).

This path keeps importing, as the same module object (private names included), for code
written before the runtime was laid out by layer."""

import sys
from typing import TYPE_CHECKING

from statechart_runtime.run import replay as _moved

if TYPE_CHECKING:  # what a type checker reads: the module's public names
    from statechart_runtime.run.replay import *  # noqa: F403

sys.modules[__name__] = _moved
