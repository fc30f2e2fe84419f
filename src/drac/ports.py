"""Ports: the small interfaces through which every stage does I/O.

Each runtime supplies adapters: `drac.local` (workspace folder + SQLite) and `drac.aws`
(S3, DynamoDB, Bedrock, OpenSearch Serverless). Stages only ever see these interfaces.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from drac.models import Chunk, Element, LedgerEntry, PlanVersion, SectionPlan, TokenUsage


class ModelReply(BaseModel):
    """What a model call returned, with its cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    model: str
    usage: TokenUsage = TokenUsage()
    latency_ms: float = 0.0


class ModelCallError(RuntimeError):
    """A model call failed after its retries; the message says why."""


class TextModel(ABC):
    """A chat model that answers a text prompt (used by the LLM planner)."""

    name: str

    @abstractmethod
    def complete(self, system: str, prompt: str, max_tokens: int = 2048) -> ModelReply:
        """Return the model's answer to one prompt."""


class VisionModel(ABC):
    """A multimodal model that turns page images into Markdown."""

    name: str

    @abstractmethod
    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        """Return the model's Markdown for a batch of PNG page images."""


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


class ChunkIndex(ABC):
    """The searchable index of active chunks."""

    @abstractmethod
    def upsert(
        self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]] | None = None
    ) -> None:
        """Add or replace chunks (by chunk_id)."""

    @abstractmethod
    def delete(self, document_id: str, plan_version: int | None = None) -> int:
        """Remove a document's chunks (one plan version, or all); return how many."""

    @abstractmethod
    def search(self, query: str, k: int = 6) -> list[SearchHit]:
        """Return the k best chunks for a query."""


class NullLedger(Ledger):
    """A ledger that keeps entries in memory (for tests and one-off runs)."""

    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []

    def record(self, entry: LedgerEntry) -> None:
        self.entries.append(entry)
