"""Spec coverage reports (statechart_runtime.coverage's data; docs/testing-coverage.md).

- `table`: per spec, transitions, states and guard outcomes covered, then every item not
  covered with its `file:line` in the spec (as coverage.py's `term-missing`);
- `json_report`, `lcov`, `cobertura`: machine-readable reports whose lines are spec lines, so
  that coverage tools (Codecov, an IDE's gutter, a CI check) show which lines of a spec the
  tests exercised. States and transitions are lines; a line with several items counts as
  covered only when every one of them is (its count: the smallest). Guard outcomes are
  branches (lcov `BRDA`, Cobertura `condition-coverage`), two per guarded alternative;
- `write`: a report written atomically (a temporary file renamed).

Items of a module generated without spec positions have no line: they count in the table and
in JSON, and are left out of lcov and Cobertura.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree

from statechart_runtime.errors import CoverageError
from statechart_runtime.testing.coverage import KINDS, Item, SpecCoverage

FORMATS = ("json", "lcov", "cobertura")
_HEADINGS = {"transition": "transitions", "state": "states", "guard": "guard outcomes"}


def percent(covered: int, total: int) -> float:
    """Covered items in percent (100 for nothing to cover, as coverage.py counts it)."""
    return 100.0 * covered / total if total else 100.0


def total(specs: Sequence[SpecCoverage]) -> tuple[int, int]:
    """(covered, total) items of every kind of every spec: what `--statechart-cov-fail-under`
    compares."""
    pairs = [spec.counts(kind) for spec in specs for kind in KINDS]
    return sum(c for c, _ in pairs), sum(t for _, t in pairs)


def table(specs: Sequence[SpecCoverage]) -> list[str]:
    """The terminal report's lines (two specs of one name, two versions of a spec say which
    one each is: version and source hash)."""
    def cell(covered: int, count: int) -> str:
        return f"{covered}/{count} {percent(covered, count):.0f}%"

    header = ["spec", *(_HEADINGS[k] for k in KINDS), "total"]
    rows = []
    names = [spec.name for spec in specs]
    labels = {spec.key: spec.name if names.count(spec.name) == 1 else
              f"{spec.name} (v{spec.version} {spec.sha256[:8]})" for spec in specs}
    for spec in specs:
        counts = [spec.counts(kind) for kind in KINDS]
        rows.append([labels[spec.key], *(cell(*c) for c in counts),
                     cell(sum(c for c, _ in counts), sum(t for _, t in counts))])
    if len(specs) > 1:
        counts = [(sum(s.counts(k)[0] for s in specs), sum(s.counts(k)[1] for s in specs))
                  for k in KINDS]
        rows.append(["TOTAL", *(cell(*c) for c in counts), cell(*total(specs))])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in [header, *rows]]
    missing = [(spec, item) for spec in specs for item in spec.missing()]
    if missing:
        lines += ["", "Not covered:"]
        lines += [f"{_where(item)}: {labels[spec.key]}: {item.text}" for spec, item in missing]
    return lines


def _where(item: Item) -> str:
    return f"{item.file}:{item.line}" if item.file and item.line else "(no position)"


def json_report(specs: Sequence[SpecCoverage]) -> str:
    """Every spec's totals and items with their hits."""
    covered, count = total(specs)
    return json.dumps({
        "format": "statechart-coverage", "version": 1,
        "totals": {"covered": covered, "total": count, "percent": percent(covered, count)},
        "specs": [{
            "name": spec.name, "version": spec.version, "sha256": spec.sha256,
            "totals": {_HEADINGS[k]: dict(zip(("covered", "total"), spec.counts(k),
                                              strict=True)) for k in KINDS},
            "items": [{"kind": i.kind, "id": i.id, "file": i.file, "line": i.line,
                       "text": i.text, "hits": spec.hits.get(i.id, 0)} for i in spec.items],
        } for spec in specs],
    }, indent=2) + "\n"


# file -> line -> hits of the items written there: (states and transitions, guard outcomes)
_Lines = dict[str, dict[int, tuple[list[int], list[int]]]]


def _by_line(spec: SpecCoverage) -> _Lines:
    out: _Lines = {}
    for item in spec.items:
        if item.file and item.line:
            found = out.setdefault(item.file, {}).setdefault(item.line, ([], []))
            found[1 if item.kind == "guard" else 0].append(spec.hits.get(item.id, 0))
    return out


