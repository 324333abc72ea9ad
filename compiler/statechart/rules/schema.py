"""A key is unknown or misplaced, or a value has the wrong type.

What: the spec does not follow the spec format (docs/spec-format.md): an unknown key (often a
typo: the message suggests the closest known key), a key in the wrong place (`target` on a
state), a missing required key (`statechart`, `version`, `initial`, `states`), or a value of the
wrong type (`final: yes please`).

Why: a typo such as `intial:` would otherwise be ignored and the spec would mean something else
than it says.

Schema errors are reported first in a file. A finding that only exists because of one (a
state left unreachable by a transition whose `traget:` was dropped, a trap state whose
`final: yes` was not read) is not reported on its own: the schema error's help names it, since
fixing the error clears it.

Example:

    running:
      intial: reasoning    # schema: unknown key `intial` in state `running`
                           # help: did you mean `initial`?

Fix: correct the key or the value; `statechart schema` prints the JSON Schema, and editors that
read `# yaml-language-server: $schema=...` complete keys as you type.
"""

from statechart.diagnostics import Severity

ID = "schema"
SEVERITY: Severity = "error"
PHASE = "yaml"
