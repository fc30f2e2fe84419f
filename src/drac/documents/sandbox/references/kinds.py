"""What the sanitizer removes, by kind, and the one warning that names it on the document."""

from __future__ import annotations

from collections import Counter

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


def removal_warning(removed: Counter[str]) -> str | None:
    """The document warning for `removed` (kind -> count), or None when it is empty."""
    removed = +removed  # kinds counted zero times are not named
    total = sum(removed.values())
    if not total:
        return None
    kinds = sorted(removed, key=lambda kind: (_order(kind), kind))
    parts = ", ".join(_counted(removed[kind], kind) for kind in kinds)
    noun = "reference" if total == 1 else "references"
    only_links = set(removed) == {HYPERLINK}
    why = (
        "their text is kept"
        if only_links
        else "they could read files of the machine or reach the network"
    )
    return f"removed {total} external {noun} ({parts}) before conversion: {why}"


def _order(kind: str) -> int:
    return _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)


def _counted(count: int, kind: str) -> str:
    return f"{count} {kind if count == 1 else _PLURALS.get(kind, kind)}"
