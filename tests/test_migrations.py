"""Records stored under version 1 load into the class built from version 2 of the spec."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest

V1 = """\
statechart: ticket
version: 1
initial: open
record:
  why: {type: string}
  note: {type: string}
states:
  open:
    on:
      hold: {target: waiting, set: [why, note]}
      close: closed
  waiting:
    limit: 2
    requires: [why]
    on:
      wake: open
      close: closed
  closed: {final: true}
"""

V2 = """\
statechart: ticket
version: 2
initial: open
record:
  reason: {type: string}
states:
  open:
    on:
      hold: {target: paused, set: [reason]}
      close: closed
  paused:
    limit: 2
    requires: [reason]
    on:
      wake: open
      close: closed
  closed: {final: true}
migrations:
  - from_version: 1
    states: {waiting: paused}
    fields: {why: reason, note: null}
    description: Version 1 called the paused state `waiting` and its reason `why`.
"""


def ticket_versions(folder: Path, tag: str) -> tuple[ModuleType, ModuleType]:
    """The generated modules of V1 and V2, written into `folder` (module names end `tag`)."""
    from codegen_support import checked_text, generate
    from store_support import import_path

    modules = []
    for version, text in (("v1", V1), ("v2", V2)):
        spec = checked_text(text)
        assert spec is not None
        path = folder / f"ticket_{version}_{tag}.py"
        path.write_bytes(generate(spec)["generated/ticket.py"])
        modules.append(import_path(path, f"ticket_{version}_{tag}"))
    return modules[0], modules[1]


def build(root: Path, text: str) -> None:
    (root / "specs").mkdir(exist_ok=True)
    (root / "specs" / "ticket.yaml").write_text(text)
    done = subprocess.run([sys.executable, "-m", "statechart", "build"], cwd=root,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def run_python(root: Path, code: str) -> str:
    """Each version of the module in its own interpreter, as a service after a deploy."""
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def stored_v1(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    build(tmp_path, V1)
    out = run_python(tmp_path, """
import json
from generated.ticket import Ticket
waiting = Ticket(run_id="r-waiting")
waiting.hold(why="customer away", note="call back")
waiting.wake()
waiting.hold(why="still away", note="")
closed = Ticket(run_id="r-closed")
closed.close()
print(json.dumps({"waiting": waiting.record.to_json(), "closed": closed.record.to_json()}))
""")
    return tmp_path, json.loads(out)


def test_old_records_load_through_the_migration(stored_v1: tuple[Path, dict[str, str]]) -> None:
    root, records = stored_v1
    assert json.loads(records["waiting"])["status"] == "waiting"
    build(root, V2)
    (root / "waiting.json").write_text(records["waiting"])
    (root / "closed.json").write_text(records["closed"])
    out = run_python(root, """
import json
from pathlib import Path
from generated.ticket import Ticket, TicketRecord
record = TicketRecord.from_json(Path("waiting.json").read_text())
print(json.dumps(record.to_dict()))
run = Ticket.restore(record)
run.wake()                       # the run continues under version 2
run.close()
print(run.status.value)
print(TicketRecord.from_json(Path("closed.json").read_text()).status.value)
""").splitlines()
    upgraded = json.loads(out[0])
    assert upgraded["specVersion"] == 2
    assert upgraded["status"] == "paused"
    assert upgraded["reason"] == "still away"
    assert "why" not in upgraded and "note" not in upgraded  # renamed, and dropped on purpose
    assert upgraded["counts"] == {"paused": 2}
    assert [(s["source"], s["target"]) for s in upgraded["history"]] == [
        ("open", "paused"), ("paused", "open"), ("open", "paused")]
    assert upgraded["history"][0]["values"] == {"reason": "customer away"}
    assert out[1:] == ["closed", "closed"]
    schema = json.loads((root / "generated" / "ticket.schema.json").read_text())
    jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).validate(upgraded)


def test_an_old_record_without_a_migration_is_refused_by_name(
        stored_v1: tuple[Path, dict[str, str]]) -> None:
    root, records = stored_v1
    build(root, V2.split("migrations:")[0])  # version 2 forgot its migration
    (root / "waiting.json").write_text(records["waiting"])
    out = run_python(root, """
from pathlib import Path
from generated.ticket import TicketInvalidRecord, TicketRecord
try:
    TicketRecord.from_json(Path("waiting.json").read_text())
except TicketInvalidRecord as exc:
    print(exc.field, "|", exc)
""")
    # the first thing version 2 does not know about the old record: its field `why`
    assert out.strip() == "why | why: unknown key"


JOB_V1 = """\
statechart: job
version: 1
initial: open
states:
  open:
    on:
      hold: waiting
      start: work
      close: closed
  waiting:
    on:
      wake: open
  work:
    on:
      done: closed
  closed: {final: true}
"""

# Version 2 adds limits (one on the initial state), moves `waiting` into a compound state and
# gives `work` children.
JOB_V2 = """\
statechart: job
version: 2
initial: open
states:
  open:
    limit: 5
    on:
      hold: waiting_for_input
      start: work
      close: closed
  paused:
    initial: waiting_for_input
    states:
      waiting_for_input:
        on:
          wake: open
  work:
    limit: 3
    initial: prep
    states:
      prep:
        on: {ready: doing}
      doing: {}
    on:
      done: closed
  closed: {final: true}
migrations:
  - from_version: 1
    states: {waiting: waiting_for_input}
    description: Version 1 had a single top-level waiting state.
