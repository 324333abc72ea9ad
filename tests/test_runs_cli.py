"""`statechart runs list|show|verify` on real SQLite run stores, whose runs are created through
a generated module and the store: output, exit codes, tampered records, a spec change that
strands or breaks stored runs, and usage errors."""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from codegen_support import checked_text, generate, import_source
from store_support import GATE

from statechart.cli import main
from statechart_runtime.errors import StoreUnavailable
from statechart_runtime.store import open_store

ROOT = Path(__file__).resolve().parents[1]

TICKET = """\
statechart: ticket
version: 1
initial: open
record:
  note: {type: string}
states:
  open:
    tags: [waiting]
    on:
      approve: {target: approved, set: [note]}
      deny: {target: denied, set: [note]}
  approved: {on: {reopen: {target: open, set: [note]}, close: closed}}
  denied: {on: {reopen: {target: open, set: [note]}, close: closed}}
  closed: {final: true}
"""
# The same version without `denied`: a run in it is stranded, a run that went through it
# has a history this graph cannot replay.
NO_DENIED = TICKET.replace("      deny: {target: denied, set: [note]}\n", "").replace(
    "  denied: {on: {reopen: {target: open, set: [note]}, close: closed}}\n", "")
# Version 2 renames `denied` to `rejected` (a migration), and `rejected` cannot be reopened:
# the run that was denied and reopened no longer replays once upgraded.
RENAMED = TICKET.replace("version: 1", "version: 2").replace(
    "deny: {target: denied", "deny: {target: rejected").replace(
    "  denied: {on: {reopen: {target: open, set: [note]}, close: closed}}",
    "  rejected: {on: {close: closed}}") + """\
migrations:
  - from_version: 1
    states: {denied: rejected}
    description: denied is now rejected.
"""
# (run id, events with their note)
RUNS: list[tuple[str, list[tuple[str, str | None]]]] = [
    ("run-new", []),
    ("run-approved", [("approve", "ok")]),
    ("run-denied", [("deny", "no")]),
    ("run-reopened", [("deny", "no"), ("reopen", "again")]),
    ("run-closed", [("approve", "yes"), ("close", None)]),
]


