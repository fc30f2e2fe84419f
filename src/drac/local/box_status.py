"""How many of each document's elements were placed on their page (`drac status`, `show`)."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from drac.local.workspace import Workspace
from drac.models import Element
from drac.provenance import BoxStatus


class BoxCounts(BaseModel):
    """Elements by how much of their text was found on their page (`BoxStatus`); elements of
    a document without pages are not counted."""

    model_config = ConfigDict(frozen=True)

    aligned: int = 0
    partial: int = 0
    not_aligned: int = 0

    @property
    def boxed(self) -> int:
        """Elements that carry boxes (aligned, or partly)."""
        return self.aligned + self.partial

    @property
    def placed(self) -> int:
        """Elements placed at all (with or without boxes)."""
        return self.boxed + self.not_aligned


class PageBoxCounts(BoxCounts):
    """One page's counts, with the ids of its elements that carry no box."""

    page: int
    unaligned_ids: tuple[str, ...] = ()


def workspace_box_counts(ws: Workspace) -> dict[str, BoxCounts]:
    """Every document's counts, by document id, in one query over the stored elements
    (documents whose elements carry no boxes are absent)."""
    # a damaged element row is skipped here (json_valid first): `drac show` and `check` name it
    rows = ws.db.query(
        "SELECT document_id, status, count(*) AS n FROM (SELECT document_id, CASE WHEN"
        " json_valid(data) THEN json_extract(data, '$.boxes.status') END AS status"
        " FROM elements) WHERE status IS NOT NULL GROUP BY document_id, status"
    )
    known = {status.value for status in BoxStatus}
    found: dict[str, dict[str, int]] = {}
    for row in rows:
        if row["status"] in known:
            found.setdefault(row["document_id"], {})[row["status"]] = int(row["n"])
    return {document: BoxCounts(**counts) for document, counts in found.items()}


def page_box_counts(elements: Iterable[Element]) -> list[PageBoxCounts]:
    """Per page an element starts on, how many of its elements carry boxes or none, in page
    order (pages of elements never placed are absent)."""
    pages: dict[int, dict[str, int]] = {}
    unaligned: dict[int, list[str]] = {}
    for element in elements:
        if element.boxes is None:
            continue
        counts = pages.setdefault(element.page, {})
        status = element.boxes.status.value
        counts[status] = counts.get(status, 0) + 1
        if element.boxes.status is BoxStatus.NOT_ALIGNED:
            unaligned.setdefault(element.page, []).append(element.id)
    return [
        PageBoxCounts(page=page, unaligned_ids=tuple(unaligned.get(page, ())), **pages[page])
        for page in sorted(pages)
    ]
