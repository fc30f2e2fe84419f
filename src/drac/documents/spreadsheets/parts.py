"""What openpyxl's read-only mode does not load from an XLSX package: each worksheet's part
and the merged ranges it declares (after its cells, so a streaming reader meets them last)."""

from __future__ import annotations

import posixpath
import re
import zipfile
from xml.etree import ElementTree

from openpyxl.utils.cell import range_boundaries

_REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_DOC_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_OFFICE_DOCUMENT = "/officeDocument"
_MERGE = re.compile(
    rb"<(?:[A-Za-z_][\w.-]*:)?mergeCell\b[^>]*?\bref=\"([A-Za-z]{1,3}\d+(?::[A-Za-z]{1,3}\d+)?)\""
)
_BLOCK = 1 << 20
_OVERLAP = 512

MergedRange = tuple[int, int, int, int]
"""(first row, first column, last row, last column), 1-based and inclusive."""


def sheet_parts(archive: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> path of its part in the package, through the package relationships."""
    workbook = _target(archive, "_rels/.rels", "", _OFFICE_DOCUMENT) or "xl/workbook.xml"
    folder = posixpath.dirname(workbook)
    rels_path = posixpath.join(folder, "_rels", posixpath.basename(workbook) + ".rels")
    targets = _relationships(archive, rels_path, folder)
    root = ElementTree.fromstring(archive.read(workbook))
    parts: dict[str, str] = {}
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] == "sheet":
            target = targets.get(element.get(_DOC_REL, ""))
            if target:
                parts[element.get("name", "")] = target
    return parts


def merged_ranges(archive: zipfile.ZipFile, part: str) -> list[MergedRange]:
    """The merged ranges a worksheet part declares (a scan of its bytes, in bounded memory)."""
    refs: set[bytes] = set()
    tail = b""
    with archive.open(part) as stream:
        while block := stream.read(_BLOCK):
            window = tail + block
            refs.update(match.group(1) for match in _MERGE.finditer(window))
            tail = window[-_OVERLAP:]
    ranges: list[MergedRange] = []
    for ref in sorted(refs):
        first_col, first_row, last_col, last_row = range_boundaries(ref.decode("ascii"))
        if first_col and first_row and last_col and last_row:
            ranges.append((first_row, first_col, last_row, last_col))
    return ranges


def _target(archive: zipfile.ZipFile, rels_path: str, folder: str, kind: str) -> str | None:
    if rels_path not in archive.namelist():
        return None
    root = ElementTree.fromstring(archive.read(rels_path))
    for rel in root.iter(f"{_REL_NS}Relationship"):
        if rel.get("Type", "").endswith(kind):
            return _resolve(folder, rel.get("Target", ""))
    return None


def _relationships(archive: zipfile.ZipFile, rels_path: str, folder: str) -> dict[str, str]:
    if rels_path not in archive.namelist():
        return {}
    root = ElementTree.fromstring(archive.read(rels_path))
    return {
        rel.get("Id", ""): _resolve(folder, rel.get("Target", ""))
        for rel in root.iter(f"{_REL_NS}Relationship")
    }


def _resolve(folder: str, target: str) -> str:
    if target.startswith("/"):
        return target.lstrip("/")
    return posixpath.normpath(posixpath.join(folder, target))