@pytest.fixture(scope="module")
def ticket(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = checked_text(TICKET)
    assert spec is not None
    folder = tmp_path_factory.mktemp("module")
    return import_source(generate(spec)["generated/ticket.py"], folder, "ticket")


@pytest.fixture
def store(ticket: ModuleType, tmp_path: Path) -> Path:
    path = tmp_path / "runs.db"
    with open_store(path) as s:
        for run_id, events in RUNS:
            run = ticket.Ticket(run_id=run_id)
            s.create(run)
            for event, note in events:
                s.fire(ticket.Ticket, run_id, event, **({"note": note} if note else {}))
    return path


def spec_file(tmp_path: Path, text: str, name: str = "ticket.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["runs", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_table_json_and_filters(capsys: pytest.CaptureFixture[str], store: Path,
                                     tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "list", "--store", str(store))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["RUN", "ID", "SPEC", "STATUS", "STATES", "REVISION", "STEPS",
                                "LAST", "TRANSITION", "NEXT", "DUE"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert sorted(rows) == sorted(r for r, _ in RUNS)
    assert rows["run-reopened"][1:7] == ["ticket", "v1", "open", "open", "3", "2"]

    code, out, _ = run_cli(capsys, "list", "--store", f"sqlite:///{store}", "--format", "json")
    data = {r["run_id"]: r for r in json.loads(out)}
    assert data["run-closed"]["status"] == "closed" and data["run-closed"]["revision"] == 3
    history = open_store(store).history("run-closed")
    assert data["run-closed"]["last_transition_at"] == \
        history[-1].at.isoformat().replace("+00:00", "Z")

    spec = spec_file(tmp_path, TICKET)

    def ids(*options: str) -> list[str]:
        code, out, err = run_cli(capsys, "list", "--store", str(store), "--format", "json",
                                 *options)
        assert (code, err) == (0, "")
        return [r["run_id"] for r in json.loads(out)]

    assert ids("--status", "open") == ["run-new", "run-reopened"]
    assert ids("--state", "denied") == ["run-denied"]
    assert ids("--spec", spec, "--tag", "waiting") == ["run-new", "run-reopened"]
    assert ids("--spec", spec, "--status", "approved") == ["run-approved"]
    code, out, _ = run_cli(capsys, "list", "--store", str(store), "--status", "nowhere")
    assert (code, out) == (0, "no stored runs match\n")


def test_list_usage_errors(capsys: pytest.CaptureFixture[str], store: Path,
                           tmp_path: Path) -> None:
    spec = spec_file(tmp_path, TICKET)
    for argv, words in [
        (["--tag", "waiting"], "--tag needs --spec"),
        (["--spec", spec, "--tag", "waitng"], "did you mean `waiting`?"),
        (["--spec", spec, "--state", "aproved"], "did you mean `approved`?"),
    ]:
        code, out, err = run_cli(capsys, "list", "--store", str(store), *argv)
        assert (code, out) == (2, "")
        assert words in err


def test_show_text_json_and_diagram(capsys: pytest.CaptureFixture[str], store: Path,
                                    tmp_path: Path) -> None:
    spec = spec_file(tmp_path, TICKET)
    code, out, err = run_cli(capsys, "show", "run-reopened", "--store", str(store),
                             "--spec", spec)
    assert (code, err) == (0, "")
    assert out.startswith("run run-reopened: ticket version 1, revision 3\n")
    assert "  status:          open\n" in out
    assert 'context:\n  note: "again"\n' in out
    assert "history (2 steps):" in out
    assert 'deny: open -> denied  {"note": "no"}' in out
    assert 'reopen: denied -> open  {"note": "again"}' in out

    code, out, _ = run_cli(capsys, "show", "run-denied", "--store", str(store), "--spec", spec,
                           "--format", "json", "--diagram", "-")
    data = json.loads(out)
    assert (code, data["status"], data["states"], data["context"]) == \
        (0, "denied", ["denied"], {"note": "no"})
    assert [h["event"] for h in data["history"]] == ["deny"]
    assert 'state "denied (current)"' in data["diagram"]

    picture = tmp_path / "run.dot"
    code, out, err = run_cli(capsys, "show", "run-approved", "--store", str(store), "--spec",
                             spec, "--diagram", str(picture))
    assert code == 0 and err == f"wrote {picture}\n"
    # The picture `render --highlight` draws for the run's state.
    assert main(["render", spec, "--format", "dot", "--highlight", "approved"]) == 0
    assert picture.read_text() == capsys.readouterr().out
    assert 'approved [label=approved color="#d6336c" penwidth=3' in picture.read_text()


def test_show_usage_errors(capsys: pytest.CaptureFixture[str], store: Path,
                           tmp_path: Path) -> None:
    spec = spec_file(tmp_path, TICKET)
    other = spec_file(tmp_path, TICKET.replace("statechart: ticket", "statechart: other"),
                      "other.yaml")
    for argv, words in [
        (["run-reopend", "--spec", spec], "no run `run-reopend` in the store; did you mean "
                                          "`run-reopened`?"),
        (["run-new", "--spec", other], "run `run-new` is a run of `ticket`, not of `other`"),
        (["run-new", "--spec", spec, "--diagram", "x.jpeg"], "the suffix picks the format"),
        (["run-new", "--spec", str(tmp_path / "missing.yaml")], "no such file or folder"),
    ]:
        code, out, err = run_cli(capsys, "show", *argv, "--store", str(store))
        assert (code, out) == (2, "")
        assert words in err


def test_verify_accepts_the_runs_the_spec_produced(capsys: pytest.CaptureFixture[str],
                                                  store: Path, tmp_path: Path) -> None:
    spec = spec_file(tmp_path, TICKET)
    code, out, err = run_cli(capsys, "verify", "--store", str(store), "--spec", spec)
    assert (code, err) == (0, "")
    assert out == f"5 runs of `ticket` verified against {spec}: no problems.\n"
    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec", spec,
                           "--format", "json")
    assert (code, out) == (0, "[]\n")


def tamper(store: Path, run_id: str, sql: str) -> None:
    db = sqlite3.connect(store)
    with db:
        db.execute(sql, (run_id,))
    db.close()


def test_verify_reports_a_tampered_record(capsys: pytest.CaptureFixture[str], store: Path,
                                          tmp_path: Path) -> None:
    spec = spec_file(tmp_path, TICKET)
    # The note the history set is replaced behind the store's back.
    tamper(store, "run-approved",
           "UPDATE runs SET record = json_set(record, '$.note', 'forged') WHERE run_id = ?")
    code, out, err = run_cli(capsys, "verify", "--store", str(store), "--spec", spec,
                             "--format", "json")
    assert (code, err) == (1, "")
    [finding] = json.loads(out)
    assert finding["rule"] == "run-unreplayable" and finding["run_id"] == "run-approved"
    assert (finding["file"], finding["line"], finding["column"]) == (str(store), 1, 1)
    assert "note: the history's last value is 'ok'" in finding["message"]

    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec", spec)
    assert code == 1
    assert out.startswith("error[run-unreplayable]: run `run-approved`: ")
    assert f"  --> {store}:1:1\n" in out and out.endswith("Found 1 error and 0 warnings.\n")

    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec", spec,
                           "--format", "sarif")
    log = json.loads(out)["runs"][0]
    [result] = log["results"]
    assert log["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "run-unreplayable"
    assert result["locations"][0]["logicalLocations"] == [{"name": "run-approved",
                                                           "kind": "object"}]
    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec", spec,
                           "--format", "github")
    assert out.startswith(f"::error title=run-unreplayable,file={store},line=1,col=1,")

    # show refuses the record too, and says why.
    code, out, err = run_cli(capsys, "show", "run-approved", "--store", str(store),
                             "--spec", spec)
    assert (code, out) == (1, "")
    assert "refuses the stored record: note:" in err


