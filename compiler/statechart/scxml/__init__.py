"""SCXML in and out (docs/scxml.md): `export.scxml_text` writes a checked spec as an SCXML 1.0
document, `importer.import_scxml` reads one back into a spec (YAML text with comments).

What SCXML has no place for (record fields, rules, `set:`, tags, ...) travels in attributes
and elements of our own namespace, `NS`, which SCXML engines ignore (W3C SCXML 1.0, 3.1: other
namespaces are allowed and have no effect); an import of an exported document reads them back,
so that spec -> SCXML -> spec gives the same model.

Local names of our namespace never repeat an SCXML attribute or element name: a reader that
strips namespaces (python-statemachine's does) must not mistake `sc:initial` for `initial`.
"""

from __future__ import annotations

SCXML_NS = "http://www.w3.org/2005/07/scxml"
NS = "urn:statechart-compiler:scxml"
PREFIX = "sc"
