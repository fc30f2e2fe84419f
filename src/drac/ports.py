"""Ports: the small interfaces through which every stage does I/O.

Each runtime supplies adapters: `drac.local` (workspace folder + SQLite) and `drac.aws`
(S3, DynamoDB, Bedrock, OpenSearch Serverless). Stages only ever see these interfaces.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from drac.models import (
    Chunk,
    DocumentRecord,
    DocumentStatus,
    Element,
    LedgerEntry,
    PlanVersion,
    SectionPlan,
    TokenUsage,
)


class ModelReply(BaseModel):
    """What a model call returned, with its cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    model: str
    usage: TokenUsage = TokenUsage()
    latency_ms: float = 0.0
    finish_reason: str | None = Field(
        default=None, description="why generation stopped, as the API says it (None: not said)"
    )

    @property
    def cut_off(self) -> bool:
        """True when the answer stopped at the token cap (OpenAI `length`, Bedrock
        `max_tokens`): it is incomplete, whatever it looks like."""
        return self.finish_reason in ("length", "max_tokens")


Exchange = tuple[str, str]
"""One earlier turn of a conversation: the user's prompt and the model's answer to it."""


class TextModel(ABC):
    """A chat model that answers a text prompt (used by the LLM planner).

    `schema` (a JSON Schema of an object) asks for an answer of that shape where the backend
    can enforce one (`structured_output` says whether this client can); `grammar` (GBNF) is
    the same shape, stricter, for a backend that takes grammars (llama.cpp's server);
    `earlier` holds the turns before `prompt`, so a repair turn shows the model its own answer.
    """

    name: str
    structured_output: bool = False
    max_answer_tokens: int = 1024

    @abstractmethod
    def complete(
        self,
        system: str,
        prompt: str,
        max_tokens: int = 2048,
        *,
        schema: Mapping[str, Any] | None = None,
        grammar: str | None = None,
        earlier: Sequence[Exchange] = (),
    ) -> ModelReply:
        """Return the model's answer to one prompt."""


class VisionModel(ABC):
    """A multimodal model that turns page images into Markdown."""

    name: str

    @abstractmethod
    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        """Return the model's Markdown for a batch of PNG page images."""

    def convert_carefully(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        """`convert` again after an answer that looped: with a repetition penalty where the
        backend takes one (this default asks the same way)."""
        return self.convert(system, prompt, images)


class Embedder(ABC):
    """Turns texts into dense vectors."""

    name: str
    dimension: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text, in order."""


class ArtifactStore(ABC):
    """Blob storage for sources, page images, Markdown and plan files."""

    @abstractmethod
    def put_bytes(self, key: str, data: bytes) -> None:
        """Store bytes under key, atomically replacing any previous value."""

    @abstractmethod
    def get_bytes(self, key: str) -> bytes:
        """Return the bytes stored under key; KeyError when absent."""

    def put_text(self, key: str, text: str) -> None:
        """Store UTF-8 text under key."""
        self.put_bytes(key, text.encode("utf-8"))

    def get_text(self, key: str) -> str:
        """Return the UTF-8 text stored under key."""
        return self.get_bytes(key).decode("utf-8")


class ElementTable(ABC):
    """Ordered, ID-addressed elements of each document, stored once."""

    @abstractmethod
    def put_elements(self, document_id: str, elements: Sequence[Element]) -> None:
        """Replace the document's elements with these, in order."""

    @abstractmethod
    def get_elements(self, document_id: str) -> list[Element]:
        """Return the document's elements in document order."""


class PlanStore(ABC):
    """Numbered plan versions per document, one of them active."""

    @abstractmethod
    def save_plan(self, plan: PlanVersion) -> None:
        """Store a new plan version (never overwrites another version)."""

    @abstractmethod
    def get_plan(self, document_id: str, version: int) -> PlanVersion:
        """Return one stored plan version; KeyError when absent."""

    @abstractmethod
    def latest_version(self, document_id: str) -> int:
        """Return the highest stored version number, 0 when none."""


class PlanCache(ABC):
    """Section plans keyed by section content and strategy, so unchanged work costs nothing."""

    @abstractmethod
    def get(self, key: str) -> SectionPlan | None:
        """Return the cached plan for key, if any."""

    @abstractmethod
    def put(self, key: str, plan: SectionPlan) -> None:
        """Remember a plan under key."""


class Ledger(ABC):
    """Records every model call's tokens, latency and outcome."""

    @abstractmethod
    def record(self, entry: LedgerEntry) -> None:
        """Append one entry."""


class SearchHit(BaseModel):
    """One search result."""

    model_config = ConfigDict(frozen=True)

    chunk: Chunk
    score: float
    metadata: dict[str, str | int | float | bool | list[str]] = Field(
        default_factory=dict, description="the chunk's document's metadata"
    )


class ChunkIndex(ABC):
    """The searchable index of chunks; every chunk carries its document and plan version."""

    @abstractmethod
    def upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]] | None = None,
        metadata: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Add chunks, replacing any stored copy of the same chunk_id (safe to repeat);
        `metadata` (by document id) is stored with them where the index itself filters on
        it (OpenSearch; the local index filters on the documents table)."""

    @abstractmethod
    def delete(self, document_id: str, plan_version: int | None = None) -> int:
        """Remove a document's chunks of one plan version, or all of them; return how many."""

    @abstractmethod
    def delete_other_versions(self, document_id: str, keep_version: int) -> int:
        """Remove a document's chunks of every plan version but `keep_version`; return how
        many (this retires old versions and leftovers of failed ones in one sweep)."""

    @abstractmethod
    def search(self, query: str, k: int = 6) -> list[SearchHit]:
        """Return the k best chunks for a query."""


