"""The agent run as a team would write it without the compiler: a plain python-statemachine
class with the states and transitions of specs/agent_run.yaml, and nothing else.

No run record, no history, no limits or required fields: this is the baseline that
bench/bench_runtime.py measures the generated module against (events/s, memory per run). It
imports nothing from this project, so it stays the same while the generated code changes;
bench_runtime.py checks at start-up that its graph still matches the generated machine's.
"""

from __future__ import annotations

from statemachine import State, StateMachine


class HandwrittenAgentRun(StateMachine):
    """One AI agent run, from creation to its end. Drive it with `sm.send("event")`."""

    # The same three flags as the generated class: the graph is known to be sound, and the
    # library's checks would only slow the import down.
    validate_disconnected_states = False
    validate_trap_states = False
    validate_final_reachability = False

    created = State(initial=True)
    triaging = State()

    class running(State.Compound):
        reasoning = State(initial=True)
        tool_call = State()

    class interrupted(State.Compound):
        suspended = State(initial=True)
        waiting_for_approval = State()
        waiting_for_input = State()

    resumed = State()
    retrying = State()
    completed = State(final=True)
    failed = State(final=True)
    cancelled = State(final=True)

    triage = created.to(triaging)
    start = triaging.to(running)
    reject = triaging.to(failed)
    interrupt = running.to(interrupted)
    error = running.to(retrying, cond="can_retry") | running.to(failed)
    complete = running.to(completed)
    fail = running.to(failed) | interrupted.to(failed)
    call_tool = running.reasoning.to(running.tool_call)
    tool_result = running.tool_call.to(running.reasoning)
    resume = interrupted.to(resumed)
    await_approval = interrupted.suspended.to(interrupted.waiting_for_approval)
    await_input = interrupted.suspended.to(interrupted.waiting_for_input)
    approve = interrupted.waiting_for_approval.to(resumed)
    deny = interrupted.waiting_for_approval.to(cancelled)
    provide_input = interrupted.waiting_for_input.to(resumed)
    proceed = resumed.to(running)
    retry = retrying.to(running)
    give_up = retrying.to(failed)
    cancel = (
        created.to(cancelled)
        | triaging.to(cancelled)
        | running.to(cancelled)
        | interrupted.to(cancelled)
        | resumed.to(cancelled)
        | retrying.to(cancelled)
    )

    def can_retry(self) -> bool:
        return True
