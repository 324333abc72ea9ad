"""`statechart rule [ID]`: print a rule's documentation, or list the rules."""

from __future__ import annotations

import argparse
import sys

from statechart.rules import RULES, documentation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule_id", nargs="?", metavar="ID", help="a rule id, e.g. trap-state")
    parser.add_argument("--all", action="store_true", help="print every rule's documentation")


def rules_markdown() -> str:
    """docs/rules.md, generated from the rule modules' docstrings."""
    out = ["# Rules", "",
           "<!-- Generated from the rule modules' docstrings by `statechart rule --all`. "
           "DO NOT EDIT. -->", "",
           "Every problem `statechart check` reports carries one of these stable ids. "
           "Message wording may change between versions; ids and exit codes do not.", "",
           "| id | severity | summary |", "| --- | --- | --- |"]
    for rule_id, module in RULES.items():
        summary = documentation(rule_id).splitlines()[0]
        out.append(f"| [`{rule_id}`](#{rule_id}) | {module.SEVERITY} | {summary} |")
    for rule_id, module in RULES.items():
        doc = documentation(rule_id)
        summary, _, body = doc.partition("\n")
        out += ["", f"## {rule_id}", "", f"*{module.SEVERITY}*: {summary}", "", body.strip()]
    return "\n".join(out) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.all:
        print(rules_markdown(), end="")
        return 0
    if args.rule_id is None:
        width = max(map(len, RULES))
        for rule_id, module in RULES.items():
            summary = documentation(rule_id).splitlines()[0]
            print(f"{rule_id:<{width}}  {module.SEVERITY:<7}  {summary}")
        return 0
    try:
        print(f"{args.rule_id} ({RULES[args.rule_id].SEVERITY})\n")
    except KeyError:
        from statechart.build_model import did_you_mean

        hint = did_you_mean(args.rule_id, RULES)
        print(f"statechart: no rule `{args.rule_id}`" + (f"; {hint}" if hint else "")
              + " (`statechart rule` lists them)", file=sys.stderr)
        return 2
    print(documentation(args.rule_id))
    return 0
