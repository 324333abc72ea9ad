"""Moved to `statechart_runtime.chart.timers` (timers).

This path keeps importing, as the same module object (private names included), for code
written before the runtime was laid out by layer."""

import sys
from typing import TYPE_CHECKING

from statechart_runtime.chart import timers as _moved

if TYPE_CHECKING:  # what a type checker reads: the module's public names
    from statechart_runtime.chart.timers import *  # noqa: F403

sys.modules[__name__] = _moved