def test_verify_reports_an_edited_history_row(capsys: pytest.CaptureFixture[str],
                                              store: Path, tmp_path: Path) -> None:
    # The approval becomes a denial in the history table: the run says `approved`.
    tamper(store, "run-approved",
           "UPDATE history SET event = 'deny', target = 'denied' WHERE run_id = ?")
    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec",
                           spec_file(tmp_path, TICKET), "--format", "json")
    assert code == 1
    assert [(d["run_id"], d["rule"]) for d in json.loads(out)] == \
        [("run-approved", "run-unreplayable")]


def test_verify_reports_a_record_that_is_not_json(capsys: pytest.CaptureFixture[str],
                                                  store: Path, tmp_path: Path) -> None:
    tamper(store, "run-new", "UPDATE runs SET record = '{broken' WHERE run_id = ?")
    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec",
                           spec_file(tmp_path, TICKET), "--format", "concise")
    assert code == 1
    assert f"{store}:1:1: error[run-unreplayable]: run `run-new`: " in out
    assert "not JSON" in out


def test_verify_a_spec_change_strands_and_breaks_runs(capsys: pytest.CaptureFixture[str],
                                                      store: Path, tmp_path: Path) -> None:
    spec = spec_file(tmp_path, TICKET)
    new = spec_file(tmp_path, NO_DENIED, "new.yaml")
    code, out, err = run_cli(capsys, "verify", "--store", str(store), "--spec", spec,
                             "--spec-new", new, "--format", "json")
    assert (code, err) == (1, "")
    found = {(d["run_id"], d["rule"]) for d in json.loads(out)}
    assert found == {("run-denied", "run-stranded"), ("run-reopened", "run-unreplayable")}
    stranded = next(d for d in json.loads(out) if d["rule"] == "run-stranded")
    assert "is in `denied`, which the proposed spec" in stranded["message"]

    # A version 2 that renames `denied`: the denied run is migrated, not stranded; the run
    # that was reopened from `denied` cannot be, since `rejected` has no `reopen`.
    renamed = spec_file(tmp_path, RENAMED, "v2.yaml")
    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec", spec,
                           "--against", renamed, "--format", "json")
    assert code == 1
    assert [(d["run_id"], d["rule"]) for d in json.loads(out)] == \
        [("run-reopened", "run-migration-fails")]


