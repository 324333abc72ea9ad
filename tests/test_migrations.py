"""Records stored under version 1 load into the class built from version 2 of the spec."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
