"""`statechart init` and `statechart new`: the files of a new project, and of a new spec.

Core only: it returns what to write, or raises `ScaffoldError` (the CLI prints). A project is:

- `specs/order.yaml`, a commented example spec (an order with a payment timer) that checks
  clean and builds;
- `specs/spec.schema.json`, the spec format's JSON Schema, which the spec names for editors on
  its first line; the configuration's `editor-schema` says where it is, so that `build` and
  `statechart schema --write` keep it current and `build --check` reports it stale;
- `[tool.statechart]` in `pyproject.toml`: a new file, or a section added at the end of an
  existing one (its text kept as it was), so that `statechart` finds the project root;
- `.pre-commit-config.yaml` with the `check` and `build --check` hooks.

Nothing is overwritten: when any of these exists (or the project already has a
configuration), nothing is written and the error names each one.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from statechart import REPOSITORY, names
from statechart.config import PYPROJECT, STATECHART_TOML, Config, find
from statechart.spec_format import editor_schema_text
from statechart_runtime.errors import StatechartError

SPECS = "specs"
SCHEMA = f"{SPECS}/spec.schema.json"
EXAMPLE = "order"
PRE_COMMIT = ".pre-commit-config.yaml"
DOCS = f"{REPOSITORY}/blob/main/docs"


class ScaffoldError(StatechartError):
    """A project or spec that cannot be created as asked; the message says why and what to
    do. Nothing has been written."""


SECTION = f"""\
[tool.statechart]
# statechart-compiler's settings. Every key:
# {DOCS}/configuration.md
specs = ["{SPECS}"]
# The spec format's JSON Schema for editors, which the specs name on their first line;
# `statechart build` keeps it current, `statechart build --check` reports it stale.
editor-schema = "{SCHEMA}"
# The defaults, to change: what `build` writes, and where.
# build = ["code", "schema", "docs", "diagrams"]
# output = {{code = "generated", schema = "generated", docs = "docs/specs"}}
"""

PRE_COMMIT_CONFIG = f"""\
# pre-commit hooks (https://pre-commit.com; `pre-commit install` runs them at each commit).
# They run the `statechart` installed in this environment.
repos:
  - repo: local
    hooks:
      - id: statechart-check
        name: statechart check
        entry: statechart check --format full
        language: system
        types: [yaml]
        files: ^{SPECS}/
        require_serial: true
      - id: statechart-build-check
        name: statechart build --check
        entry: statechart build --check
        language: system
        pass_filenames: false
        files: ^({SPECS}|generated|docs/specs)/
"""

EXAMPLE_SPEC = f"""\
# yaml-language-server: $schema=spec.schema.json
# An example made by `statechart init`: an order, from checkout to delivery. Change it, or
# add a spec with `statechart new NAME`. `statechart check` reports every problem (with a fix
# hint); `statechart build` writes generated/order.py (the class your code runs), the JSON
# Schema of its run record, and docs/specs/order.md with a diagram.
# The format: {DOCS}/spec-format.md
statechart: order          # the spec's name: generated/order.py, class `Order`
version: 1                 # raise it when a change would break stored runs
description: An order, from checkout to delivery or cancellation.
initial: placed            # where every run starts

# The run record: the data a run carries besides its state. A transition's `set:` names the
# values its event must be given; a state's `requires:` the fields set while in it.
record:
  paymentId:
    type: string           # string, integer, number, boolean, datetime, or enum: [...]
    description: The payment provider's id of the payment.
  cancelReason:
    enum: [customer, payment_timeout, out_of_stock]
    description: Why the order was cancelled.

states:
  placed:
    description: The customer checked out; the order waits for payment.
    after:                 # a timer: no payment within 30 minutes cancels the order
      30m: {{target: cancelled, assign: {{cancelReason: payment_timeout}}}}
    on:                    # event: target state (or a table with `set:`, `guard:`, ...)
      pay: {{target: paid, set: [paymentId]}}
      cancel: {{target: cancelled, set: [cancelReason]}}
  paid:
    description: Paid; waiting to be shipped.
    requires: [paymentId]
    on:
      ship: shipped
      cancel: {{target: cancelled, set: [cancelReason]}}
  shipped:
    description: On its way to the customer.
    on:
      deliver: delivered
  delivered:
    description: The customer has the order.
    final: true            # a run ends here
  cancelled:
    description: The order was cancelled before it shipped.
    final: true
    requires: [cancelReason]

