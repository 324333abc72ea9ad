"""An SCXML file as a tree of elements that know their line, read with defusedxml.

The parser refuses a DTD, entity declarations and external references (a "billion laughs"
document, or one that reads `/etc/passwd` into the chart, never expands): SCXML needs none of
them. ElementTree forgets where an element was written, so the tree is built from SAX events,
each element keeping the line and column of its start tag for the diagnostics.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from xml.sax import SAXParseException
from xml.sax.handler import ContentHandler, feature_namespaces
from xml.sax.xmlreader import AttributesNSImpl, Locator

import defusedxml
import defusedxml.sax

from statechart_runtime.errors import StatechartError

# As for a spec (statechart.yaml_source.MAX_BYTES): a chart is small; a huge file is a mistake
# or an attack, refused before it is parsed.
MAX_BYTES = 16 * 1024 * 1024


@dataclass
class Element:
    namespace: str  # "" for an element in no namespace
    name: str  # the local name
    attributes: dict[tuple[str, str], str]  # (namespace, local name) -> value
    line: int
    column: int
    children: list[Element] = field(default_factory=list)

    def get(self, name: str, namespace: str = "") -> str | None:
        """An attribute: SCXML's own have no namespace."""
        return self.attributes.get((namespace, name))

    def ours(self, namespace: str) -> dict[str, str]:
        """The attributes of `namespace`, by local name."""
        return {local: v for (ns, local), v in self.attributes.items() if ns == namespace}


class XMLError(StatechartError):
    """The file is no XML document this tool reads; `line`/`column` say where."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


class _Builder(ContentHandler):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[Element] = []
        self.root: Element | None = None
        self.locator: Locator | None = None

    def setDocumentLocator(self, locator: Locator) -> None:
        self.locator = locator

    def startElementNS(self, name: tuple[str | None, str], qname: str | None,
                       attrs: AttributesNSImpl) -> None:
        line = self.locator.getLineNumber() if self.locator else 1
        column = (self.locator.getColumnNumber() or 0) + 1 if self.locator else 1
        attributes = {(ns or "", local): value for (ns, local), value in attrs.items()}
        element = Element(name[0] or "", name[1], attributes, line or 1, column)
        if self.stack:
            self.stack[-1].children.append(element)
        else:
            self.root = element
        self.stack.append(element)

    def endElementNS(self, name: tuple[str | None, str], qname: str | None) -> None:
        self.stack.pop()


def parse(data: bytes) -> Element:
    """The document's root element. Raises XMLError."""
    if len(data) > MAX_BYTES:
        raise XMLError(f"the file is over {MAX_BYTES // (1024 * 1024)} MiB; an SCXML chart is "
                       "far smaller")
    builder = _Builder()
    parser = defusedxml.sax.make_parser()
    parser.setFeature(feature_namespaces, True)
    parser.forbid_dtd = True
    parser.forbid_entities = True
    parser.forbid_external = True
    parser.setContentHandler(builder)
    try:
        parser.parse(io.BytesIO(data))
    except SAXParseException as exc:
        raise XMLError(f"not well-formed XML: {exc.getMessage()}", exc.getLineNumber() or 1,
                       (exc.getColumnNumber() or 0) + 1) from None
    except defusedxml.DTDForbidden:
        raise XMLError("the document has a DTD (`<!DOCTYPE ...>`), which is refused: entity "
                       "declarations could expand without bound or read other files; SCXML "
                       "needs no DTD, remove it") from None
    except defusedxml.EntitiesForbidden as exc:
        raise XMLError(f"the document declares the entity `{exc.name}`, which is refused: "
                       "entities can expand without bound; write the text out") from None
    except defusedxml.ExternalReferenceForbidden:
        raise XMLError("the document refers to an external entity, which is refused: it "
                       "would read another file or URL into the chart") from None
    except defusedxml.DefusedXmlException as exc:
        raise XMLError(f"refused: {exc}") from None
    if builder.root is None:  # pragma: no cover - expat reports an empty document itself
        raise XMLError("the document has no element")
    return builder.root
