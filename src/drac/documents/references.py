"""Remove every reference to something outside a document before LibreOffice opens it.

LibreOffice follows what a document points at while it converts: a linked OLE object reads
the file or URL it names into the page, a linked image, stylesheet or frame is fetched, a Word
field includes another file. Each is a way for a document to read the machine or reach the
network, so every such reference is taken out here, in pure Python, and only the cleaned
copy is given to LibreOffice:

- ZIP packages (DOCX, PPTX, XLSX, ODS, and packages embedded in them): relationships that
  point outside the package, OLE link elements, Word field codes that include or link other
  files (their cached result stays), VML image sources, ODF `xlink:href` outside the package,
  DDE links, formulas that read other files or URLs, `xml:base`. Hyperlinks keep their text.
- HTML: written again from a parse, with every resource URL (images, srcset, stylesheets, CSS
  `url()` and `@import`, backgrounds, frames, objects, embeds, base, meta refresh, SVG
  `href`, media) and every script removed; links keep their text, `data:` raster images stay.

XML is parsed with expat, refusing any DTD (so no entity can expand) and any encoding but
UTF-8; parts are edited in place, so an honest part's bytes are unchanged but for what is
removed. Members are rewritten one at a time, within the limits of `documents/archive.py`.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from posixpath import dirname, normpath
from typing import BinaryIO
from urllib.parse import unquote
from xml.parsers import expat

from drac.documents.archive import DEFAULT_LIMITS, ArchiveLimits, check_archive
from drac.errors import DocumentError

_PACKAGE_SUFFIXES = frozenset({".docx", ".pptx", ".xlsx", ".ods", ".odt", ".odp"})
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
_MAX_NESTING = 3
"""Packages embedded in packages (an Excel sheet inside a slide) are cleaned this deep; a
deeper one is refused."""

# kinds, in the order a warning names them
LINKED_OBJECT = "linked object"
IMAGE_LINK = "image link"
STYLESHEET = "stylesheet"
FRAME = "frame or embedded page"
LINKED_DOCUMENT = "linked document or template"
EXTERNAL_DATA = "external data link"
FIELD = "include or link field"
SCRIPT = "script"
HYPERLINK = "hyperlink target"
OTHER = "other reference"
_KIND_ORDER = (
    LINKED_OBJECT, IMAGE_LINK, STYLESHEET, FRAME, LINKED_DOCUMENT, EXTERNAL_DATA, FIELD,
    SCRIPT, OTHER, HYPERLINK,
)  # fmt: skip


@dataclass
class Cleaned:
    """A document with its external references removed, and how many of each kind were."""

    data: bytes
    removed: Counter[str] = field(default_factory=Counter)

    @property
    def warning(self) -> str | None:
        """One sentence naming what was removed, or None when nothing was."""
        return removal_warning(self.removed)


def removal_warning(removed: Counter[str]) -> str | None:
    """The document warning for `removed` (kind -> count), or None when it is empty."""
    total = sum(removed.values())
    if not total:
        return None
    kinds = sorted(removed, key=lambda kind: (_KIND_ORDER.index(kind), kind))
    parts = ", ".join(_counted(removed[kind], kind) for kind in kinds)
    noun = "reference" if total == 1 else "references"
    only_links = set(removed) == {HYPERLINK}
    why = (
        "their text is kept"
        if only_links
        else "they could read files of the machine or reach the network"
    )
    return f"removed {total} external {noun} ({parts}) before conversion: {why}"


_PLURALS = {
    LINKED_OBJECT: "linked objects",
    IMAGE_LINK: "image links",
    STYLESHEET: "stylesheets",
    FRAME: "frames or embedded pages",
    LINKED_DOCUMENT: "linked documents or templates",
    EXTERNAL_DATA: "external data links",
    FIELD: "include or link fields",
    SCRIPT: "scripts",
    HYPERLINK: "hyperlink targets",
    OTHER: "other references",
}


def _counted(count: int, kind: str) -> str:
    return f"{count} {kind if count == 1 else _PLURALS.get(kind, kind)}"


def strip_external_references(
    data: bytes, suffix: str, limits: ArchiveLimits = DEFAULT_LIMITS
) -> Cleaned:
    """Return `data` (a file LibreOffice reads as `suffix`, e.g. ".pptx") without references
    to anything outside it, with the count of what was removed.

    Formats with nothing to follow (CSV, TSV) and binary formats this cannot rewrite (XLS)
    come back unchanged. Raises DocumentError when a package or one of its XML parts cannot
    be read safely (damaged, a DTD, not UTF-8): LibreOffice must never see what this could
    not check.
    """
    out = io.BytesIO()
    removed = write_without_external_references(data, suffix, out, limits)
    return Cleaned(out.getvalue(), removed)


def write_without_external_references(
    data: bytes, suffix: str, out: BinaryIO, limits: ArchiveLimits = DEFAULT_LIMITS
) -> Counter[str]:
    """Write `data` without its external references to `out` (a package member by member,
    so the rewritten copy is never held whole) and return what was removed, by kind.

    Raises DocumentError as `strip_external_references` does.
    """
    kind = suffix.lower()
    removed: Counter[str] = Counter()
    if kind in _PACKAGE_SUFFIXES:
        _clean_package(data, removed, limits, depth=0, out=out)
    elif kind in _HTML_SUFFIXES:
        page = _clean_html(data)
        out.write(page.data)
        removed.update(page.removed)
    else:
        out.write(data)
    return removed


# --- packages -------------------------------------------------------------------------------


def _clean_package(
    data: bytes,
    removed: Counter[str],
    limits: ArchiveLimits,
    depth: int,
    out: BinaryIO | None = None,
) -> bytes:
    """The package rewritten (written to `out` when given, then b"" is returned)."""
    if depth >= _MAX_NESTING:
        raise DocumentError(f"packages nested more than {_MAX_NESTING} deep inside the document")
    members = check_archive(data, limits)
    buffer = io.BytesIO()
    sink: BinaryIO = buffer if out is None else out
    try:
        with (
            zipfile.ZipFile(io.BytesIO(data)) as source,
            zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as target,
        ):
            for member in members:
                content = _read_member(source, member)
                if not member.is_dir():
                    content = _clean_member(member.filename, content, removed, limits, depth)
                copy = zipfile.ZipInfo(member.filename, date_time=member.date_time)
                copy.compress_type = member.compress_type
                copy.external_attr = member.external_attr
                target.writestr(copy, content)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise DocumentError(f"corrupt ZIP container (Office file?): {exc}") from exc
    return buffer.getvalue()


def _read_member(source: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes:
    """The member's bytes, never more than it declares (its size was checked against the
    limits before)."""
    with source.open(member) as stream:
        content = stream.read(member.file_size + 1)
    if len(content) != member.file_size:
        raise DocumentError(f"ZIP member {member.filename!r} does not hold the size it declares")
    return content


def _clean_member(
    name: str, content: bytes, removed: Counter[str], limits: ArchiveLimits, depth: int
) -> bytes:
    if content.startswith(b"PK\x03\x04"):
        return _clean_package(content, removed, limits, depth + 1)
    if content.startswith(_WIDE_XML):
        raise DocumentError(f"XML part {name!r} is not UTF-8; Office files write UTF-8")
    text = content.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"<"):
        return content  # an image or another binary part: nothing LibreOffice follows in it
    if _HTML_START.match(text[:256]):
        page = _clean_html(content)
        removed.update(page.removed)
        return page.data
    return _XmlCleaner(name, content, removed).cleaned()


_WIDE_XML = (
    b"\xff\xfe<\x00", b"\xfe\xff\x00<", b"<\x00", b"\x00<",
    b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\x00<",
)  # fmt: skip
"""How XML in UTF-16 or UTF-32 starts (a byte-order mark or a wide '<')."""
_TAG = re.compile(rb"<[^>\"']*(?:(?:\"[^\"]*\"|'[^']*')[^>\"']*)*>")
"""A tag to its closing '>', quoted values skipped (no quote can start inside a run of the
others, so matching is linear)."""
_HTML_START = re.compile(rb"(?i)<(?:!doctype\s+html|html\b)")
_XLINK = "http://www.w3.org/1999/xlink"
_XML = "http://www.w3.org/XML/1998/namespace"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_PML = "http://schemas.openxmlformats.org/presentationml/2006/main"
_WML = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_SML = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_VML = "urn:schemas-microsoft-com:vml"
_SVG = "http://www.w3.org/2000/svg"
_VML_OFFICE = "urn:schemas-microsoft-com:office:office"
_ODF = "urn:oasis:names:tc:opendocument:xmlns:"
_ODF_TABLE = _ODF + "table:1.0"
_ODF_TEXT = _ODF + "text:1.0"
_ODF_OFFICE = _ODF + "office:1.0"
_ODF_DRAW = _ODF + "drawing:1.0"

_NOWHERE = "about:blank"
"""What a hyperlink's target becomes: no content provider opens it."""
_RELATIONSHIP_KINDS = {
    "oleObject": LINKED_OBJECT,
    "package": LINKED_OBJECT,
    "image": IMAGE_LINK,
    "attachedTemplate": LINKED_DOCUMENT,
    "subDocument": LINKED_DOCUMENT,
    "aFChunk": LINKED_DOCUMENT,
    "frame": FRAME,
    "hyperlink": HYPERLINK,
    "externalLinkPath": EXTERNAL_DATA,
    "externalLink": EXTERNAL_DATA,
    "video": LINKED_OBJECT,
    "audio": LINKED_OBJECT,
    "media": LINKED_OBJECT,
}
_ODF_HREF_KINDS = {
    (_ODF_DRAW, "object"): LINKED_OBJECT,
    (_ODF_DRAW, "object-ole"): LINKED_OBJECT,
    (_ODF_DRAW, "image"): IMAGE_LINK,
    (_ODF_DRAW, "fill-image"): IMAGE_LINK,
    (_ODF + "style:1.0", "background-image"): IMAGE_LINK,
    (_ODF_TEXT, "list-level-style-image"): IMAGE_LINK,
    (_ODF_TEXT, "a"): HYPERLINK,
    (_ODF_DRAW, "a"): HYPERLINK,
    (_ODF_DRAW, "floating-frame"): FRAME,
}
_ODF_DROPPED = {
    (_ODF_DRAW, "applet"): FRAME,
    (_ODF_DRAW, "plugin"): FRAME,
    (_ODF_TABLE, "dde-source"): EXTERNAL_DATA,
    (_ODF_TABLE, "dde-link"): EXTERNAL_DATA,
    (_ODF_TABLE, "dde-links"): EXTERNAL_DATA,
    (_ODF_OFFICE, "dde-source"): EXTERNAL_DATA,
    (_ODF_TEXT, "dde-connection-decl"): EXTERNAL_DATA,
    (_ODF_TEXT, "dde-connection"): EXTERNAL_DATA,
}
_WATCHED_ATTRIBUTES = frozenset({"href", "base", "src", "formula"})
"""The local names of every attribute `_attribute_kind` may remove."""
_DROPPED_ELEMENTS = {
    ("http://www.w3.org/2001/XInclude", "include"): OTHER,
    (_WML, "altChunk"): LINKED_DOCUMENT,  # a part in another format (HTML, RTF) imported whole
    (_SML, "webPr"): EXTERNAL_DATA,  # a web query's URL
}
_ODF_LINK_ELEMENTS = {
    (_ODF_TEXT, "section-source"): LINKED_DOCUMENT,
    (_ODF_TABLE, "table-source"): EXTERNAL_DATA,
    (_ODF_TABLE, "cell-range-source"): EXTERNAL_DATA,
}
"""Elements that are nothing but a link to another file: they go whole (a sheet still marked
as linked is emptied by LibreOffice)."""
_FIELD_WORDS = frozenset(
    {"INCLUDETEXT", "INCLUDEPICTURE", "INCLUDE", "LINK", "IMPORT", "DDE", "DDEAUTO", "DATABASE"}
)
_FORMULA_OUTSIDE = re.compile(r"(?i)webservice|filterxml|\bdde\s*\(|[a-z][a-z0-9+.-]*:/|'\s*/")
_RASTER_DATA = re.compile(r"(?i)^data:image/(?:png|jpe?g|gif|bmp|webp|tiff?)[;,]")


