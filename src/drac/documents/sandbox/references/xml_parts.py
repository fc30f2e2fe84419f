"""One XML part of a package, cleaned: parsed with expat (no DTD, UTF-8 only), every
reference outside the package found by the rules of `xml_rules`, and removed by editing the
part's bytes in place, so an honest part comes back byte for byte but for what is removed."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from posixpath import dirname, normpath
from xml.parsers import expat

from drac.documents.sandbox.references.formulas import reads_outside
from drac.documents.sandbox.references.kinds import (
    EXTERNAL_DATA,
    FIELD,
    HYPERLINK,
    IMAGE_LINK,
    OTHER,
    STYLESHEET,
)
from drac.documents.sandbox.references.targets import points_outside
from drac.documents.sandbox.references.xml_rules import (
    ALT_CHUNK,
    CALC_EXT,
    DROPPED_ELEMENTS,
    FIELD_WORDS,
    FORMULA_ELEMENTS,
    NOWHERE,
    ODF,
    ODF_DROPPED,
    ODF_FORMULA_ATTRIBUTES,
    ODF_HREF_KINDS,
    ODF_LINK_ELEMENTS,
    PML,
    RELATIONSHIP_KINDS,
    RELS,
    SVG,
    VML,
    VML_OFFICE,
    WATCHED_ATTRIBUTES,
    WML,
    XLINK,
    XML,
)
from drac.errors import DocumentError

TAG = re.compile(rb"<[^>\"']*(?:(?:\"[^\"]*\"|'[^']*')[^>\"']*)*>")
"""A tag to its closing '>', quoted values skipped (no quote can start inside a run of the
others, so matching is linear)."""


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

    instruction: list[str] = field(default_factory=list)
    text_ranges: list[tuple[int, int]] = field(default_factory=list)
    reading: bool = True


class XmlCleaner:
    """One XML part parsed with expat; the edits collected are applied to its bytes."""

    def __init__(self, name: str, content: bytes, removed: Counter[str]) -> None:
        self._name = name
        self._data = content
        self._removed = removed
        self._edits: list[_Edit] = []
        self._stack: list[_Open] = []
        self._scopes: list[dict[str, str]] = [{"xml": XML}]
        self._dropping = 0  # depth inside a dropped element
        self._fields: list[_Field] = []
        self._instr: tuple[int, _Field] | None = None
        self._formula: tuple[_Open, list[str]] | None = None
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
        resolved = self._resolve(qname, scope, attribute=False)
        self._decide(element, resolved)
        if resolved in FORMULA_ELEMENTS and element.action == "keep":
            self._formula = (element, [])
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
        if self._formula is not None and self._formula[0] is element:
            if reads_outside("".join(self._formula[1])):
                self._remove(element, "drop", EXTERNAL_DATA)
            self._formula = None
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
            self._instr[1].instruction.append(text)
        if self._formula is not None:
            self._formula[1].append(text)  # as expat decoded it: entities, CDATA

    def _is_empty(self, element: _Open, end_index: int) -> bool:
        """True for `<x/>`: expat reports its end where the tag ends, after "/>"."""
        return self._data[max(element.start, end_index - 2) : end_index] == b"/>" and (
            self._tag_end(element.start) == end_index
        )

    def _tag_end(self, start: int) -> int:
        """The index just past the tag starting at `start` ('>' outside quoted values)."""
        match = TAG.match(self._data, start)
        return match.end() if match else len(self._data)

    def _start_tag(self, element: _Open, empty: bool) -> bytes:
        attrs = "".join(f' {name}="{_attribute(value)}"' for name, value in element.attributes)
        return f"<{element.name}{attrs}{'/>' if empty else '>'}".encode()

    # -- rules --

    def _decide(self, element: _Open, name: tuple[str, str]) -> None:
        namespace, local = name
        scope = element.scope
        if namespace == RELS and local == "Relationship":
            self._relationship(element)
            return
        if (namespace, local) in ODF_DROPPED:
            self._remove(element, "drop", ODF_DROPPED[namespace, local])
            return
        if (namespace, local) in ODF_LINK_ELEMENTS:
            href = next((v for k, v in element.attributes if k.endswith(":href")), "")
            if points_outside(href):
                self._remove(element, "drop", ODF_LINK_ELEMENTS[namespace, local])
            return
        if (namespace, local) in DROPPED_ELEMENTS:
            self._remove(element, "drop", DROPPED_ELEMENTS[namespace, local])
            return
        if namespace in PML and local == "link":
            element.action = "drop"  # the target sits in a relationship, counted there
            return
        if namespace == VML_OFFICE and local == "OLEObject":
            if dict(element.attributes).get("Type", "").strip().lower() == "link":
                element.action = "drop"
            return
        if namespace in WML:
            self._word(element, local)
            if element.action != "keep":
                return
        kept: list[tuple[str, str]] = []
        for attribute, value in element.attributes:
            if attribute.rpartition(":")[2] not in WATCHED_ATTRIBUTES:
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
        if attr_ns == XML and attr_local == "base":
            return OTHER
        if attr_ns == XLINK and attr_local == "href" and points_outside(value):
            return ODF_HREF_KINDS.get((namespace, local), IMAGE_LINK if namespace == SVG else OTHER)
        if namespace == SVG and attr_local == "href" and attr_ns == "" and points_outside(value):
            return IMAGE_LINK
        if namespace == VML and attr_local in ("src", "href") and attr_ns in ("", VML_OFFICE):
            return IMAGE_LINK if points_outside(value) else None
        if attr_ns == VML_OFFICE and attr_local == "href" and points_outside(value):
            return IMAGE_LINK
        if _is_formula(namespace, local, attr_ns, attr_local) and reads_outside(value):
            return EXTERNAL_DATA
        return None

    def _relationship(self, element: _Open) -> None:
        values = dict(element.attributes)
        target = values.get("Target", "")
        external = values.get("TargetMode", "").strip().lower() == "external"
        type_name = values.get("Type", "").rstrip("/").rsplit("/", 1)[-1]
        if type_name == ALT_CHUNK and not external:
            element.action = "drop"  # its part is left out of the package; the altChunk counted
            return
        if external or points_outside(target, base=self._relationship_base()):
            kind = RELATIONSHIP_KINDS.get(type_name)
            if kind == HYPERLINK:
                # the link stays, pointing nowhere: LibreOffice lays its text out as before
                # (as one field: dropping it lets lines break elsewhere), the URL is gone
                element.attributes = [
                    (name, NOWHERE if name == "Target" else value)
                    for name, value in element.attributes
                ]
                self._remove(element, "rewrite", HYPERLINK)
            else:
                self._remove(element, "drop", kind or OTHER)

    def _relationship_base(self) -> str:
        return relationship_base(self._name)

    def _word(self, element: _Open, local: str) -> None:
        values = {key.rpartition(":")[2]: value for key, value in element.attributes}
        if local == "fldSimple":
            if _field_word(values.get("instr", "")) in FIELD_WORDS | {"HYPERLINK"}:
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
        elif local in ("instrText", "delInstrText") and self._fields and self._fields[-1].reading:
            self._instr = (element.start, self._fields[-1])

    def _judge_field(self, current: _Field) -> None:
        word = _field_word("".join(current.instruction))
        if word in FIELD_WORDS or word == "HYPERLINK":
            self._removed[HYPERLINK if word == "HYPERLINK" else FIELD] += 1
            for start, end in current.text_ranges:
                self._edits.append(_Edit(start, end, b""))

    def _remove(self, element: _Open, action: str, kind: str) -> None:
        element.action = action
        self._removed[kind] += 1


def _is_formula(namespace: str, local: str, attr_ns: str, attr_local: str) -> bool:
    """True for an ODF attribute holding a formula (a cell's, a named expression's, a
    condition's)."""
    if attr_local in ODF_FORMULA_ATTRIBUTES:
        return attr_ns.startswith(ODF) or attr_ns == CALC_EXT
    return attr_local == "value" and attr_ns == CALC_EXT and namespace == CALC_EXT


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


def relationship_base(rels_name: str) -> str:
    """The folder a relationship part's internal targets are relative to: `_rels/x.rels`
    belongs to `x` in the folder above."""
    folder = dirname(rels_name)
    folder = dirname(folder) if folder.endswith("_rels") else folder
    return folder or "."


def alt_chunk_parts(rels_name: str, content: bytes) -> set[str]:
    """The package parts a relationship part names as `altChunk` imports (their names as the
    package holds them); empty when there is none or the part cannot be read (the cleaner
    refuses such a part on its own)."""
    if ALT_CHUNK.encode() not in content:
        return set()
    found: set[str] = set()

    def start(_name: str, attributes: dict[str, str]) -> None:
        kind = attributes.get("Type", "").rstrip("/").rsplit("/", 1)[-1]
        if kind == ALT_CHUNK and attributes.get("TargetMode", "").lower() != "external":
            target = attributes.get("Target", "")
            path = target.lstrip("/") if target.startswith("/") else f"{base}/{target}"
            found.add(normpath(path).lstrip("/"))

    base = relationship_base(rels_name)
    parser = expat.ParserCreate()
    parser.StartElementHandler = start
    parser.EntityDeclHandler = _no_entities
    try:
        parser.Parse(content, True)
    except (expat.ExpatError, DocumentError):
        return set()
    return found


def _no_entities(*_args: object) -> None:
    raise DocumentError("a DTD")
