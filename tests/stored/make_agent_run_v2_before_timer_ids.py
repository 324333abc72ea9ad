"""Make `agent_run_v2_before_timer_ids.json`: records of agent_run version 2 as the module
generated before timers had ids wrote them (timer events named by their delay,
`after.24h.waiting_for_input`). Run by hand, from the root of a checkout of commit dda04f3
(with its own runtime on the path), not by pytest:

    PYTHONPATH=compiler:runtime python tests/stored/make_agent_run_v2_before_timer_ids.py \
        > tests/stored/agent_run_v2_before_timer_ids.json
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any

sys.path.insert(0, "generated")
import agent_run as m  # the version 2 module of that commit

T0 = dt.datetime(2026, 5, 4, 8, 0, tzinfo=dt.UTC)
now = [T0]
Run: Any = type("Run", (m.AgentRun,), {"can_retry": lambda self: True})


def later(delta: dt.timedelta) -> None:
    now[0] += delta


def main() -> None:
    out = {}
    # Retried after its backoff (`after.retryAt.retrying`), then waited a day for input and
    # timed out (`after.24h.waiting_for_input`): a finished run.
    run = Run(run_id="legacy-timed-out", clock=lambda: now[0], threadId="t-1")
    later(dt.timedelta(seconds=1))
    run.triage()
    later(dt.timedelta(seconds=1))
    run.start()
    later(dt.timedelta(minutes=1))
    run.error(retryReason="rate limited", retryChange=m.AgentRunRetryChange.nothing,
              retryAt=now[0] + dt.timedelta(minutes=5))
    later(dt.timedelta(minutes=6))
    assert run.fire_due() == ["after.retryAt.retrying"]
    later(dt.timedelta(minutes=1))
    run.interrupt(interruptReason=m.AgentRunInterruptReason.external_input)
    later(dt.timedelta(seconds=5))
    run.await_input()
    later(dt.timedelta(hours=25))
    assert run.fire_due() == ["after.24h.waiting_for_input"]
    out["timed_out"] = json.loads(run.record.to_json())
    # Waiting for input, its day not over: the 24h timer is armed in `timers`.
    run = Run(run_id="legacy-waiting", clock=lambda: now[0])
    for event in ("triage", "start"):
        later(dt.timedelta(seconds=1))
        getattr(run, event)()
    later(dt.timedelta(seconds=1))
    run.interrupt(interruptReason=m.AgentRunInterruptReason.external_input)
    later(dt.timedelta(seconds=1))
    run.await_input()
    out["waiting"] = json.loads(run.record.to_json())
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