def is_raster_data(url: str) -> bool:
    """True for a `data:` URL of a raster image: its pixels are inside it. An SVG or any
    other kind could itself point at files (LibreOffice's SVG reader opens linked images)."""
    return bool(_RASTER_DATA.match(url.strip()))


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def points_outside(target: str, *, base: str | None = None) -> bool:
    """True when a reference (a URL, a path) leads out of the package: any URL but a `data:`
    raster image, an absolute or network path, a backslash, or `..` above the package root.

    `base` is the folder of the part an OOXML relationship belongs to (absolute part names
    like "/word/media/x.png" stay inside); None for ODF, where "/" and "../" lead outside.
    """
    text = unquote(target).strip(" \t\r\n\f\v\x00")
    if not text or text.startswith("#"):
        return False
    if _SCHEME.match(text):
        return not is_raster_data(text)
    if "\\" in text or text.startswith("//") or any(ord(ch) < 32 for ch in text):
        return True
    if base is None:
        if text.startswith("/"):
            return True
        path = normpath(text)
    else:
        path = normpath(text.lstrip("/") if text.startswith("/") else f"{base}/{text}")
    return path == ".." or path.startswith("../") or path.startswith("/")


@dataclass
class _Edit:
    start: int
    end: int
    replacement: bytes


@dataclass
class _Open:
    """An element being parsed: where its start tag is and what to do with it."""

    name: str
    start: int
    action: str = "keep"  # keep | drop | unwrap | rewrite
    attributes: list[tuple[str, str]] = field(default_factory=list)
    scope: dict[str, str] = field(default_factory=dict)