# Rules the checker proves for every path of the graph (or shows a path that breaks them).
rules:
  - id: shipped-is-not-cancelled
    unreachable: {{from: shipped, to: cancelled}}
    description: Once shipped, an order is delivered; it is never cancelled.
"""


def _new_spec(name: str, schema: str | None) -> str:
    first = f"# yaml-language-server: $schema={schema}\n" if schema else ""
    return f"""{first}# Added by `statechart new {name}`; `statechart check` reports what to fix.
statechart: {name}
version: 1
description: What one {name} run is, in a sentence.
initial: started

states:
  started:
    description: The run has started.
    on:
      finish: finished
  finished:
    description: The run is over.
    final: true
"""


def _existing_config(root: Path) -> str | None:
    """The configuration file `root` already has, as a message names it, or None."""
    if (root / STATECHART_TOML).exists():
        return STATECHART_TOML
    found = find(root.resolve())
    if found is not None and found.parent == root.resolve():
        return f"{PYPROJECT} ([tool.statechart])"
    return None


def project_files(root: Path) -> dict[str, bytes]:
    """The files `statechart init` writes in `root` (relative POSIX path -> content), with
    `pyproject.toml` whole (the existing text, then the section). Raises ScaffoldError naming
    every file that is already there, or a `pyproject.toml` that is not valid TOML."""
    files = {f"{SPECS}/{EXAMPLE}.yaml": EXAMPLE_SPEC.encode(),
             SCHEMA: editor_schema_text().encode(),
             PRE_COMMIT: PRE_COMMIT_CONFIG.encode()}
    taken = [rel for rel in files if os.path.lexists(root / rel)]
    if (config := _existing_config(root)) is not None:
        taken.append(config)
    if taken:
        where = "this folder" if root.resolve() == Path.cwd().resolve() else str(root)
        raise ScaffoldError(f"{where} already has {', '.join(taken)}; nothing written (move "
                            "them away, or run `statechart init` in a new folder)")
    pyproject = root / PYPROJECT
    try:
        text = pyproject.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ScaffoldError(f"cannot read {pyproject}: {exc}; nothing written") from None
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScaffoldError(f"{pyproject} is not valid TOML ({exc}); fix it, then run "
                            "`statechart init` again; nothing written") from None
    if text and not text.endswith("\n"):
        text += "\n"
    files[PYPROJECT] = (text + ("\n" if text else "") + SECTION).encode()
    return files


def spec_file(config: Config, name: str) -> tuple[str, bytes]:
    """The new spec `name` in the project's first spec folder: its path relative to the root
    and its content. Raises ScaffoldError for a name the checker would refuse or a file that
    exists."""
    if not names.SPEC_NAME.match(name) or name in names.RESERVED_SPEC_NAMES:
        why = "is reserved" if name in names.RESERVED_SPEC_NAMES else \
            "is not a spec name (lowercase letters, digits and `_`, starting with a letter)"
        raise ScaffoldError(f"`{name}` {why}; nothing written")
    folder = config.specs[0]
    if folder.endswith((".yaml", ".yml")):  # `specs` names a file: its folder
        folder = Path(folder).parent.as_posix()
    rel = f"{folder}/{name}.yaml" if folder not in ("", ".") else f"{name}.yaml"
    if os.path.lexists(config.root / rel):
        raise ScaffoldError(f"{rel} already exists; nothing written")
    schema = None
    if config.editor_schema is not None:
        schema = os.path.relpath(config.root / config.editor_schema,
                                 (config.root / rel).parent).replace(os.sep, "/")
    return rel, _new_spec(name, schema).encode()
