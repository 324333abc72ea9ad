"""The file is not a YAML document this tool can read.

What: the file cannot be decoded or parsed: invalid YAML, tabs used for indentation, bytes that
are not UTF-8, control characters, several documents in one file, anchors and aliases, explicit
tags (`!!binary`, `!custom`), nesting deeper than 64 levels, or a file over 16 MiB. Also a path
that is not a regular file (a FIFO, a device), or a symlink to a file outside the specs folder
(docs/spec-format.md, "Files and symlinks"): neither is read at all.

Why: a spec must mean the same thing to every reader. Aliases can expand without bound (an
"alias bomb" of 500 bytes expands to a billion nodes), tags change how values are read, and
the limits keep a hostile or accidental input from hanging CI. A FIFO would block the reader
forever, and a symlink to `/proc/self/environ` would print CI's secrets in the finding.

Example:

    states:
    <TAB>created: {}       # a tab (shown as <TAB>) before `created`

Fix: indent with spaces, save as UTF-8, write repeated values out instead of using `&anchor`
and `*alias`.
"""

from statechart.diagnostics import Severity

ID = "yaml-syntax"
SEVERITY: Severity = "error"
PHASE = "yaml"