@dataclass
class _Field:
    """A Word complex field whose instruction is being read (fldChar begin .. separate)."""

    instruction: str = ""
    text_ranges: list[tuple[int, int]] = field(default_factory=list)
    reading: bool = True


class _XmlCleaner:
    """One XML part parsed with expat; the edits collected are applied to its bytes."""

    def __init__(self, name: str, content: bytes, removed: Counter[str]) -> None:
        self._name = name
        self._data = content
        self._removed = removed
        self._base = dirname(name)
        self._edits: list[_Edit] = []
        self._stack: list[_Open] = []
        self._scopes: list[dict[str, str]] = [{"xml": _XML}]
        self._dropping = 0  # depth inside a dropped element
        self._fields: list[_Field] = []
        self._instr: tuple[int, _Field] | None = None
        self._parser = expat.ParserCreate()
        self._parser.ordered_attributes = True
        self._parser.StartDoctypeDeclHandler = self._doctype
        self._parser.EntityDeclHandler = self._refuse_dtd
        self._parser.ProcessingInstructionHandler = self._instruction
        self._parser.XmlDeclHandler = self._declaration
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end
        self._parser.CharacterDataHandler = self._text

    def cleaned(self) -> bytes:
        """The part with every collected edit applied (the same bytes when there is none)."""
        try:
            self._parser.Parse(self._data, True)
        except expat.ExpatError as exc:
            raise DocumentError(f"XML part {self._name!r} is not well-formed: {exc}") from exc
        if not self._edits:
            return self._data
        out = bytearray()
        at = 0
        for edit in sorted(self._edits, key=lambda e: e.start):
            if edit.start < at:
                continue  # inside an element already dropped
            out += self._data[at : edit.start] + edit.replacement
            at = edit.end
        out += self._data[at:]
        return bytes(out)

    def _refuse_dtd(self, *_args: object) -> None:
        raise DocumentError(f"XML part {self._name!r} declares a DTD; Office files never do")

    def _doctype(self, _name: str, system_id: str | None, _public: str | None, subset: int) -> None:
        """A DTD of its own is refused (entities could expand); a reference to an outside
        DTD (as SVG images carry) is removed, so no parser fetches it."""
        if subset:
            self._refuse_dtd()
        # expat reports the declaration where it ends; it is the only one, before the root
        start = self._data.rfind(b"<!DOCTYPE", 0, self._parser.CurrentByteIndex + 1)
        self._edits.append(_Edit(start, self._tag_end(start), b""))
        if system_id:
            self._removed[OTHER] += 1

    def _instruction(self, target: str, _data: str) -> None:
        """`<?xml-stylesheet href=...?>` would load a stylesheet: removed."""
        if target.strip().lower() == "xml-stylesheet":
            start = self._parser.CurrentByteIndex
            end = self._data.find(b"?>", start)
            self._edits.append(_Edit(start, len(self._data) if end < 0 else end + 2, b""))
            self._removed[STYLESHEET] += 1

    def _declaration(self, _version: str, encoding: str | None, _standalone: int) -> None:
        if encoding and encoding.lower().replace("-", "").replace("_", "") not in (
            "utf8",
            "usascii",
            "ascii",
        ):
            raise DocumentError(f"XML part {self._name!r} is in {encoding}, not UTF-8")

    # -- names --

    def _resolve(self, qname: str, scope: dict[str, str], *, attribute: bool) -> tuple[str, str]:
        prefix, _, local = qname.rpartition(":")
        if not prefix:
            return ("" if attribute else scope.get("", "")), local
        return scope.get(prefix, "?" + prefix), local

    # -- events --

    def _start(self, qname: str, flat: list[str]) -> None:
        index = self._parser.CurrentByteIndex
        if self._dropping:
            self._dropping += 1
            return
        attributes = list(zip(flat[0::2], flat[1::2], strict=True))
        scope = self._scopes[-1]
        declared = [(n, v) for n, v in attributes if n == "xmlns" or n.startswith("xmlns:")]
        if declared:
            scope = dict(scope)
            for name, value in declared:
                scope[name[6:] if name != "xmlns" else ""] = value
        self._scopes.append(scope)
        element = _Open(qname, index, attributes=attributes, scope=scope)
        self._stack.append(element)
        self._decide(element, self._resolve(qname, scope, attribute=False))
        if element.action == "drop":
            self._dropping = 1

    def _end(self, _qname: str) -> None:
        index = self._parser.CurrentByteIndex
        if self._dropping > 1:
            self._dropping -= 1
            return
        element = self._stack.pop()
        self._scopes.pop()
        tracked = self._instr is not None and self._instr[0] == element.start
        if element.action == "keep" and not tracked:
            return
        empty = self._is_empty(element, index)
        start_end = index if empty else self._tag_end(element.start)
        end = index if empty else self._tag_end(index)
        if element.action == "drop":
            self._dropping = 0
            self._edits.append(_Edit(element.start, end, b""))
        elif element.action == "unwrap":
            self._edits.append(_Edit(element.start, start_end, b""))
            if not empty:
                self._edits.append(_Edit(index, end, b""))
        elif element.action == "rewrite":
            self._edits.append(_Edit(element.start, start_end, self._start_tag(element, empty)))
        if tracked and self._instr is not None:
            if not empty:
                self._instr[1].text_ranges.append((start_end, index))
            self._instr = None

    def _text(self, text: str) -> None:
        if self._instr is not None:
            self._instr[1].instruction += text

    def _is_empty(self, element: _Open, end_index: int) -> bool:
        """True for `<x/>`: expat reports its end where the tag ends, after "/>"."""
        return self._data[max(element.start, end_index - 2) : end_index] == b"/>" and (
            self._tag_end(element.start) == end_index
        )

    def _tag_end(self, start: int) -> int:
        """The index just past the tag starting at `start` ('>' outside quoted values)."""
        match = _TAG.match(self._data, start)
        return match.end() if match else len(self._data)

    def _start_tag(self, element: _Open, empty: bool) -> bytes:
        attrs = "".join(f' {name}="{_attribute(value)}"' for name, value in element.attributes)
        return f"<{element.name}{attrs}{'/>' if empty else '>'}".encode()

    # -- rules --

    def _decide(self, element: _Open, name: tuple[str, str]) -> None:
        namespace, local = name
        scope = element.scope
        if namespace == _RELS and local == "Relationship":
            self._relationship(element)
            return
        if (namespace, local) in _ODF_DROPPED:
            self._remove(element, "drop", _ODF_DROPPED[namespace, local])
            return
        if (namespace, local) in _ODF_LINK_ELEMENTS:
            href = next((v for k, v in element.attributes if k.endswith(":href")), "")
            if points_outside(href):
                self._remove(element, "drop", _ODF_LINK_ELEMENTS[namespace, local])
            return
        if (namespace, local) in _DROPPED_ELEMENTS:
            self._remove(element, "drop", _DROPPED_ELEMENTS[namespace, local])
            return
        if namespace == _PML and local == "link":
            element.action = "drop"  # the target sits in a relationship, counted there
            return
        if namespace == _VML_OFFICE and local == "OLEObject":
            if dict(element.attributes).get("Type", "").strip().lower() == "link":
                element.action = "drop"
            return
        if namespace == _WML:
            self._word(element, local)
            if element.action != "keep":
                return
        if namespace == _SML and local == "f":
            self._xlsx_formula(element)
            return
        kept: list[tuple[str, str]] = []
        for attribute, value in element.attributes:
            if attribute.rpartition(":")[2] not in _WATCHED_ATTRIBUTES:
                kept.append((attribute, value))
                continue
            attr_ns, attr_local = self._resolve(attribute, scope, attribute=True)
            kind = self._attribute_kind(namespace, local, attr_ns, attr_local, value)
            if kind is None:
                kept.append((attribute, value))
            else:
                self._removed[kind] += 1
        if len(kept) != len(element.attributes):
            element.attributes = kept
            element.action = "rewrite"

    def _attribute_kind(
        self, namespace: str, local: str, attr_ns: str, attr_local: str, value: str
    ) -> str | None:
        """The kind of reference an attribute is when it must go, else None."""
        if attr_ns == _XML and attr_local == "base":
            return OTHER
        if attr_ns == _XLINK and attr_local == "href" and points_outside(value):
            return _ODF_HREF_KINDS.get(
                (namespace, local), IMAGE_LINK if namespace == _SVG else OTHER
            )
        if namespace == _SVG and attr_local == "href" and attr_ns == "" and points_outside(value):
            return IMAGE_LINK
        if namespace == _VML and attr_local in ("src", "href") and attr_ns in ("", _VML_OFFICE):
            return IMAGE_LINK if points_outside(value) else None
        if attr_ns == _VML_OFFICE and attr_local == "href" and points_outside(value):
            return IMAGE_LINK
        if attr_ns == _ODF_TABLE and attr_local == "formula" and _FORMULA_OUTSIDE.search(value):
            return EXTERNAL_DATA
        return None

    def _relationship(self, element: _Open) -> None:
        values = dict(element.attributes)
        target = values.get("Target", "")
        external = values.get("TargetMode", "").strip().lower() == "external"
        if external or points_outside(target, base=self._relationship_base()):
            kind = _RELATIONSHIP_KINDS.get(values.get("Type", "").rstrip("/").rsplit("/", 1)[-1])
            if kind == HYPERLINK:
                # the link stays, pointing nowhere: LibreOffice lays its text out as before
                # (as one field: dropping it lets lines break elsewhere), the URL is gone
                element.attributes = [
                    (name, _NOWHERE if name == "Target" else value)
                    for name, value in element.attributes
                ]
                self._remove(element, "rewrite", HYPERLINK)
            else:
                self._remove(element, "drop", kind or OTHER)

    def _relationship_base(self) -> str:
        """The folder a relationship part's internal targets are relative to: `_rels/x.rels`
        belongs to `x` in the folder above."""
        folder = dirname(self._base) if self._base.endswith("_rels") else self._base
        return folder or "."

    def _word(self, element: _Open, local: str) -> None:
        values = {key.rpartition(":")[2]: value for key, value in element.attributes}
        if local == "fldSimple":
            if _field_word(values.get("instr", "")) in _FIELD_WORDS | {"HYPERLINK"}:
                kind = HYPERLINK if _field_word(values["instr"]) == "HYPERLINK" else FIELD
                self._remove(element, "unwrap", kind)
        elif local == "fldChar":
            kind = values.get("fldCharType", "")
            if kind == "begin":
                self._fields.append(_Field())
            elif kind in ("separate", "end") and self._fields:
                current = self._fields[-1]
                if current.reading:
                    current.reading = False
                    self._judge_field(current)
                if kind == "end":
                    self._fields.pop()
        elif local == "instrText" and self._fields and self._fields[-1].reading:
            self._instr = (element.start, self._fields[-1])

    def _judge_field(self, current: _Field) -> None:
        word = _field_word(current.instruction)
        if word in _FIELD_WORDS or word == "HYPERLINK":
            self._removed[HYPERLINK if word == "HYPERLINK" else FIELD] += 1
            for start, end in current.text_ranges:
                self._edits.append(_Edit(start, end, b""))

    def _xlsx_formula(self, element: _Open) -> None:
        start = self._tag_end(element.start)
        text = self._data[start : start + 4096].split(b"<", 1)[0].decode("utf-8", "replace")
        if _FORMULA_OUTSIDE.search(text):
            self._remove(element, "drop", EXTERNAL_DATA)

    def _remove(self, element: _Open, action: str, kind: str) -> None:
        element.action = action
        self._removed[kind] += 1


