"""What the XML cleaner removes: the namespaces, elements and attributes that point outside a
package (OOXML in its transitional and strict namespaces, ODF, SVG, VML, XInclude)."""

from __future__ import annotations

from drac.documents.sandbox.references.kinds import (
    EXTERNAL_DATA,
    FRAME,
    HYPERLINK,
    IMAGE_LINK,
    LINKED_DOCUMENT,
    LINKED_OBJECT,
    OTHER,
)

XLINK = "http://www.w3.org/1999/xlink"
XML = "http://www.w3.org/XML/1998/namespace"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_STRICT = "http://purl.oclc.org/ooxml/"
PML = frozenset(
    {"http://schemas.openxmlformats.org/presentationml/2006/main", _STRICT + "presentationml/main"}
)
WML = frozenset(
    {
        "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
        _STRICT + "wordprocessingml/main",
    }
)
SML = frozenset(
    {"http://schemas.openxmlformats.org/spreadsheetml/2006/main", _STRICT + "spreadsheetml/main"}
)
"""OOXML's main namespaces, transitional and strict (ISO/IEC 29500 strict renames every
namespace but the package's own; LibreOffice reads both)."""
EXCEL_2006 = "http://schemas.microsoft.com/office/excel/2006/main"
"""`xm:f`: formulas of conditional formats and validations in a sheet's extensions."""
VML = "urn:schemas-microsoft-com:vml"
SVG = "http://www.w3.org/2000/svg"
VML_OFFICE = "urn:schemas-microsoft-com:office:office"
ODF = "urn:oasis:names:tc:opendocument:xmlns:"
ODF_TABLE = ODF + "table:1.0"
ODF_TEXT = ODF + "text:1.0"
ODF_OFFICE = ODF + "office:1.0"
ODF_DRAW = ODF + "drawing:1.0"
CALC_EXT = "urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0"
XHTML = "http://www.w3.org/1999/xhtml"

NOWHERE = "about:blank"
"""What a hyperlink's target becomes: no content provider opens it."""
ALT_CHUNK = "aFChunk"
"""The relationship type of a Word `altChunk`: a part in another format imported whole."""
RELATIONSHIP_KINDS = {
    "oleObject": LINKED_OBJECT,
    "package": LINKED_OBJECT,
    "image": IMAGE_LINK,
    "attachedTemplate": LINKED_DOCUMENT,
    "subDocument": LINKED_DOCUMENT,
    ALT_CHUNK: LINKED_DOCUMENT,
    "frame": FRAME,
    "hyperlink": HYPERLINK,
    "externalLinkPath": EXTERNAL_DATA,
    "externalLink": EXTERNAL_DATA,
    "video": LINKED_OBJECT,
    "audio": LINKED_OBJECT,
    "media": LINKED_OBJECT,
}
ODF_HREF_KINDS = {
    (ODF_DRAW, "object"): LINKED_OBJECT,
    (ODF_DRAW, "object-ole"): LINKED_OBJECT,
    (ODF_DRAW, "image"): IMAGE_LINK,
    (ODF_DRAW, "fill-image"): IMAGE_LINK,
    (ODF + "style:1.0", "background-image"): IMAGE_LINK,
    (ODF_TEXT, "list-level-style-image"): IMAGE_LINK,
    (ODF_TEXT, "a"): HYPERLINK,
    (ODF_DRAW, "a"): HYPERLINK,
    (ODF_DRAW, "floating-frame"): FRAME,
}
ODF_DROPPED = {
    (ODF_DRAW, "applet"): FRAME,
    (ODF_DRAW, "plugin"): FRAME,
    (ODF_TABLE, "dde-source"): EXTERNAL_DATA,
    (ODF_TABLE, "dde-link"): EXTERNAL_DATA,
    (ODF_TABLE, "dde-links"): EXTERNAL_DATA,
    (ODF_OFFICE, "dde-source"): EXTERNAL_DATA,
    (ODF_TEXT, "dde-connection-decl"): EXTERNAL_DATA,
    (ODF_TEXT, "dde-connection"): EXTERNAL_DATA,
}
ODF_FORMULA_ATTRIBUTES = frozenset({"formula", "expression", "condition"})
"""ODF attributes holding a formula: a cell's, a named expression's, a conditional style's
or a validation's condition."""
WATCHED_ATTRIBUTES = frozenset({"href", "base", "src"}) | ODF_FORMULA_ATTRIBUTES | {"value"}
"""The local names of every attribute the cleaner may remove (`value`: a calcext
condition's formula)."""
DROPPED_ELEMENTS = {
    ("http://www.w3.org/2001/XInclude", "include"): OTHER,
    **{(ns, "altChunk"): LINKED_DOCUMENT for ns in WML},  # another format, imported whole
    **{(ns, "webPr"): EXTERNAL_DATA for ns in SML},  # a web query's URL
}
FORMULA_ELEMENTS = frozenset(
    {(ns, local) for ns in SML for local in ("f", "definedName", "formula", "formula1", "formula2")}
    | {(EXCEL_2006, "f")}
)
"""Elements whose text is a formula: a cell's, a defined name's, a conditional format's or a
validation's (in the sheet and in its extensions)."""
ODF_LINK_ELEMENTS = {
    (ODF_TEXT, "section-source"): LINKED_DOCUMENT,
    (ODF_TABLE, "table-source"): EXTERNAL_DATA,
    (ODF_TABLE, "cell-range-source"): EXTERNAL_DATA,
}
"""Elements that are nothing but a link to another file: they go whole (a sheet still marked
as linked is emptied by LibreOffice)."""
FIELD_WORDS = frozenset(
    {"INCLUDETEXT", "INCLUDEPICTURE", "INCLUDE", "LINK", "IMPORT", "DDE", "DDEAUTO", "DATABASE"}
)