"""


def build_job(root: Path, text: str) -> None:
    (root / "specs").mkdir(exist_ok=True)
    (root / "specs" / "job.yaml").write_text(text)
    done = subprocess.run([sys.executable, "-m", "statechart", "build"], cwd=root,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_new_limits_and_new_nesting_are_recounted_from_the_history(tmp_path: Path) -> None:
    """Counts of states that gained a limit, and status and configuration of states moved
    into (or given) compound states, come from replaying the renamed history."""
    build_job(tmp_path, JOB_V1)
    stored = json.loads(run_python(tmp_path, """
import json
from generated.job import Job
fresh = Job(run_id="fresh")
waiting = Job(run_id="waiting")
waiting.hold()
working = Job(run_id="working")
working.hold()
working.wake()
working.start()
print(json.dumps({r.record.runId: r.record.to_dict() for r in (fresh, waiting, working)}))
"""))
    (tmp_path / "stored.json").write_text(json.dumps(stored))
    build_job(tmp_path, JOB_V2)
    out = json.loads(run_python(tmp_path, """
import json
from pathlib import Path
from generated.job import Job, JobRecord
stored = json.loads(Path("stored.json").read_text())
out = {}
for name, data in stored.items():
    record = JobRecord.from_dict(data)
    out[name] = record.to_dict()
    Job.restore(record)
print(json.dumps(out))
"""))
    assert (out["fresh"]["status"], out["fresh"]["configuration"]) == ("open", ["open"])
    assert out["fresh"]["counts"] == {"open": 1, "work": 0}
    waiting = out["waiting"]
    assert (waiting["status"], waiting["configuration"]) == (
        "paused", ["paused", "waiting_for_input"])
    assert waiting["counts"] == {"open": 1, "work": 0}
    working = out["working"]
    assert (working["status"], working["configuration"]) == ("work", ["work", "prep"])
    assert working["counts"] == {"open": 2, "work": 1}
    schema = json.loads((tmp_path / "generated" / "job.schema.json").read_text())
    checker = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for record in out.values():
        checker.validate(record)


def test_an_old_record_with_no_history_takes_the_top_level_ancestor_as_status(
        tmp_path: Path) -> None:
    build_job(tmp_path, JOB_V2)
    old = {"runId": "r", "specVersion": 1, "status": "open", "lastTransitionAt":
           "2024-01-01T10:00:00+00:00", "history": [], "counts": {}}
    forged = {**old, "status": "waiting"}  # an empty history cannot end in `waiting`
    (tmp_path / "old.json").write_text(json.dumps([old, forged]))
    out = run_python(tmp_path, """
import json
from pathlib import Path
from generated.job import JobInvalidRecord, JobRecord
old, forged = json.loads(Path("old.json").read_text())
print(json.dumps(JobRecord.from_dict(old).to_dict()))
try:
    JobRecord.from_dict(forged)
except JobInvalidRecord as exc:
    print(exc)
""").splitlines()
    upgraded = json.loads(out[0])
    assert upgraded["configuration"] == ["open"] and upgraded["counts"] == {"open": 1, "work": 0}
    assert out[1] == ("configuration: the history ends in ['open'], not "
                      "['paused', 'waiting_for_input']")


def test_a_tampered_old_record_is_refused_after_the_upgrade(
        stored_v1: tuple[Path, dict[str, str]]) -> None:
    """The upgrade rebuilds status and counts from the renamed history; it first checks that
    the old record's own values agree with that history, as the old module did."""
    root, records = stored_v1
    build(root, V2)
    for key, value, field in (("status", "closed", "status"),
                              ("counts", {"waiting": 0}, "counts")):
        data = {**json.loads(records["waiting"]), key: value}
        (root / f"tampered_{key}.json").write_text(json.dumps(data))
        out = run_python(root, f"""
from pathlib import Path
from generated.ticket import TicketInvalidRecord, TicketRecord
try:
    TicketRecord.from_json(Path("tampered_{key}.json").read_text())
except TicketInvalidRecord as exc:
    print(exc.field)
""")
        assert out.strip() == field


V2_NESTED = """\
statechart: ticket
version: 2
initial: open
record:
  why: {type: string}
  note: {type: string}
states:
  open:
    on:
      hold: {target: waiting, set: [why, note]}
      close: closed
  paused:
    initial: waiting
    on:
      wake: open
      close: closed
    states:
      waiting:
        limit: 2
        requires: [why]
  closed: {final: true}
migrations:
  - from_version: 1
    description: Waiting moved into paused, which now handles wake and close.
"""


def test_a_history_whose_transitions_moved_to_a_parent_upgrades(
        stored_v1: tuple[Path, dict[str, str]]) -> None:
    root, records = stored_v1
    build(root, V2_NESTED)
    (root / "waiting.json").write_text(records["waiting"])
    out = run_python(root, """
import json
from pathlib import Path
from generated.ticket import Ticket, TicketRecord
record = TicketRecord.from_json(Path("waiting.json").read_text())
print(json.dumps(record.to_dict()))
run = Ticket.restore(record)
run.wake()
print(run.status.value)
""").splitlines()
    upgraded = json.loads(out[0])
    assert upgraded["configuration"] == ["paused", "waiting"]
    assert [(s["source"], s["event"]) for s in upgraded["history"]] == [
        ("open", "hold"), ("paused", "wake"), ("open", "hold")]
    assert out[1] == "open"