def _field_word(instruction: str) -> str:
    words = instruction.replace("\\", " ").split()
    return words[0].upper() if words else ""


def _attribute(value: str) -> str:
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace('"', "&quot;")
        .replace("\t", "&#9;")
        .replace("\n", "&#10;")
        .replace("\r", "&#13;")
    )


# --- HTML -----------------------------------------------------------------------------------

_DROPPED_WITH_CONTENT = {
    "script": SCRIPT,
    "iframe": FRAME,
    "frameset": FRAME,
    "object": FRAME,
    "applet": FRAME,
    "noembed": FRAME,
    "template": OTHER,
}
_DROPPED_ALONE = {"embed": FRAME, "frame": FRAME, "base": OTHER, "link": STYLESHEET}
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
     "source", "track", "wbr", "frame", "keygen", "image", "bgsound"}
)  # fmt: skip
_URL_ATTRIBUTES = frozenset(
    {"src", "srcset", "href", "background", "lowsrc", "dynsrc", "poster", "data", "codebase",
     "archive", "cite", "longdesc", "action", "formaction", "icon", "manifest", "profile",
     "classid", "code", "usemap", "ping", "xlink:href", "imagesrcset", "datasrc", "content"}
)  # fmt: skip
_IMAGE_ATTRIBUTES = frozenset(
    {"src", "srcset", "background", "lowsrc", "dynsrc", "poster", "imagesrcset"}
)
_MEDIA_TAGS = frozenset(
    {"img", "image", "input", "video", "audio", "source", "track", "use", "feimage", "picture"}
)
_TAG_NAME = re.compile(r"^[a-z][a-z0-9:-]*$")
_ATTRIBUTE_NAME = re.compile(r"^[a-z_:][a-z0-9_:.-]*$")
_CSS_IMPORT = re.compile(r"(?i)@import\b[^;]*;?")
_CSS_URL = re.compile(r"(?i)url\s*\(\s*(\"[^\"]*\"|'[^']*'|[^)]*)\s*\)")
_CSS_LEFTOVER = re.compile(r"(?i)url\s*\(|@import|image-set\s*\(|expression\s*\(")
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})\s?|(.))", re.S)
_CSS_COMMENT = re.compile(r"/\*.*?(\*/|$)", re.S)
_CHARSET = re.compile(rb"""(?i)charset\s*=\s*["']?\s*([a-z0-9_.:-]+)""")


