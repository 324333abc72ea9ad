"""An overlay (`extends:`) cannot be applied to its base.

What: the spec says `extends: BASE` and the base cannot be found, lies outside the specs folder,
extends back to this spec (a cycle), or cannot be read (not a regular file, over 16 MiB); or
the overlay changes (under `states:`) a state the base does not have, adds (under `add:`) a
state the base already has, tries to redefine a base record field, remove something the base
does not have, or replace or remove a base rule that is not marked `overridable: true`; or the
overlay has no `statechart` name of its own. Also: a removal (`remove:`) that breaks what the
base still says (a transition to a removed state, a `set:` of a removed field, a state only a
removed transition entered) is one problem at the `remove:` entry, listing the base's lines in
its help, instead of one problem at each line of a base the overlay's team does not own.

Why: an overlay is how a team customizes a shared state graph. The platform that owns the base
relies on its rules staying in force in every customization, and nothing may disappear by
omission or by accident.

Example:

    extends: agent_run
    statechart: support_run
    rules:
      - id: cancelled-never-resumed           # overlay: the base's rule is not overridable
        never: {from: failed, to: completed}

Fix: give a new rule its own id (both then apply), list removals under `remove:` by name, or ask
the base's owners to mark the rule `overridable: true`.
"""

from statechart.diagnostics import Severity

ID = "overlay"
SEVERITY: Severity = "error"
PHASE = "yaml"
