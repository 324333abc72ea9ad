"""Project configuration (`statechart.config`, docs/configuration.md): where it is found, what
each key changes in `check`, `build` and `render`, and the message for each kind of mistake."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from statechart import config as config_module
from statechart.cli import main
from statechart.config import Config, ConfigError, find, load
from statechart.render import bounds

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"
OK = CASES / "ok" / "agent_like.yaml"
UNUSED = CASES / "unused-field" / "never_set.yaml"
TRAP = CASES / "trap-state" / "waiting.yaml"
NO_DIAGRAMS = 'build = ["code", "schema", "docs"]\n'  # SVG layout is slow; pages are not


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _project(root: Path, *specs: Path, pyproject: str | None = None,
             toml: str | None = None) -> Path:
    (root / "specs").mkdir(parents=True)
    for spec in specs:
        shutil.copy(spec, root / "specs" / spec.name)
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    if toml is not None:
        (root / "statechart.toml").write_text(toml, encoding="utf-8")
    return root


# -- where it is found ------------------------------------------------------------------------

def test_found_walking_up_and_a_pyproject_without_our_table_is_passed_over(
        tmp_path: Path) -> None:
    root = _project(tmp_path / "app", pyproject="[tool.statechart]\nspecs = ['specs']\n")
    inner = root / "sub"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("[tool.ruff]\nline-length = 80\n", encoding="utf-8")
    assert find(inner) == root / "pyproject.toml"
    assert load(cwd=inner).root == root
    assert find(tmp_path) is None
    assert load(cwd=tmp_path) == Config(tmp_path.resolve())


def test_statechart_toml_wins_over_pyproject_in_one_folder(tmp_path: Path) -> None:
    _project(tmp_path, pyproject="[tool.statechart]\nspecs = ['a']\n", toml="specs = ['b']\n")
    assert load(cwd=tmp_path).specs == ("b",)
    assert load(str(tmp_path / "pyproject.toml"), cwd=tmp_path).specs == ("a",)


def test_check_from_a_subfolder_reads_the_roots_specs_and_severity(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, UNUSED, toml='[severity]\nunused-field = "error"\n')
    (root / "docs").mkdir()
    monkeypatch.chdir(root / "docs")
    code, out, err = _run(capsys, "check")
    assert (code, err) == (1, "")
    # the path as seen from where the command runs
    assert "error[unused-field]" in out and "--> ../specs/never_set.yaml:5:3" in out


def test_the_repository_configuration_keeps_the_defaults() -> None:
    config = load(cwd=ROOT)
    assert config.file == ROOT / "pyproject.toml"
    # the defaults, plus the editor schema `build` keeps current
    assert config == Config(ROOT, config.file, editor_schema="docs/spec.schema.json")


# -- severity and per-file ignores -----------------------------------------------------------

@pytest.mark.parametrize(("setting", "code", "shown"), [
    ("ignore", 0, ""), ("warning", 0, "warning[unused-field]"), ("error", 1, "error[unused-field]")])
def test_severity_of_a_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str], setting: str, code: int,
                            shown: str) -> None:
    _project(tmp_path, UNUSED, toml=f'[severity]\nunused-field = "{setting}"\n')
    monkeypatch.chdir(tmp_path)
    got, out, _ = _run(capsys, "check", "--format", "concise")
    assert got == code
    summary = f"Found {int(setting == 'error')} error{'s' * (setting != 'error')} and " \
              f"{int(setting == 'warning')} warning{'s' * (setting != 'warning')}.\n"
    assert out == (f"specs/never_set.yaml:5:3: {shown}: record field `failureType` is never set "
                   f"by an event or required by a state\n{summary}" if shown else "")


def test_an_error_lowered_to_a_warning_lets_build_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path, TRAP, toml='build = ["code"]\n[severity]\ntrap-state = "warning"\n')
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, "check")[0] == 0
    assert _run(capsys, "check", "--strict")[0] == 1
    code, out, _ = _run(capsys, "build")
    assert code == 0 and out == "created   generated/__init__.py\ncreated   generated/demo.py\n"


def test_per_file_ignores_match_the_root_relative_path_or_the_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path, UNUSED, TRAP)
    monkeypatch.chdir(tmp_path)
    for table, left in [('"specs/never_*" = ["unused-field"]', {"trap-state"}),
                        ('"waiting.yaml" = ["trap-state"]', {"unused-field"}),
                        ('"other/*" = ["trap-state"]', {"trap-state", "unused-field"})]:
        (tmp_path / "statechart.toml").write_text(f"[per-file-ignores]\n{table}\n",
                                                  encoding="utf-8")
        _, out, _ = _run(capsys, "check", "--format", "json")
        assert set(re.findall(r'"rule": "([a-z-]+)"', out)) == left, table


# -- outputs and links relative to the root --------------------------------------------------

def test_output_folders_and_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path, OK, toml=NO_DIAGRAMS + '[output]\ncode = "src/gen"\nschema = "schemas"\n'
             'docs = "site/machines"\n')
    (tmp_path / "site").mkdir()
    monkeypatch.chdir(tmp_path / "site")  # anywhere inside the project
    code, out, err = _run(capsys, "build")
    assert (code, err) == (0, "")
    assert out.split()[1::2] == ["schemas/full_demo.schema.json", "site/machines/full_demo.md",
                                 "site/machines/index.md", "src/gen/__init__.py",
                                 "src/gen/full_demo.py"]
    page = (tmp_path / "site" / "machines" / "full_demo.md").read_text(encoding="utf-8")
    assert "Source: [specs/agent_like.yaml](../../specs/agent_like.yaml)" in page
    assert ".svg" not in page and "this project does not build diagrams" in page
    assert _run(capsys, "build", "--check")[0] == 0
    # Building fewer kinds: what `build` wrote before of the others is an orphan now.
    (tmp_path / "statechart.toml").write_text('build = ["code"]\n[output]\ncode = "src/gen"\n'
                                              'docs = "site/machines"\nschema = "schemas"\n',
                                              encoding="utf-8")
    code, out, _ = _run(capsys, "build", "--check")
    assert code == 1 and "orphaned  site/machines/full_demo.md" in out
    code, out, _ = _run(capsys, "build")
    assert code == 0 and not (tmp_path / "site" / "machines" / "full_demo.md").exists()


def test_build_of_a_spec_in_another_folder_links_back_to_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: no configuration anywhere, run from a sibling folder."""
    _project(tmp_path / "app", OK)
    other = tmp_path / "other"
    other.mkdir()
    (other / "statechart.toml").write_text(NO_DIAGRAMS, encoding="utf-8")
    monkeypatch.chdir(other)
    code, _, _ = _run(capsys, "build", "../app/specs/agent_like.yaml")
    assert code == 0
    page = other / "docs" / "specs" / "full_demo.md"
    link = re.search(r"Source: \[(.*?)\]\((.*?)\)", page.read_text(encoding="utf-8"))
    assert link is not None and link.group(1) == "../app/specs/agent_like.yaml"
    assert (page.parent / link.group(2)).resolve() == (tmp_path / "app" / "specs" /
                                                       "agent_like.yaml")
    module = (other / "generated" / "full_demo.py").read_text(encoding="utf-8")
    assert "# Generated from ../app/specs/agent_like.yaml by" in module
    assert _run(capsys, "build", "--check", "../app/specs/agent_like.yaml")[0] == 0


