"""How much of a public SCXML test corpus `statechart import` takes, builds and runs as the
documents say (docs/scxml.md, "A public corpus").

The corpus is SCION's scxml-test-framework (github.com/jbeard4/scxml-test-framework, Apache
2.0): each `test/GROUP/NAME.scxml` has `NAME.json` with the initial configuration and, for each
event sent, the configuration expected after it (atomic states). Nothing is fetched here: give
the path of a checkout (or of any folder laid out the same way).

    python bench/scxml_corpus.py PATH/TO/scxml-test-framework [--list]

For each document: `import` (refused: the first refusal's reason), `check` of the spec written
(errors: their rules; a test document need not end, nor leave every state: those three
rules are ignored, as a project's `[severity]` would), the generated module built, then the
events sent to a run (a refused event leaves the run where it is, as SCXML ignores an event
no transition takes) and the atomic states compared after each. The import names guards for
`cond` expressions and actions for executable content; they do nothing here (the application
would implement them), so a document whose run goes otherwise and that has such expressions
is counted as needing its data model. Prints one line per outcome with its count, the documents
of each outcome with `--list`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from statechart.codegen import python_module
from statechart.config import Config
from statechart.linter import check_source
from statechart.scxml.importer import import_scxml
from statechart_runtime.api import EventNotAccepted

# A test document is a fragment of a chart, not a lifecycle: that it has no final state or a
# state it never leaves is no error there. As a project importing foreign charts would say
# in its configuration (`[severity]`).
LENIENT = Config(Path.cwd(), severity={"no-path-to-final": "ignore", "trap-state": "ignore",
                                       "unreachable-state": "ignore"})


# A `cond` that is a name to us but an ECMAScript literal or keyword to the document.
ECMASCRIPT_WORDS = frozenset({"true", "false", "return", "null", "undefined"})


def _reason(message: str) -> str:
    """A refusal's reason without the element's details: `<datamodel>: a data model ...`."""
    element = message.split(">", 1)[0].lstrip("<")
    what = message.split(": ", 1)[-1].split(" (")[0]
    return f"refused: <{element}>: {what}"


def _module(text: str, folder: Path, n: int) -> Any:
    path = folder / f"corpus_{n}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"corpus_{n}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _facade(module: Any) -> type:
    base = "".join(p[:1].upper() + p[1:] for p in module.SPEC_NAME.split("_"))
    facade: type = getattr(module, base)
    return facade


def outcome(scxml: Path, folder: Path, n: int) -> str:
    """What happened to one document; a run that goes otherwise than the document says is
    put down to its data model when the import named guards or actions for expressions (the
    application would implement them: here they do nothing)."""
    found = _outcome(scxml, folder, n)
    if not found.startswith("runs otherwise"):
        return found
    text = scxml.read_text(encoding="utf-8")
    conds = set(re.findall(r'\bcond="([^"]*)"', text))
    if conds - {""} and (conds & ECMASCRIPT_WORDS or any(not c.isidentifier() for c in conds)):
        return "needs its data model: a cond expression (a named guard here)"
    if re.search(r"<(if|assign|foreach)\b", text):
        return "needs its data model: executable content (a named action here)"
    return found


def _outcome(scxml: Path, folder: Path, n: int) -> str:
    expected = json.loads(scxml.with_suffix(".json").read_text(encoding="utf-8"))
    imported = import_scxml(scxml.name, scxml.read_bytes())
    if imported.text is None:
        return _reason(imported.diagnostics[0].message)
    checked = check_source("corpus.yaml", imported.text.encode(), LENIENT)
    if checked.errors or checked.spec is None:
        return "spec has errors: " + ", ".join(sorted({d.rule for d in checked.errors}))
    spec = checked.spec
    if any(e.get("after") for e in expected.get("events", [])):
        return "not run: events sent after a delay"
    module = _module(python_module.outputs(spec)[f"generated/{spec.name}.py"].decode(), folder,
                     n)
    facade = _facade(module)
    body = {a: (lambda self: None) for a in spec.actions()}
    run = type("Corpus", (facade,), body)(run_id="corpus")
    children = {s.parent for s in spec.states.values() if s.parent}

    def atomic() -> list[str]:
        return sorted(s.value for s in run.configuration if s.value not in children)

    def named(ids: list[str]) -> list[str]:
        # the spec's names of the document's ids (`b1.1` -> `b1_1`): by the import's comments
        renames = dict(re.findall(r"# SCXML id `([^`]+)`\n\s*(\w+):", imported.text or ""))
        return sorted(renames.get(i, i) for i in ids)

    if atomic() != named(expected["initialConfiguration"]):
        return "runs otherwise: initial configuration"
    for step in expected.get("events", []):
        try:
            run.send(step["event"]["name"])
        except EventNotAccepted as exc:
            if "no such event" in str(exc) and "." in step["event"]["name"]:
                if atomic() != named(step["nextConfiguration"]):
                    return ("runs otherwise: an event no event of the spec is a prefix of "
                            "(taken by SCXML's `*` only)")
        except Exception as exc:  # a measurement: every failure is counted
            return f"runs otherwise: {type(exc).__name__}"
        if atomic() != named(step["nextConfiguration"]):
            return "runs otherwise: a step's configuration"
    return "imports, builds and runs as the document says"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a checkout of scxml-test-framework")
    parser.add_argument("--list", action="store_true", help="the documents of each outcome")
    args = parser.parse_args()
    documents = sorted(p for p in (args.corpus / "test").rglob("*.scxml")
                       if p.with_suffix(".json").is_file())
    if not documents:
        sys.exit(f"no test/*/NAME.scxml with NAME.json under {args.corpus}")
    found: dict[str, list[str]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for n, scxml in enumerate(documents):
            found[outcome(scxml, Path(tmp), n)].append(str(scxml.relative_to(args.corpus)))
    counts = Counter({k: len(v) for k, v in found.items()})
    print(f"{len(documents)} documents")
    for reason, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{count:5}  {reason}")
        if args.list:
            for name in found[reason]:
                print(f"         {name}")


if __name__ == "__main__":
    main()
