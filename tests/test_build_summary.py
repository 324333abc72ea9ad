"""`build --check` says what changed in a stale output in the spec's terms (states,
transitions, fields added or removed) before its diff, and for a diagram only that."""

from __future__ import annotations

from pathlib import Path

import pytest

from statechart.cli import main
from statechart.output_summary import summary

ADD_LOST = ("""      deliver: delivered
  delivered:""", """      deliver: delivered
      lose: lost
  lost:
    description: The carrier lost it.
    final: true
  delivered:""")


def _check(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["build", "--check"])
    return code, capsys.readouterr().out


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> Path:
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0 and main(["build"]) == 0
    capsys.readouterr()
    return tmp_path


def _edit(project: Path, *pairs: tuple[str, str]) -> None:
    spec = project / "specs" / "order.yaml"
    text = spec.read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    spec.write_text(text)


def _block(out: str, rel: str) -> list[str]:
    """The lines `build --check` prints for `rel`, up to the next file."""
    lines = out.splitlines()
    start = lines.index(f"stale     {rel}")
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].split(" ")[0] in ("stale", "missing", "orphaned", "statechart")),
               len(lines))
    return lines[start + 1:end]


def test_each_stale_file_says_what_changed_before_its_diff(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(project, ADD_LOST, ("      pay: {target: paid, set: [paymentId]}", "      pay: paid"),
          ("    requires: [paymentId]\n", ""),
          ("""  paymentId:
    type: string           # string, integer, number, boolean, datetime, or enum: [...]
    description: The payment provider's id of the payment.
""", ""))
    code, out = _check(capsys)
    assert code == 1
    module = _block(out, "generated/order.py")
    assert module[:3] == ["  states: + lost", "  transitions: + shipped -lose-> lost",
                          "  fields: - paymentId"]
    assert module[3] == "--- a/generated/order.py"
    assert _block(out, "generated/order.schema.json")[:2] == ["  states: + lost",
                                                             "  fields: - paymentId"]
    assert _block(out, "docs/specs/order.md")[:2] == ["  states: + lost",
                                                      "  transitions: + shipped -lose-> lost"]
    # The diagram: the summary only, no diff of coordinates.
    assert _block(out, "docs/specs/order.svg") == ["  states: + lost",
                                                   "  transitions: + shipped -lose-> lost"]
    # The index page is no spec's page: its diff, as before.
    assert _block(out, "docs/specs/index.md")[0] == "--- a/docs/specs/index.md"


def test_a_change_of_text_only_says_so(project: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _edit(project, ("description: On its way to the customer.",
                    "description: On its way to the customer, by courier."))
    code, out = _check(capsys)
    assert code == 1
    assert _block(out, "generated/order.py")[0] == (
        "  same states, transitions and fields: only other text changed (descriptions, "
        "header, layout)")
    assert _block(out, "docs/specs/order.svg") == [
        "  same states and transitions: only other text changed (descriptions, header, "
        "layout)"]


def test_a_file_that_cannot_be_read_has_no_summary() -> None:
    assert summary("generated/x.py", b"def (", b"x = 1\n") is None
    assert summary("generated/x.schema.json", b"{", b"{}") is None
    assert summary("notes.txt", b"a", b"b") is None