def test_build_of_a_spec_in_a_configured_project_writes_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    app = _project(tmp_path / "app", OK, toml=NO_DIAGRAMS)
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")
    code, _, _ = _run(capsys, "build", "../app/specs/agent_like.yaml")
    assert code == 0
    assert sorted(p.name for p in (app / "generated").iterdir()) == [
        "__init__.py", "full_demo.py", "full_demo.schema.json"]
    assert list((tmp_path / "other").iterdir()) == []
    page = (app / "docs" / "specs" / "full_demo.md").read_text(encoding="utf-8")
    assert "](../../specs/agent_like.yaml)" in page


def test_layout_settings_come_from_the_configuration_under_env_and_options(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "statechart.toml").write_text(
        '[diagrams]\nengine = "dot"\nlayout-timeout = 7\nlayout-max-transitions = 30\n',
        encoding="utf-8")
    config = load(cwd=tmp_path)
    monkeypatch.delenv(bounds.ENV_TIMEOUT, raising=False)
    monkeypatch.setenv(bounds.ENV_MAX_TRANSITIONS, "40")
    with bounds.using(None, None, config) as limits:
        assert (limits.engine, limits.timeout, limits.max_transitions) == ("dot", 7.0, 40)
    with bounds.using(50, 3.0, config) as limits:
        assert (limits.timeout, limits.max_transitions) == (3.0, 50)