def _clean_html(data: bytes) -> Cleaned:
    cleaner = _HtmlCleaner()
    cleaner.feed(_decoded_html(data))
    cleaner.close()
    return Cleaned(("\ufeff" + "".join(cleaner.out)).encode("utf-8"), cleaner.removed)


def _decoded_html(data: bytes) -> str:
    """The page's text: by its byte order mark, else its declared charset, else UTF-8, else
    Windows-1252 (what browsers fall back to)."""
    for mark, codec in (
        (b"\xef\xbb\xbf", "utf-8"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    ):
        if data.startswith(mark):
            return data[len(mark) :].decode(codec, "replace")
    declared = _CHARSET.search(data[:4096])
    if declared:
        try:
            return data.decode(declared.group(1).decode("ascii"), "replace")
        except LookupError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


class _HtmlCleaner(HTMLParser):
    """Writes the page again from its parse: known-safe tags and attributes only."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.removed: Counter[str] = Counter()
        self._skipping: list[str] = []
        self._in_style = 0
        self._wrote_charset = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, closed=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, closed=True)

    def _open(self, tag: str, attrs: list[tuple[str, str | None]], *, closed: bool) -> None:
        if self._skipping:
            if tag == self._skipping[-1] and not closed:
                self._skipping.append(tag)
            return
        if not _TAG_NAME.match(tag):
            return
        if tag in _DROPPED_WITH_CONTENT:
            self.removed[_DROPPED_WITH_CONTENT[tag]] += 1
            if not closed:
                self._skipping.append(tag)
            return
        if tag in _DROPPED_ALONE:
            self.removed[_DROPPED_ALONE[tag]] += 1
            return
        if tag == "meta" and not self._keeps_meta(attrs):
            return
        kept = self._attributes(tag, attrs)
        text = "".join(f' {name}="{_html_attribute(value)}"' for name, value in kept)
        self.out.append(f"<{tag}{text}{' /' if closed else ''}>")
        if tag == "head" and not self._wrote_charset:
            self.out.append('<meta http-equiv="Content-Type" content="text/html; charset=utf-8">')
            self._wrote_charset = True
        if tag == "style" and not closed:
            self._in_style += 1

    def _keeps_meta(self, attrs: list[tuple[str, str | None]]) -> bool:
        """Meta tags stay but for refresh (a fetch) and charsets (the page is now UTF-8)."""
        names = {name.lower(): (value or "") for name, value in attrs}
        equiv = names.get("http-equiv", "").strip().lower()
        if equiv == "refresh":
            self.removed[OTHER] += 1
            return False
        return "charset" not in names and equiv != "content-type"

    def _attributes(self, tag: str, attrs: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
        kept: list[tuple[str, str]] = []
        for raw_name, raw_value in attrs:
            name = raw_name.lower()
            value = raw_value or ""
            if not _ATTRIBUTE_NAME.match(name) or name.startswith("on"):
                continue  # event handlers run macros; odd names cannot be written back safely
            if name == "style":
                value = self._css(value)
            elif name in _URL_ATTRIBUTES and (name != "content" or tag == "meta"):
                kind = self._url_kind(tag, name, value)
                if kind is not None:
                    self.removed[kind] += 1
                    continue
            elif ":" in name and name.endswith("href"):
                self.removed[IMAGE_LINK] += 1
                continue
            kept.append((name, value))
        return kept

    def _url_kind(self, tag: str, name: str, value: str) -> str | None:
        """What a URL attribute is when it must go; None for what stays (an in-page `#`
        link, a `data:` image, a meta tag's plain content)."""
        text = value.strip()
        if tag == "meta":
            return OTHER if "url" in text.lower() else None
        if name in ("href", "usemap") and text.startswith("#"):
            return None
        if name == "src" and is_raster_data(text):
            return None
        if tag in ("a", "area"):
            return HYPERLINK
        if name in _IMAGE_ATTRIBUTES or tag in _MEDIA_TAGS:
            return IMAGE_LINK
        if name in ("data", "codebase", "archive", "classid", "code"):
            return FRAME
        return OTHER

    def _css(self, text: str) -> str:
        original = text
        text = _CSS_COMMENT.sub("", _CSS_ESCAPE.sub(_unescaped, text))
        imports = len(_CSS_IMPORT.findall(text))
        text = _CSS_IMPORT.sub("", text)

        def url(match: re.Match[str]) -> str:
            inner = match.group(1).strip("\"' \t")
            if is_raster_data(inner):
                return match.group(0)
            self.removed[IMAGE_LINK] += 1
            return "none"

        text = _CSS_URL.sub(url, text)
        self.removed[STYLESHEET] += imports
        if _CSS_LEFTOVER.search(_CSS_URL.sub("", text)) or "://" in text:
            self.removed[OTHER] += 1
            return ""
        return original if text == original else text

    def handle_endtag(self, tag: str) -> None:
        if self._skipping:
            if tag == self._skipping[-1]:
                self._skipping.pop()
            return
        if not _TAG_NAME.match(tag) or tag in _VOID or tag in _DROPPED_ALONE:
            return
        if tag == "style" and self._in_style:
            self._in_style -= 1
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if self._in_style:
            self.out.append(self._css(data).replace("</", "<\\/"))
        else:
            self.out.append(data.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))

    def handle_decl(self, decl: str) -> None:
        if decl.lower().startswith("doctype"):
            self.out.append("<!DOCTYPE html>")


def _unescaped(match: re.Match[str]) -> str:
    """A CSS escape as the character it stands for (so `u\\72l(` is seen as `url(`)."""
    if match.group(1):
        code = int(match.group(1), 16)
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return match.group(2)


def _html_attribute(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )
