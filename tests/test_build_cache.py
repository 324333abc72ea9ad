"""`build` skips the generators of a spec whose outputs are what they would make
(statechart.build_cache), and never when any input of those outputs changed."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from statechart import build, build_cache, outputs
from statechart.cli import main
from statechart.codegen import python_module, record_schema
from statechart.config import load

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """A project with a base spec and an overlay of it, as the working directory; how many
    times each spec's outputs were generated (docs generators left out: they are slow)."""
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(outputs, "PER_SPEC", {
        k: v for k, v in outputs.PER_SPEC.items() if k in ("python", "record-schema")})
    monkeypatch.setattr(outputs, "ALL_SPECS", {})
    made: Counter[str] = Counter()
    for module in (python_module, record_schema):
        real = module.outputs

        def counted(spec: object, real: Callable[..., dict[str, bytes]] = real
                    ) -> dict[str, bytes]:
            made[Path(spec.path).name] += 1  # type: ignore[attr-defined]
            return real(spec)

        monkeypatch.setattr(module, "outputs", counted)
    return made


def build_all(capsys: pytest.CaptureFixture[str]) -> list[str]:
    config = load()
    assert main(["build"]) == 0, capsys.readouterr()
    capsys.readouterr()
    plan = build.plan(config.spec_paths(), config)
    return sorted(plan.files)


def outputs_now(root: Path, rels: list[str]) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in rels}


def test_a_build_where_nothing_changed_generates_nothing(
        calls: Counter[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build"]) == 0
    assert calls == {"agent_run.yaml": 2, "support_run.yaml": 2}
    assert (tmp_path / build_cache.MANIFEST).is_file()
    capsys.readouterr()
    calls.clear()
    assert main(["build"]) == 0
    out = capsys.readouterr().out
    assert not calls
    assert out.split()[::2] == ["unchanged"] * 4
    assert main(["build", "--check"]) == 0
    assert not calls


def _edit(path: str, old: str, new: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def change(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        file = root / path
        text = file.read_text()
        assert old in text
        file.write_text(text.replace(old, new, 1))
    return change


def _config(text: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def change(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (root / "statechart.toml").write_text(text)
    return change


def _env(name: str, value: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def change(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(name, value)
    return change


def _compiler_changed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Stands for an edited template or generator: the fingerprint reads the installed sources.
    monkeypatch.setattr(build_cache, "compiler_fingerprint", lambda: "another compiler")


def _output_edited(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = root / "generated" / "support_run.py"
    path.write_text(path.read_text() + "\n# by hand\n")


def _output_deleted(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "generated" / "support_run.schema.json").unlink()


def _manifest_damaged(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / build_cache.MANIFEST).write_text("{not json")


# (what changes, the change, the specs whose outputs must be generated again)
CHANGES = [
    ("the spec's text", _edit("specs/support_run.yaml", "description: The ticket",
                             "description: A ticket"),
     {"support_run.yaml"}),
    ("a base of an overlay", _edit("specs/agent_run.yaml", "description: The run exists",
                                   "description: A run exists"),
     {"agent_run.yaml", "support_run.yaml"}),
    ("an output folder", _config('[output]\ncode = "src/gen"\n'),
     {"agent_run.yaml", "support_run.yaml"}),
    ("a rule's severity", _config('[severity]\nunused-field = "ignore"\n'),
     {"agent_run.yaml", "support_run.yaml"}),
    ("the layout bound", _env("STATECHART_LAYOUT_MAX_TRANSITIONS", "3"),
     {"agent_run.yaml", "support_run.yaml"}),
    ("the compiler", _compiler_changed, {"agent_run.yaml", "support_run.yaml"}),
    ("an output edited by hand", _output_edited, {"support_run.yaml"}),
    ("an output deleted", _output_deleted, {"support_run.yaml"}),
    ("a damaged manifest", _manifest_damaged, {"agent_run.yaml", "support_run.yaml"}),
]


@pytest.mark.parametrize(("what", "change", "again"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_change_to_any_input_generates_its_outputs_again(
        calls: Counter[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], what: str,
        change: Callable[[Path, pytest.MonkeyPatch], None], again: set[str]) -> None:
    build_all(capsys)
    change(tmp_path, monkeypatch)
    calls.clear()
    rels = build_all(capsys)
    assert set(calls) >= again, what
    built = outputs_now(tmp_path, rels)
    # What a build without any manifest makes from the same inputs: the same bytes.
    (tmp_path / build_cache.MANIFEST).unlink()
    for rel in rels:
        (tmp_path / rel).unlink()
    build_all(capsys)
    assert outputs_now(tmp_path, rels) == built, what
    calls.clear()
    build_all(capsys)
    assert not calls, f"{what}: the build after it generated again"