# -- mistakes ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "message"), [
    ("[tool.statechart]\nspecs = ['specs']\nsevrity = {}\n",
     "pyproject.toml:3: unknown key `tool.statechart.sevrity`; did you mean `severity`?"),
    ("[tool.statechart.output]\n\ncodes = 'x'\n",
     "pyproject.toml:3: unknown key `tool.statechart.output.codes`; did you mean `code`?"),
    ("[tool.statechart]\noutput.dosc = 'x'\n",
     "pyproject.toml:2: unknown key `tool.statechart.output.dosc`; did you mean `docs`?"),
    ("[tool.statechart.severity]\nunused-field = 'ignored'\n",
     "pyproject.toml:2: `tool.statechart.severity.unused-field`: `ignored` is not one of "
     "`ignore`, `warning`, `error`; did you mean `ignore`?"),
    ("[tool.statechart.severity]\nunused-feild = 'ignore'\n",
     "pyproject.toml:2: `tool.statechart.severity.unused-feild`: no rule `unused-feild`; did you "
     "mean `unused-field`?"),
    ("[tool.statechart.severity]\nunknown-state = 'warning'\n",
     "pyproject.toml:2: `tool.statechart.severity.unknown-state`: `unknown-state` cannot be "
     "turned off or changed"),
    ('[tool.statechart.per-file-ignores]\n"specs/*" = ["schema"]\n',
     'pyproject.toml:2: `tool.statechart.per-file-ignores."specs/*"`: `schema` cannot be'),
    ("[tool.statechart]\nbuild = ['code', 'diagram']\n",
     "pyproject.toml:2: `tool.statechart.build`: `diagram` is not one of `code`, `schema`, "
     "`docs`, `diagrams`; did you mean `diagrams`?"),
    ("[tool.statechart.output]\ncode = '../elsewhere'\n",
     "pyproject.toml:2: `tool.statechart.output.code`: `../elsewhere` must be a path inside the "
     "project"),
    ("[tool.statechart.diagrams]\nlayout-timeout = 0\n",
     "pyproject.toml:2: `tool.statechart.diagrams.layout-timeout` must be a positive number of "
     "seconds, not 0"),
    ("[tool.statechart.diagrams]\nlayout-max-transitions = 2.5\n",
     "must be a positive whole number, not 2.5"),
    ("[tool.statechart.diagrams]\nengine = 'neato'\n",
     "`tool.statechart.diagrams.engine`: `neato` is not one of `graphviz-pure`, `dot`"),
    ("[tool.statechart]\nspecs = 3\n", "`tool.statechart.specs` must be a list of strings"),
    ("[tool.statechart]\nspecs = [\n", "pyproject.toml: not valid TOML: "),
])
def test_a_bad_configuration_is_a_usage_error_naming_file_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        text: str, message: str) -> None:
    _project(tmp_path, OK, pyproject=text)
    monkeypatch.chdir(tmp_path)
    for command in ("check", "build"):
        code, out, err = _run(capsys, command)
        assert (code, out) == (2, "")
        assert err.startswith(f"statechart {command}: ") and message in err, err
        assert "Traceback" not in err


def test_config_option_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path, UNUSED)
    (tmp_path / "strict.toml").write_text('[tool.statechart.severity]\nunused-field = "error"\n',
                                          encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, "check")[0] == 0
    assert _run(capsys, "check", "--config", "strict.toml")[0] == 1
    code, _, err = _run(capsys, "check", "--config", "nope.toml")
    assert code == 2 and err == "statechart check: --config nope.toml: no such file\n"



def test_config_error_is_a_statechart_error() -> None:
    from statechart_runtime.errors import StatechartError
    assert issubclass(ConfigError, StatechartError)
    with pytest.raises(ConfigError):
        config_module.read(Path("/nonexistent/statechart.toml"))