def test_verify_with_the_new_spec_in_force(capsys: pytest.CaptureFixture[str], store: Path,
                                           tmp_path: Path) -> None:
    """After the change is merged, the stored version 1 runs are checked through the
    migration: those it strands or cannot upgrade are reported against the spec in force."""
    renamed = spec_file(tmp_path, RENAMED.replace("states: {denied: rejected}", "states: {}"))
    code, out, _ = run_cli(capsys, "verify", "--store", str(store), "--spec", renamed,
                           "--format", "json")
    assert code == 1
    assert {(d["run_id"], d["rule"]) for d in json.loads(out)} == \
        {("run-denied", "run-stranded"), ("run-reopened", "run-migration-fails")}


def test_verify_usage_and_spec_errors(capsys: pytest.CaptureFixture[str], store: Path,
                                      tmp_path: Path) -> None:
    spec = spec_file(tmp_path, TICKET)
    other = spec_file(tmp_path, TICKET.replace("statechart: ticket", "statechart: other"),
                      "other.yaml")
    code, out, err = run_cli(capsys, "verify", "--store", str(store), "--spec", spec,
                             "--spec-new", other)
    assert (code, out) == (2, "") and "is spec `other`" in err
    broken = spec_file(tmp_path, TICKET.replace("target: closed", "target: clsed")
                       .replace("close: closed", "close: clsed"), "broken.yaml")
    code, out, err = run_cli(capsys, "verify", "--store", str(store), "--spec", broken,
                             "--format", "concise")
    assert code == 1 and "error[unknown-state]" in out and err == ""
    code, out, err = run_cli(capsys, "list", "--store", str(store), "--spec", broken)
    assert (code, out) == (1, "") and "has errors; fix them first" in err
    code, out, err = run_cli(capsys, "verify", "--store", str(store), "--spec", other)
    assert (code, out) == (0, "no runs of `other` in the store: nothing to verify.\n")


@pytest.mark.parametrize("action", ["list", "verify"])
def test_a_store_that_is_not_there_or_not_a_store(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path, action: str) -> None:
    spec = spec_file(tmp_path, TICKET)
    missing = tmp_path / "missing.db"
    plain = tmp_path / "plain.db"
    db = sqlite3.connect(plain)
    db.execute("CREATE TABLE t (x)")
    db.close()
    before = plain.read_bytes()
    text = tmp_path / "notes.txt"
    text.write_text("not a database, only some text that is long enough " * 20)
    for url, words in [(str(missing), "no such store"),
                       (f"sqlite:///{missing}", "no such store"),
                       (str(plain), "is not a run store (it has no store tables)"),
                       (str(text), "is not a run store"),
                       ("mysql://host/db", "unsupported store URL"),
                       (str(tmp_path), "a folder, not a store")]:
        code, out, err = run_cli(capsys, action, "--store", url, "--spec", spec)
        assert (code, out) == (2, ""), url
        assert err.startswith(f"statechart runs {action}: ") and words in err, err
    assert not missing.exists()  # a read-only command creates no store
    assert plain.read_bytes() == before


