"""What the Python API hands back: chunks as `drac export` writes them, and search hits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from drac.documents.vision.verify import VerificationSummary, chunk_flags
from drac.local.verification import stored_verification
from drac.local.workspace import Workspace as LocalWorkspace
from drac.metadata import Metadata
from drac.models import Chunk
from drac.provenance import PageBoxes
from drac.retrieval.rank import Mode


@dataclass(frozen=True)
class ChunkView:
    """One active chunk with its document's metadata (and the verification flags of its
    pages, where a model's conversion was checked): one line of `drac export`."""

    chunk: Chunk
    metadata: Metadata = field(default_factory=dict)
    verification: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """Exactly what gets embedded: breadcrumb, a blank line, the elements verbatim."""
        return self.chunk.text

    @property
    def chunk_id(self) -> str:
        """The chunk's id (document, plan version, digest of its element ids)."""
        return self.chunk.chunk_id

    @property
    def document_id(self) -> str:
        """The id of the chunk's document (a digest of its content)."""
        return self.chunk.document_id

    @property
    def source(self) -> str:
        """The file name the document was ingested from."""
        return self.chunk.source

    @property
    def plan_version(self) -> int:
        """The plan version the chunk belongs to."""
        return self.chunk.plan_version

    @property
    def breadcrumb(self) -> str:
        """The headings the chunk's elements share, joined with ` >> `."""
        return self.chunk.breadcrumb

    @property
    def element_ids(self) -> tuple[str, ...]:
        """The ids of the elements the chunk is made of, in order."""
        return self.chunk.element_ids

    @property
    def pages(self) -> tuple[int, ...]:
        """The pages the chunk's elements are on."""
        return self.chunk.pages

    @property
    def boxes(self) -> tuple[PageBoxes, ...]:
        """Per page, the line boxes of the chunk's elements (PDF points, top-left origin)."""
        return self.chunk.boxes

    def to_dict(self) -> dict[str, Any]:
        """The chunk as one `drac export` line (JSON-ready)."""
        line = self.chunk.model_dump(mode="json")
        line["metadata"] = self.metadata
        if self.verification is not None:
            line["verification"] = self.verification
        return line


@dataclass(frozen=True)
class Hit(ChunkView):
    """A search result: a chunk, its score and its rank (1 is best)."""

    score: float = 0.0
    rank: int = 0
    mode: Mode = Mode.BM25

    def to_dict(self) -> dict[str, Any]:
        """The hit as `drac search --json` writes it."""
        line = {"rank": self.rank, "score": self.score, "mode": self.mode.value}
        return line | self.chunk.model_dump(mode="json") | {"metadata": self.metadata}


@dataclass(frozen=True)
class SearchResults:
    """The hits of one query, best first (iterable and indexable like a list)."""

    query: str
    mode: Mode
    hits: tuple[Hit, ...]
    note: str | None = None
    """Why the search fell back to BM25, when it did."""
    embedded: int = 0
    """Chunk and query texts embedded by this search (0 once everything is cached)."""

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]


def exported_chunks(ws: LocalWorkspace, document_id: str | None = None) -> Iterator[ChunkView]:
    """Every active chunk (of one document, or all) with its document's metadata and its
    pages' verification flags: what `drac export` writes, in the same order."""
    metadata = ws.document_metadata()
    checked: dict[str, VerificationSummary | None] = {}
    for chunk in ws.active_chunks(document_id):
        if chunk.document_id not in checked:
            checked[chunk.document_id] = stored_verification(ws, chunk.document_id)
        summary = checked[chunk.document_id]
        flags = chunk_flags(summary, chunk.pages, chunk.text) if summary is not None else None
        yield ChunkView(chunk, metadata.get(chunk.document_id, {}), flags)
