"""A mapping has the same key twice.

What: two entries of one mapping have the same key, for example one state declares `on:` twice
or one `on:` mapping lists an event twice.

Why: YAML parsers silently keep the last value, so the first one is lost without a word; in a
state graph that is a transition that quietly disappears.

Example:

    created:
      on:
        start: running
        start: failed      # duplicate-key: the first `start` would be lost

Fix: remove one of them, or, for several targets of one event, list them as guarded
alternatives: `start: [{target: running, guard: ready}, {target: failed}]`.
"""

from statechart.diagnostics import Severity

ID = "duplicate-key"
SEVERITY: Severity = "error"
PHASE = "yaml"
