"""Reading XML safely: one policy for every XML papersift reads (XML and SVG files, the parts of
OOXML and ODF packages, EPUB package documents).

- Nothing outside the document is ever read: no network, no external DTD, no external entity
  (``SYSTEM``/``PUBLIC``: XXE), no XInclude. A reference to an external entity stays in the text
  as written (``&xxe;``) and the unit is ``truncated``: its text is not all there.
- Internal entities are expanded, after their expansion is measured from the declarations
  themselves: a document whose references would expand beyond ``MAX_EXPANSION`` (billion laughs,
  quadratic blowup) raises ``EntityBombError`` before the parser expands anything. libxml2's own
  amplification guard (which some versions drop under ``huge_tree``) is a second line.
- Text nodes beyond libxml2's 10 MB default are real text (``huge_tree``); what libxml2 still
  refuses (nesting beyond 2,048 levels) ends the read there, and the unit says it was cut.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from papersift.errors import CorruptInputError, EntityBombError

#: bytes all entity references of one document may expand to: far above any real use (a company
#: name used a thousand times), far below what a bomb asks for
MAX_EXPANSION = 16 * 1024 * 1024
#: a DOCTYPE is in the prolog: how far into the bytes to look for entity declarations
_PROLOG_BYTES = 4 * 1024 * 1024
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
_ENTITY_DECL = re.compile(
    rb"""<!ENTITY\s+(%\s+)?([^\s%;&<>"']+)\s+(?:(SYSTEM|PUBLIC)\b[^>]*|("[^"]*"|'[^']*')[^>]*)>""",
    re.IGNORECASE,
)
_REFERENCE = re.compile(rb"&([A-Za-z_:][-A-Za-z0-9._:]*);")
_XML_DECL_TEXT = re.compile(r"^\s*<\?xml[^>]*\?>")
#: libxml2's messages for entity bombs it caught itself
_BOMB_MESSAGES = ("amplification", "entity reference loop", "entity loop")

TRUNCATED = "truncated"


@dataclass
class XmlDocument:
    """A parsed XML document, with what the read noticed."""

    root: Any
    #: recovered_xml: the XML was damaged and read as far as libxml2 could
    signals: list[str] = field(default_factory=list)
    #: why some of the document's text is not in the tree ('' when all of it is)
    truncated: str = ""
    #: the code of what cut it (external_entity, nesting_too_deep)
    truncated_code: str = ""


def read_xml(data: bytes | str, what: str = "XML") -> XmlDocument:
    """Parse ``data`` under the policy above; CorruptInputError when nothing can be read."""
    if isinstance(data, str):
        data = _XML_DECL_TEXT.sub("", data, count=1).encode("utf-8")
    external = _check_entities(data, what)
    resolve: Any = False if external else "internal"
    signals: list[str] = []
    try:
        root = etree.fromstring(data, _parser(resolve, recover=False))
        error_log: list[Any] = []
    except etree.XMLSyntaxError as exc:
        if any(m in str(exc).lower() for m in _BOMB_MESSAGES):
            raise EntityBombError(f"{what} declares entities that expand beyond the parser's limits "
                                  f"(billion laughs or quadratic blowup): {exc}") from exc
        parser = _parser(resolve, recover=True)
        try:
            root = etree.fromstring(data, parser)
        except etree.XMLSyntaxError:
            root = None
        if root is None:
            raise CorruptInputError(f"{what} is not well-formed: {exc}") from exc
        error_log = list(parser.error_log)
        signals.append("recovered_xml")
    document = XmlDocument(root, signals)
    cut = [e for e in error_log if e.level_name == "FATAL" and e.type_name == "ERR_RESOURCE_LIMIT"]
    if cut:
        document.truncated = f"{what}: the text after line {cut[0].line} is not read ({cut[0].message.strip()})"
        document.truncated_code = "nesting_too_deep" if "depth" in cut[0].message.lower() else "limit_exceeded"
    if external:
        names = ", ".join(f"&{name};" for name in external[:3]) + (" ..." if len(external) > 3 else "")
        document.truncated = "; ".join(filter(None, [
            document.truncated,
            f"{what}: external entity {names} not resolved (papersift never reads the files or URLs a document "
            "points to); the reference is left in the text"]))
        document.truncated_code = document.truncated_code or "external_entity"
    return document


class NotStreamable(Exception):
    """The part must be read whole (read_xml): it declares a DOCTYPE (entities to weigh, external
    references to leave unresolved), it is damaged (recovery needs the whole parse), or it has no
    such container. Whatever the stream already gave is to be set aside."""


def stream_children(data: bytes, container: str) -> Iterator[Any]:
    """The children of the root's child named ``container`` (by local name), each given whole
    when it ends and cleared, with its preceding siblings, once the caller moves on: a 120 MB
    part is never one tree (the tree of word/document.xml took twice the part's size). Nothing
    external is read (the parser of read_xml, with no entities to resolve: a part with a DOCTYPE is
    NotStreamable). Raises NotStreamable, possibly after some children, when the part cannot be
    read this way."""
    if has_doctype(data):
        raise NotStreamable("the part declares a DOCTYPE")
    events = etree.iterparse(io.BytesIO(data), events=("start", "end"), resolve_entities=False, no_network=True,
                             load_dtd=False, huge_tree=True)
    depth, inside, found = 0, False, False
    try:
        for event, element in events:
            if event == "start":
                depth += 1
                if depth == 2 and not found and _local_name(element) == container:
                    inside = found = True
                continue
            depth -= 1
            if inside and depth == 2:
                yield element
                element.clear(keep_tail=True)
                parent = element.getparent()
                while element.getprevious() is not None:
                    del parent[0]
            elif inside and depth == 1:
                inside = False
    except etree.XMLSyntaxError as exc:
        raise NotStreamable(str(exc)) from exc
    if not found:
        raise NotStreamable(f"no {container} element under the root")


def _local_name(element: Any) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def parse_xml(data: bytes | str, what: str = "XML") -> Any:
    """Just the root element (for structure: manifests, package documents, relationships)."""
    return read_xml(data, what).root


def declares_entities(data: bytes) -> bool:
    """Whether the prolog declares entities (an internal DTD subset with <!ENTITY ...>)."""
    prolog = data[:_PROLOG_BYTES]
    return bool(_DOCTYPE.search(prolog)) and b"<!ENTITY" in prolog.upper()


def has_doctype(head: bytes) -> bool:
    """Whether the prolog in ``head`` (a part's first bytes) declares a DOCTYPE."""
    return bool(_DOCTYPE.search(head[:_PROLOG_BYTES]))


def _parser(resolve: Any, recover: bool) -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=resolve, no_network=True, load_dtd=False, huge_tree=True,
                           recover=recover)