def lcov(specs: Sequence[SpecCoverage]) -> str:
    """An lcov tracefile: a record per spec file (a spec that extends another has two), test
    name the spec's."""
    out: list[str] = []
    for spec in specs:
        for file, lines in _by_line(spec).items():
            out += [f"TN:{spec.name}", f"SF:{file}"]
            found = hit = branches = taken = 0
            for line, (counts, outcomes) in sorted(lines.items()):
                for index, count in enumerate(outcomes):
                    out.append(f"BRDA:{line},0,{index},{count}")
                    branches += 1
                    taken += count > 0
                if counts:
                    out.append(f"DA:{line},{min(counts)}")
                    found += 1
                    hit += min(counts) > 0
            out += [f"BRF:{branches}", f"BRH:{taken}", f"LF:{found}", f"LH:{hit}",
                    "end_of_record"]
    return "\n".join(out) + "\n"


def cobertura(specs: Sequence[SpecCoverage], root: str = ".") -> str:
    """A Cobertura XML report: a package per spec, a class per spec file (paths relative to
    `root`, the project root, named in `<source>`)."""
    def rate(covered: int, count: int) -> str:
        return f"{covered / count:.4f}" if count else "1"

    counts = {"lines": [0, 0], "branches": [0, 0]}
    packages = ElementTree.Element("packages")
    for spec in specs:
        package = ElementTree.SubElement(packages, "package", name=spec.name)
        classes = ElementTree.SubElement(package, "classes")
        spec_lines, spec_branches = [0, 0], [0, 0]
        for file, lines in _by_line(spec).items():
            element = ElementTree.SubElement(classes, "class", name=f"{spec.name}:{file}",
                                             filename=file)
            ElementTree.SubElement(element, "methods")
            lines_element = ElementTree.SubElement(element, "lines")
            file_lines, file_branches = [0, 0], [0, 0]
            for line, (hits, outcomes) in sorted(lines.items()):
                attrs = {"number": str(line), "hits": str(min(hits or outcomes))}
                file_lines[0] += min(hits or outcomes) > 0
                file_lines[1] += 1
                if outcomes:
                    done = sum(1 for c in outcomes if c)
                    attrs.update(branch="true", **{"condition-coverage": (
                        f"{100 * done // len(outcomes)}% ({done}/{len(outcomes)})")})
                    file_branches[0] += done
                    file_branches[1] += len(outcomes)
                else:
                    attrs["branch"] = "false"
                ElementTree.SubElement(lines_element, "line", attrs)
            element.set("line-rate", rate(*file_lines))
            element.set("branch-rate", rate(*file_branches))
            element.set("complexity", "0")
            for acc, part in ((spec_lines, file_lines), (spec_branches, file_branches)):
                acc[0] += part[0]
                acc[1] += part[1]
        package.set("line-rate", rate(*spec_lines))
        package.set("branch-rate", rate(*spec_branches))
        package.set("complexity", "0")
        for key, part in (("lines", spec_lines), ("branches", spec_branches)):
            counts[key][0] += part[0]
            counts[key][1] += part[1]
    top = ElementTree.Element("coverage", {
        "line-rate": rate(*counts["lines"]), "branch-rate": rate(*counts["branches"]),
        "lines-covered": str(counts["lines"][0]), "lines-valid": str(counts["lines"][1]),
        "branches-covered": str(counts["branches"][0]),
        "branches-valid": str(counts["branches"][1]), "complexity": "0",
        "version": "statechart-coverage 1", "timestamp": str(int(time.time() * 1000))})
    sources = ElementTree.SubElement(top, "sources")
    ElementTree.SubElement(sources, "source").text = root
    top.append(packages)
    ElementTree.indent(top)
    return '<?xml version="1.0" ?>\n' + ElementTree.tostring(top, encoding="unicode") + "\n"


def parse_target(text: str) -> tuple[str, Path]:
    """`FORMAT:PATH` (`--statechart-cov-report`) -> (format, path); CoverageError for an
    unknown format, no path, or a folder that does not exist."""
    kind, colon, path = text.partition(":")
    if not colon or kind not in FORMATS or not path:
        raise CoverageError(f"--statechart-cov-report={text}: expected FORMAT:PATH with FORMAT "
                            f"one of {', '.join(FORMATS)} (e.g. lcov:spec-coverage.lcov)")
    target = Path(path)
    if not target.parent.is_dir():
        raise CoverageError(f"--statechart-cov-report={text}: no such folder "
                            f"{str(target.parent)!r}: create it first")
    return kind, target


def render(kind: str, specs: Sequence[SpecCoverage], root: str = ".") -> str:
    """The report of `kind` (one of FORMATS)."""
    if kind == "json":
        return json_report(specs)
    if kind == "lcov":
        return lcov(specs)
    return cobertura(specs, root)


def write(path: Path, text: str) -> None:
    """Write `text` to `path` atomically; CoverageError (naming the path) when it cannot be."""
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CoverageError(f"cannot write the spec coverage report {str(path)!r}: "
                            f"{exc.strerror or exc}") from None
