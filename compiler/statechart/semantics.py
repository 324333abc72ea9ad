"""Moved to `statechart.spec_chart` (a spec's chart, cached per spec, and event-descriptor
matching).

This path keeps importing, as the same module object, for code written before the rename."""

import sys
from typing import TYPE_CHECKING

from statechart import spec_chart as _moved

if TYPE_CHECKING:  # what a type checker reads: the module's public names
    from statechart.spec_chart import *  # noqa: F403

sys.modules[__name__] = _moved
