"""What a report shows, as data: built from a workspace, rendered to HTML without it."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from drac.models import DocumentRecord, Strategy
from drac.provenance import PageBoxes


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


def hue(number: int) -> int:
    """A chunk's colour (HSL hue): neighbouring chunks far apart on the colour wheel."""
    return round(number * 137.508) % 360


class ChunkView(_View):
    """One chunk of a plan version, numbered from 1 in document order."""

    number: int
    chunk_id: str
    version: int
    breadcrumb: str
    element_ids: tuple[str, ...]
    content_ids: tuple[str, ...]
    chars: int
    pages: tuple[int, ...]
    text: str
    boxes: tuple[PageBoxes, ...] = ()
    flags: tuple[str, ...] = ()
    """What checking the conversion flagged in this chunk's text (unsupported tokens,
    suspect merged rows), empty when nothing or when it was not checked."""

    @property
    def hue(self) -> int:
        """The chunk's colour."""
        return hue(self.number)

    @property
    def first_page(self) -> int:
        """The page the chunk starts on."""
        return self.pages[0] if self.pages else 1


class ElementView(_View):
    """One stored element, with the chunk (of the shown version) holding it."""

    id: str
    kind: str
    page: int
    level: int | None
    chars: int
    text: str
    chunk: int | None


class NoteKind(StrEnum):
    """How serious a page note is."""

    ERROR = "error"
    PARTIAL = "partial"
    WARNING = "warning"
    VERIFICATION = "verification"


class PageNote(_View):
    """A conversion warning or error marker that belongs to one page."""

    kind: NoteKind
    text: str


class PageView(_View):
    """One page: its image (or Markdown text), its notes, and the chunks that start on it."""

    number: int
    image: str | None
    text: str | None
    notes: tuple[PageNote, ...]
    chunks: tuple[int, ...]
    continued: tuple[int, ...]
    size_pt: tuple[float, float] | None = None
    """The page's size in points, where its image is drawn (the chunks' boxes are in it)."""


class ChangeKind(StrEnum):
    """What happened to a group of chunks between two plan versions."""

    UNCHANGED = "unchanged"
    SPLIT = "split"
    MERGED = "merged"
    NEW = "new"
    REMOVED = "removed"


class ChangeGroup(_View):
    """Chunks of the two versions that share elements, and what changed between them."""

    kind: ChangeKind
    left: tuple[int, ...]
    right: tuple[int, ...]


class Comparison(_View):
    """Two plan versions side by side."""

    left_version: int
    right_version: int
    left: tuple[ChunkView, ...]
    right: tuple[ChunkView, ...]
    groups: tuple[ChangeGroup, ...]

    def count(self, kind: ChangeKind) -> int:
        """Groups of one kind."""
        return sum(1 for group in self.groups if group.kind is kind)


class DocumentView(_View):
    """Everything the report shows of one document."""

    record: DocumentRecord
    file_name: str
    version: int
    strategy: Strategy
    versions: tuple[int, ...]
    chunks: tuple[ChunkView, ...]
    elements: tuple[ElementView, ...]
    pages: tuple[PageView, ...]
    page_source: str
    notes: tuple[PageNote, ...]
    comparison: Comparison | None = None
    problem: str | None = None
    """What the report could not show of the document (its page images), if anything."""


class IndexRow(_View):
    """One document's line on the index page."""

    source: str
    document_id: str
    file_name: str | None
    format: str
    status: str
    pages: int
    chunks: int
    version: int | None
    warnings: int
    note: str
    problem: str = ""
    """What the report could not show of the document, and why."""
