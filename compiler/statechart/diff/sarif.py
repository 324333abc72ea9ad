"""`statechart diff`'s reporters: `check`'s, with a SARIF one that knows the change kinds."""

from __future__ import annotations

import json
from collections.abc import Sequence

from statechart import report
from statechart.diagnostics import Diagnostic
from statechart.diff.kinds import KINDS
from statechart.report import Reporter, Sources

DOCS_URL = "https://github.com/statechart-compiler/statechart-compiler/blob/main/docs/diff.md"


def reporters() -> dict[str, Reporter]:
    """`check`'s reporters, with a SARIF one that knows the change kinds.

    `report.sarif` lists only `statechart.rules.RULES` and gives an unknown rule id index 0,
    which would point every change at `yaml-syntax`. This appends the change kinds to the
    driver's rules and recomputes each result's `ruleIndex`; lint rules stay first because a
    spec that fails `check` is reported with them.
    """
    def sarif(diagnostics: Sequence[Diagnostic], sources: Sources) -> str:
        log = json.loads(report.sarif(diagnostics, sources))
        driver = log["runs"][0]["tool"]["driver"]
        driver["rules"] += [
            {"id": kind, "shortDescription": {"text": text},
             "helpUri": f"{DOCS_URL}#{kind}",
             "defaultConfiguration": {"level": "warning"}}
            for kind, text in KINDS.items()
        ]
        index = {r["id"]: i for i, r in enumerate(driver["rules"])}
        for result in log["runs"][0]["results"]:
            result["ruleIndex"] = index[result["ruleId"]]
        return json.dumps(log, indent=2, ensure_ascii=False) + "\n"

    return {**report.REPORTERS, "sarif": sarif}