class SourceClaim(BaseModel):
    """What recording an upload of a source (an object key or a file path) did."""

    model_config = ConfigDict(frozen=True)

    claimed: bool
    """False when a later upload of the source is already recorded (this one is stale)."""
    previous: str | None = None
    """The other document the source named before, when it changed."""


class DocumentRegistry(ABC):
    """Document records and their sources: a document is content; sources are the keys or
    paths holding that content. The latest upload of a source wins, by its order."""

    @abstractmethod
    def get(self, document_id: str) -> DocumentRecord | None:
        """Return the document's record, or None."""

    @abstractmethod
    def put(self, record: DocumentRecord) -> None:
        """Store the record (created_at kept, updated_at set now)."""

    @abstractmethod
    def activate(
        self,
        document_id: str,
        version: int,
        status: DocumentStatus,
        *,
        owner: str | None = None,
    ) -> DocumentRecord | None:
        """Make `version` the active plan and set `status`, if the document still allows it:
        not DELETED, owned by `owner` when one is given (an ingest run) or live when not (a
        re-plan), and `version` newer than the active one. Return the record, or None."""

    @abstractmethod
    def mark_deleted(self, document_id: str) -> None:
        """Set the document DELETED with no active version and no owner."""

    @abstractmethod
    def claim_source(self, source: str, document_id: str, order: str) -> SourceClaim:
        """Record that `source` now holds `document_id`, unless an upload with a later or
        equal `order` is recorded (orders compare as strings; the same order claims again)."""

    @abstractmethod
    def release_source(self, source: str, order: str) -> str | None:
        """Forget `source` if no later upload is recorded; return the document it held."""

    @abstractmethod
    def sources_of(self, document_id: str) -> list[str]:
        """The sources that hold the document now, sorted."""


class MemoryLedger(Ledger):
    """A ledger that keeps its entries in a list (for tests and one-off runs)."""

    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []

    def record(self, entry: LedgerEntry) -> None:
        """Append one entry to `entries`."""
        self.entries.append(entry)
