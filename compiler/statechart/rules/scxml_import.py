"""`statechart import` met an SCXML construct that a spec cannot say, or a file it cannot read.

What: the SCXML document has something with no equivalent in the spec format: a data model
(`<datamodel>`, `<data>`), `<script>`, `<invoke>`, `<donedata>`, `<raise>`, a `<send>` other
than a timer of its own state (`<send event=E delay=D>` in the state's `<onentry>`, E handled by
that state's transitions), a `<cancel>` other than such a timer's, a delay written as an
expression or in a unit SCXML does not have (`2h`), two timers of a state with the same delay, a
transition into a history and other states at once, a history whose default enters several
states other than its parent's default entry, an initial state deeper than a child that a
state on the way enters otherwise by default, an initial `<history>` of a state also entered as
its parent's default entry, or content on an `<initial>` or history transition. Or the file is
not a well-formed XML document whose root is `<scxml>`: it has a DTD, declares entities or
refers to external ones (all refused, before anything is expanded or read). Nothing is
written; every such element is reported with its line (docs/scxml.md has the table of what
maps to what). An XState config (`statechart import machine.json`) is refused the same way,
at its first line, each thing named by its path in the config.

Why: an import that dropped what it cannot say would give a spec that runs differently from
the chart it came from, with nothing to tell. Entity declarations can expand a small file
into gigabytes ("billion laughs"), and external entities read other files into the chart.

Example:

    <state id="working">
      <invoke type="http" src="https://example.com/job"/>   <!-- line 12 -->
    </state>

Fix: change the SCXML as the help says (start the service from an entry action and send its
result as an event; declare data as record fields), then import again.
"""

from statechart.diagnostics import Severity

ID = "scxml-import"
SEVERITY: Severity = "error"
PHASE = "yaml"
