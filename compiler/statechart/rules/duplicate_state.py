"""Two states have the same name.

What: a state name is used twice anywhere in the tree, for example `idle` inside two different
compound states.

Why: state names are unique across the whole tree. Transitions, rules and the run record name
states without a path, and python-statemachine silently corrupts a machine with duplicate ids
(the initial configuration mixes states of both).

Example:

    upload: {initial: idle, states: {idle: {}}}
    download: {initial: idle, states: {idle: {}}}   # duplicate-state

While a spec has duplicate states, the graph rules (reachability, paths to a final state, the
spec's own rules) are not run: their findings would only echo the duplicate.

Fix: give each state its own name, for example `upload_idle` and `download_idle`.
"""

from statechart.diagnostics import Severity

ID = "duplicate-state"
SEVERITY: Severity = "error"
PHASE = "yaml"
