"""A state's work (`work:`): its handler, timeout, heartbeat, outcome and error events and
retries (docs/spec-format.md, "Work"). Durations are read as written; what is wrong with a
readable value (a handler name that is not an identifier, a text that is not a duration, a
heartbeat not shorter than the timeout, work on a final state) is the rule `invalid-work`'s,
so the model keeps it."""

from __future__ import annotations

from dataclasses import replace

import yaml

from statechart import durations
from statechart import spec_format as fmt
from statechart.build_model.reader import Reader
from statechart.model import Work


def duration_ms(text: str) -> int | None:
    """A duration's milliseconds, or None when `text` is not one (statechart.durations)."""
    parsed = durations.parse(text)
    return parsed if isinstance(parsed, int) else None


class WorkBuilder(Reader):
    """`work: {handler, timeout, heartbeat, outcomes, error, retry: {max, backoff}}`."""

    def work(self, state: str, key: yaml.Node, node: yaml.Node) -> Work | None:
        where = f"`work` of state `{state}`"
        got = {k: (kn, v) for k, kn, v in self.mapping(node, where, fmt.WORK_KEYS) or ()}
        if not isinstance(node, yaml.MappingNode):
            return None
        for needed in ("handler", "timeout", "outcomes"):
            if needed not in got:
                self.schema(key, f"{where} needs `{needed}`", fmt.WORK_KEYS[needed])
        if any(k not in got for k in ("handler", "timeout", "outcomes")):
            return None
        handler = self._scalar(got["handler"][1], f"`handler` of {where}")
        timeout = self._scalar(got["timeout"][1], f"`timeout` of {where}")
        outcomes = self.names(got["outcomes"][1], f"`outcomes` of {where}")
        if handler is None or timeout is None:
            return None
        if not outcomes:
            self.schema(got["outcomes"][1], f"{where} lists no outcomes",
                        "name the events a handler may return: `outcomes: [done]`")
            return None
        work = Work(state=state, handler=handler, timeout=timeout,
                    timeout_ms=duration_ms(timeout),
                    outcomes=tuple(n for n, _ in outcomes), span=self.span(key),
                    handler_span=self.span(got["handler"][1]),
                    timeout_span=self.span(got["timeout"][1]),
                    outcome_spans=tuple(self.span(n) for _, n in outcomes))
        extra: dict[str, object] = {}
        if "heartbeat" in got:
            heartbeat = self._scalar(got["heartbeat"][1], f"`heartbeat` of {where}")
            if heartbeat is not None:
                extra.update(heartbeat=heartbeat, heartbeat_ms=duration_ms(heartbeat),
                             heartbeat_span=self.span(got["heartbeat"][1]))
        if "error" in got:
            error = self.string(got["error"][1], f"`error` of {where}")
            if error is not None:
                extra.update(error=error, error_span=self.span(got["error"][1]))
        if "retry" in got:
            extra.update(self._retry(got["retry"][1], where))
        return replace(work, **extra)  # type: ignore[arg-type]

    def _retry(self, node: yaml.Node, where: str) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, _, value in self.mapping(node, f"`retry` of {where}", fmt.RETRY_KEYS) or ():
            if key == "max":
                retries = self.integer(value, f"`retry.max` of {where}", 0)
                if retries is not None:
                    out["retries"] = retries
            else:
                backoff = self._scalar(value, f"`retry.backoff` of {where}")
                if backoff is not None:
                    out.update(backoff=backoff, backoff_ms=duration_ms(backoff),
                               backoff_span=self.span(value))
        return out

    def _scalar(self, node: yaml.Node, where: str) -> str | None:
        """A value kept as written (`5m`, `call_tool`; `30` is text too), for the rule
        `invalid-work` to judge."""
        if isinstance(node, yaml.ScalarNode) and node.value != "":
            return str(node.value)
        return self.string(node, where)