@pytest.mark.parametrize("argv", [["runs", "--help"], ["runs", "verify", "--help"]])
def test_runs_help_imports_no_heavy_dependency(argv: list[str]) -> None:
    probe = ("import sys\nfrom statechart.cli import main\n"
             f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
             "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    modules = done.stderr.rsplit("MODULES ", 1)[1].split()
    assert "usage: statechart runs" in done.stdout
    heavy = [m for m in modules if m.split(".")[0] in ("yaml", "jinja2", "statemachine")]
    assert heavy == []
    assert "statechart_runtime.store" not in modules
    assert {m for m in modules if m.startswith("statechart.cli.")} <= {
        "statechart.cli.runs", "statechart.cli.runs_work", "statechart.cli.runs_serve",
        "statechart.cli.colour"}


def test_nested_states_of_the_agent_run(capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    """A run in a nested state (generated/agent_run.py): every active state is listed, in
    document order, and `--state` finds it by the nested one."""
    ar = import_source((ROOT / "generated" / "agent_run.py").read_bytes(), tmp_path,
                       "agent_run")
    path = tmp_path / "agent.db"
    with open_store(path) as s:
        s.create(ar.AgentRun(run_id="paused"))
        for event in ("triage", "start"):
            s.fire(ar.AgentRun, "paused", event)
        s.fire(ar.AgentRun, "paused", "interrupt",
               interruptReason=ar.AgentRunInterruptReason.approval)
        s.fire(ar.AgentRun, "paused", "await_approval", approvalId="a-1",
               approvalDeadline=dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
        s.create(ar.AgentRun(run_id="fresh"))
    spec = str(ROOT / "specs" / "agent_run.yaml")
    code, out, _ = run_cli(capsys, "list", "--store", str(path), "--spec", spec,
                           "--state", "waiting_for_approval", "--format", "json")
    [row] = json.loads(out)
    assert (code, row["run_id"], row["status"], row["states"]) == \
        (0, "paused", "waiting", ["interrupted", "waiting_for_approval"])
    code, out, _ = run_cli(capsys, "show", "paused", "--store", str(path), "--spec", spec,
                           "--format", "json", "--diagram", "-")
    data = json.loads(out)
    assert data["states"] == ["interrupted", "waiting_for_approval"]
    assert data["context"]["interruptReason"] == "approval"
    assert data["context"]["humanInput"] is None
    assert "(current)" in data["diagram"]
    code, out, _ = run_cli(capsys, "verify", "--store", str(path), "--spec", spec)
    assert (code, out) == (0, f"2 runs of `agent_run` verified against {spec}: no problems.\n")


def test_findings_point_at_the_store_without_its_password() -> None:
    from statechart.cli.runs import location

    assert location("runs.db") == "runs.db"
    assert location("sqlite:////srv/runs.db") == "/srv/runs.db"
    assert location("postgresql://bob:secret@db:5432/runs") == "postgresql://bob:***@db:5432/runs"


def test_the_docs_list_example_is_the_real_output(capsys: pytest.CaptureFixture[str],
                                                  store: Path, tmp_path: Path) -> None:
    """docs/runs.md shows `runs list --tag waiting` on these runs: the same columns, widths
    and rows as the command prints (times aside)."""
    docs = (ROOT / "docs" / "runs.md").read_text()
    command = "$ statechart runs list --store runs.db --spec ticket.yaml --tag waiting\n"
    example = docs.split(command, 1)[1].split("\n\n", 1)[0].splitlines()
    code, out, err = run_cli(capsys, "list", "--store", str(store), "--spec",
                             spec_file(tmp_path, TICKET), "--tag", "waiting")
    assert (code, err) == (0, "")
    time = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
    assert [time.sub("TIME", line) for line in out.splitlines()] == \
        [time.sub("TIME", line) for line in example]


@pytest.mark.parametrize("action", ["list", "work"])
def test_a_server_that_cannot_be_reached_is_exit_1_not_a_usage_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, action: str) -> None:
    """Nothing listens on port 1: the URL is right, the server is away. Exit 1 (repeat it
    later), one line that says so; a malformed URL stays a usage error (exit 2)."""
    url = "postgresql://nobody@127.0.0.1:1/x"
    spec = ["--spec", spec_file(tmp_path, GATE, "gate.yaml"), "--once"] if action == "work" \
        else []
    code, out, err = run_cli(capsys, action, "--store", url, *spec)
    assert (code, out) == (1, "") and err.count("\n") == 1, err
    assert err.startswith(f"statechart runs {action}: {url}: cannot reach the database")
    assert err.rstrip().endswith("is the server running? the command can be repeated"), err
    with pytest.raises(StoreUnavailable, match="is the server running"):
        open_store(url)
    code, out, err = run_cli(capsys, "list", "--store", "mysql://localhost/x")
    assert (code, out) == (2, "") and "unsupported store URL" in err


def test_show_shortens_a_json_value_in_text_and_keeps_it_whole_in_json(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The agent run's `toolOutput` (a `json` field): the text output cuts a long value to
    its first 80 characters and its size, in the context and the history; JSON has it all."""
    ar = import_source((ROOT / "generated" / "agent_run.py").read_bytes(), tmp_path,
                       "agent_run")
    output = {"rows": [{"id": n, "name": f"customer {n}"} for n in range(200)]}
    path = tmp_path / "agent.db"
    with open_store(path) as s:
        s.create(ar.AgentRun(run_id="tool"))
        for event in ("triage", "start"):
            s.fire(ar.AgentRun, "tool", event)
        s.fire(ar.AgentRun, "tool", "call_tool", toolCallId="c-1")
        s.fire(ar.AgentRun, "tool", "tool_output", toolOutput=output)
    spec = str(ROOT / "specs" / "agent_run.yaml")
    size = len(json.dumps(output, separators=(",", ":")))
    code, out, _ = run_cli(capsys, "show", "tool", "--store", str(path), "--spec", spec)
    short = json.dumps(output)[:80] + f"... ({size:,} bytes)"
    assert code == 0
    assert f"  toolOutput: {short}\n" in out
    assert f"tool_output: tool_call -> reasoning  {{\"toolOutput\": {short}}}\n" in out
    code, out, _ = run_cli(capsys, "show", "tool", "--store", str(path), "--spec", spec,
                           "--format", "json")
    data = json.loads(out)
    assert data["context"]["toolOutput"] == output
    assert data["history"][-1]["values"] == {"toolOutput": output}


def test_show_lists_the_work_items_and_each_attempt(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    """Every attempt of a work item is in `runs show`: who held it, when, how it ended."""
    ar = import_source((ROOT / "generated" / "agent_run.py").read_bytes(), tmp_path,
                       "agent_run")
    path = tmp_path / "agent.db"
    with open_store(path) as s:
        s.create(ar.AgentRun(run_id="w"))
        for event in ("triage", "start"):
            s.fire(ar.AgentRun, "w", event)
        claim = s.claim_work(ar.AgentRun, owner="worker-1")
        s.complete_work(ar.AgentRun, claim, "call_tool", toolCallId="c-1")
        claim = s.claim_work(ar.AgentRun, owner="worker-2")
        failure = s.fail_work(ar.AgentRun, claim, "the search API answered 503")
    spec = str(ROOT / "specs" / "agent_run.yaml")
    code, out, _ = run_cli(capsys, "show", "w", "--store", str(path), "--spec", spec)
    assert code == 0
    work = out[out.index("work items (2):"):]
    lines = work.splitlines()
    assert lines[1].startswith("  w/reasoning/1  reason in reasoning: ended by call_tool at ")
    assert lines[2].startswith("    attempt 1  ") and lines[2].endswith(" by worker-1: applied")
    assert lines[3] == (f"  w/tool_call/2  call_tool in tool_call: pending from "
                        f"{failure.retry_at.isoformat().replace('+00:00', 'Z')}, 1 failed")
    assert lines[4].endswith(" by worker-2: failed (the search API answered 503)")
    code, out, _ = run_cli(capsys, "show", "w", "--store", str(path), "--spec", spec,
                           "--format", "json")
    [first, second] = json.loads(out)["work"]
    assert (first["status"], first["ended_by"], second["status"], second["failures"]) == (
        "ended", "call_tool", "pending", 1)
    assert [(a["attempt"], a["owner"], a["result"], a["error"]) for a in second["history"]] == [
        (1, "worker-2", "failed", "the search API answered 503")]
