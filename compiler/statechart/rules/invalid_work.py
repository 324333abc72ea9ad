"""A state's `work:` cannot be run as written.

What: `work:` on a final state; a `handler` that is not an identifier (a letter, then
letters, digits or `_`, at most 64 characters); a `timeout`, `heartbeat` or `retry.backoff`
that is not a duration (`30s`, `5m`, `2h`, `1d`, `500ms`, ISO 8601 `PT5M`); or a `heartbeat`
that is not shorter than the `timeout`.

Why: a final state is never left, so its item would never end, and nothing could take its
outcome. A worker finds a handler by its name in a registry (`--handlers module:object`),
and the name is a key of the generated tables: an identifier keeps it one word everywhere.
The timeout is how long an attempt's lease lasts; a heartbeat renews it, so one that comes
no sooner than the timeout never keeps an attempt alive (the lease is lost first).

Example:

    states:
      tool_call:
        work: {handler: call-tool, timeout: 5m, heartbeat: 5m, outcomes: [tool_result]}
        # invalid-work: `call-tool` is not an identifier; heartbeat 5m is not shorter than 5m

Fix: move the work to the state that does it (not a final one), name the handler with an
identifier, write durations as `30s` or `PT30S`, and make the heartbeat a fraction of the
timeout (a third or less, so that one missed heartbeat does not lose the lease).
"""

import re

from statechart import durations
from statechart.diagnostics import Severity
from statechart.rules._base import Check, Graph, Spec, problem

ID = "invalid-work"
SEVERITY: Severity = "error"
PHASE = "model"

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_DURATION_HINT = "write a duration such as `30s`, `5m`, `2h`, `1d`, `500ms` or ISO 8601 `PT5M`"


def check(spec: Spec, graph: Graph) -> Check:
    for work in spec.work():
        where = f"the work of `{work.state}`"
        if spec.states[work.state].is_final:
            yield problem(ID, SEVERITY, work.span,
                          f"final state `{work.state}` has work (`{work.handler}`)",
                          "a final state is never left, so its item would never end: move "
                          "`work:` to the state that does the work")
        if not _IDENTIFIER.match(work.handler):
            yield problem(ID, SEVERITY, work.handler_span,
                          f"handler `{work.handler}` of {where} is not an identifier",
                          "a handler name is a letter, then letters, digits or `_` (at most "
                          "64 characters): `call_tool`")
        for key, text, ms, span in (
                ("timeout", work.timeout, work.timeout_ms, work.timeout_span),
                ("heartbeat", work.heartbeat, work.heartbeat_ms, work.heartbeat_span),
                ("retry.backoff", work.backoff, work.backoff_ms, work.backoff_span)):
            if text is not None and ms is None and span is not None:
                why = durations.parse(text)
                yield problem(ID, SEVERITY, span,
                              f"`{key}` of {where} is `{text}`: {why}", _DURATION_HINT)
        if work.heartbeat_ms is not None and work.timeout_ms is not None \
                and work.heartbeat_span is not None and work.heartbeat_ms >= work.timeout_ms:
            yield problem(ID, SEVERITY, work.heartbeat_span,
                          f"the heartbeat of {where} ({work.heartbeat}) is not shorter than "
                          f"its timeout ({work.timeout})",
                          "a heartbeat renews the lease before the timeout ends it: make it a "
                          "third of the timeout or less")