def _check_entities(data: bytes, what: str) -> list[str]:
    """The external entities the document declares; EntityBombError when its internal ones would
    expand beyond MAX_EXPANSION. Measured from the declarations, before any parser expands them."""
    prolog = data[:_PROLOG_BYTES]
    if not _DOCTYPE.search(prolog):
        return []
    declared: dict[str, bytes | None] = {}  # general entity -> replacement text (None: external)
    for match in _ENTITY_DECL.finditer(prolog):
        parameter, name, external, literal = match.groups()
        if parameter:
            continue  # parameter entities only matter to a DTD, which is never loaded
        key = name.decode("utf-8", "replace")
        declared.setdefault(key, None if external else literal[1:-1])
    if not declared:
        return []
    sizes: dict[str, int] = {}

    def size(name: str, stack: tuple[str, ...]) -> int:
        if name in sizes:
            return sizes[name]
        if name in stack:
            raise EntityBombError(f"{what}: entity &{name}; refers to itself (an entity loop)")
        text = declared.get(name)
        if text is None:  # external or undeclared: not expanded
            return len(name) + 2
        total = len(_REFERENCE.sub(b"", text))
        for ref in _REFERENCE.findall(text):
            total += size(ref.decode("utf-8", "replace"), (*stack, name))
            if total > MAX_EXPANSION:
                break
        sizes[name] = total
        return total

    body_start = max(match.end() for match in _ENTITY_DECL.finditer(prolog))
    expansion = 0
    for reference in _REFERENCE.finditer(data, body_start):
        name = reference.group(1).decode("utf-8", "replace")
        if name in declared:
            expansion += size(name, ())
            if expansion > MAX_EXPANSION:
                raise EntityBombError(
                    f"{what}: its entity references expand to more than {MAX_EXPANSION} bytes "
                    f"(&{name}; alone to {sizes.get(name, 0)}): billion laughs or quadratic blowup")
    return [name for name, text in declared.items() if text is None]
