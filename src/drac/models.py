"""Pydantic models for every payload that crosses a stage or runtime boundary."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from drac.provenance import ElementBoxes, PageBoxes


class Frozen(BaseModel):
    """Base for immutable value objects."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ElementKind(StrEnum):
    """What an element of the parsed Markdown is."""

    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST = "list"
    CODE = "code"
    QUOTE = "quote"
    TABLE_ROW = "table_row"
    HTML = "html"


class Element(Frozen):
    """One ID-addressed piece of a document's Markdown, text kept verbatim."""

    id: str = Field(description="h<N> for headings, p<N> for content, p<N>.<M> for split pieces")
    kind: ElementKind
    text: str = Field(description="exact slice of the document's Markdown")
    page: int = Field(ge=1, description="1-based page the element starts on")
    level: int | None = Field(default=None, description="heading level 1-6 for headings")
    ancestors: tuple[str, ...] = Field(
        default=(), description="IDs of enclosing headings, outermost first"
    )
    table_id: str | None = Field(default=None, description="ID shared by the rows of one table")
    table_header: str | None = Field(
        default=None, description="header and separator lines of the row's table, verbatim"
    )
    boxes: ElementBoxes | None = Field(
        default=None,
        description="where the text is on its PDF page (drac.provenance); absent when the "
        "document has no pages to align to",
    )

    @model_serializer(mode="wrap")
    def _absent_boxes_left_out(self, handler: SerializerFunctionWrapHandler) -> object:
        data = handler(self)
        if self.boxes is None and isinstance(data, dict):
            data.pop("boxes", None)  # documents without pages store what they stored before
        return data

    @property
    def is_heading(self) -> bool:
        return self.kind is ElementKind.HEADING

    @property
    def title(self) -> str:
        """Heading text without Markdown markers (the element text for non-headings)."""
        if not self.is_heading:
            return self.text
        text = self.text.strip()
        first = text.splitlines()[0] if text else ""
        if first.startswith("#"):
            first = first.lstrip("#").strip()
            stripped = first.rstrip("#")
            if stripped != first and (not stripped or stripped.endswith(" ")):
                first = stripped.strip()
        return first


class Section(Frozen):
    """A run of elements small enough for one planner call, with its heading context."""

    id: str
    element_ids: tuple[str, ...]
    heading_chain: tuple[str, ...] = Field(
        default=(), description="IDs of ancestor headings that are not inside the section"
    )
    content_hash: str = Field(
        description="digest of the section's element texts and strategy-free context"
    )


class ParsedDocument(BaseModel):
    """A document's Markdown (LF line endings), elements and planner sections."""

    model_config = ConfigDict(frozen=True)

    markdown: str
    elements: tuple[Element, ...]
    sections: tuple[Section, ...]


TableRows = Literal["pipe", "sentences"]
"""How a table row is written: a pipe-table row under its header, or a sentence."""


class Strategy(Frozen):
    """How to plan chunks: planner choice and size policy."""

    name: str = "default"
    planner: Literal["rules", "llm"] = Field(default="rules", description="'rules' or 'llm'")
    # Defaults chosen by bench/strategy_sweep.py (BENCHMARKS.md, "Choosing the default chunk size").
    target_chars: int = Field(default=1100, ge=100, description="chunk size aimed at")
    hard_limit_chars: int = Field(default=2000, ge=200, description="never exceeded")
    min_chars: int = Field(
        default=700, ge=0, description="a heading boundary closes a chunk only past this"
    )
    max_blocks: int = Field(
        default=8, ge=1, description="content blocks per chunk (a table counts once)"
    )
    section_budget: int = Field(default=60, ge=5, description="content elements per planner call")
    preview_chars: int = Field(
        default=120,
        ge=40,
        le=400,
        description="planner preview length (half right after a heading)",
    )
    planner_model: str | None = Field(
        default=None,
        description="the LLM planner's model id on the backend (default: the settings' "
        "planning model); part of the plan cache key",
    )
    table_rows: TableRows = Field(
        default="pipe",
        description="table rows (spreadsheets, and the tables of converted documents) as "
        "pipe-table rows or 'Column: value; ...' sentences (written at ingest; a re-plan "
        "keeps the stored elements)",
    )
    hold_back_flags: int | None = Field(
        default=None,
        ge=0,
        description="pages of a vision model's conversion with more verification flags than "
        "this are not indexed (error markers; the document is PARTIAL); None indexes all",
    )

    @model_validator(mode="after")
    def _sizes_are_ordered(self) -> Strategy:
        if self.target_chars > self.hard_limit_chars:
            raise ValueError("target_chars must not exceed hard_limit_chars")
        if self.min_chars > self.target_chars:
            raise ValueError("min_chars must not exceed target_chars")
        return self


class ParseConfig(Frozen):
    """Parser settings; elements longer than max_element_chars are split into pieces."""

    max_element_chars: int = Field(default=1200, ge=100)
    max_elements: int = Field(
        default=500_000,
        ge=1,
        description="a document with more elements fails (each costs about 1.5 KB of memory "
        "while parsed: a file of tiny headings could otherwise exhaust it)",
    )


class TokenUsage(Frozen):
    """Tokens a model call consumed."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class PlanIssues(Frozen):
    """What validation had to repair in a planner's answer."""

    unknown_ids: tuple[str, ...] = ()
    duplicate_ids: tuple[str, ...] = ()
    missing_ids: tuple[str, ...] = ()
    split_chunks: int = 0
    fell_back_to_rules: bool = False
    reason: str | None = None
    repaired: bool = Field(default=False, description="the answer came in a repair turn")
    failed_answer: str | None = Field(
        default=None, description="the start of the last unusable model answer (for `drac show`)"
    )

    @property
    def clean(self) -> bool:
        return not (
            self.unknown_ids
            or self.duplicate_ids
            or self.missing_ids
            or self.split_chunks
            or self.fell_back_to_rules
        )


class SectionPlan(Frozen):
    """The validated chunk plan of one section: arrays of element IDs."""

    section_id: str
    chunks: tuple[tuple[str, ...], ...]
    planner: str
    model: str | None = None
    usage: TokenUsage = TokenUsage()
    issues: PlanIssues = PlanIssues()
    cached: bool = False


class PlanVersion(Frozen):
    """One numbered plan of a whole document."""

    document_id: str
    version: int = Field(ge=1)
    strategy: Strategy
    sections: tuple[SectionPlan, ...]
    created_at: str

    @property
    def chunk_ids_arrays(self) -> list[tuple[str, ...]]:
        return [chunk for section in self.sections for chunk in section.chunks]

    @property
    def usage(self) -> TokenUsage:
        total = TokenUsage()
        for section in self.sections:
            total = total + section.usage
        return total


class Chunk(Frozen):
    """A retrieval-ready chunk; `text` is exactly what gets embedded."""

    document_id: str
    source: str
    chunk_id: str
    plan_version: int
    text: str
    breadcrumb: str
    element_ids: tuple[str, ...]
    pages: tuple[int, ...]
    tenant: str | None = None
    boxes: tuple[PageBoxes, ...] = Field(
        default=(),
        description="per page, the line boxes of the chunk's elements (drac.provenance); "
        "never part of `text`",
    )
    unaligned: tuple[str, ...] = Field(
        default=(), description="content element ids whose text was not (fully) found on a page"
    )


class DocumentStatus(StrEnum):
    """Lifecycle of a document."""

    REGISTERED = "REGISTERED"
    CONVERTED = "CONVERTED"
    INDEXED = "INDEXED"
    PARTIAL = "PARTIAL"
    FAILED = "FAILED"
    DELETED = "DELETED"


class VerificationCounts(Frozen):
    """A document's verification in counts, as its record keeps it (the flagged tokens stay in
    the stored summary: a record's size must not grow with what a model wrote)."""

    pages_checked: int = Field(ge=0, description="pages compared with their own text")
    flagged_pages: int = Field(ge=0, description="pages with at least one flag")
    unsupported: int = Field(ge=0, description="tokens the model wrote that the page lacks")
    missing: int = Field(ge=0, description="tokens of the page the model dropped")
    suspect_rows: int = Field(ge=0, description="table rows whose values do not co-occur")
    held_back: int = Field(ge=0, description="pages not indexed for their flags")


class PageEscalation(Frozen):
    """A page the first vision model converted doubtfully, converted again by a second one."""

    page: int = Field(ge=1)
    reason: str = Field(description="why it was escalated: its flags, or its failure")
    first_model: str
    second_model: str
    model: str = Field(description="the model whose answer the page kept")
    flags_before: int | None = Field(description="the first answer's flags (None: it failed)")
    flags_after: int | None = Field(description="the second answer's flags (None: it failed)")


class DocumentRecord(BaseModel):
    """What the system knows about one ingested document."""

    model_config = ConfigDict(extra="forbid")

    document_id: str
    source: str = Field(description="file name of the ingested source")
    source_path: str | None = None
    sha256: str
    tenant: str | None = None
    format: str = "markdown"
    status: DocumentStatus = DocumentStatus.REGISTERED
    pages: int = 0
    active_version: int | None = None
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None
    conversion_failures: int = Field(
        default=0, ge=0, description="page batches that became error markers (PARTIAL)"
    )
    attempt: int = Field(default=0, ge=0, description="ingest attempts of this content")
    table_rows: TableRows | None = Field(
        default=None,
        description="how the stored elements write table rows (the ingest's option; None: "
        "recorded by no ingest, pipe unless a spreadsheet's rows say otherwise)",
    )
    owner: str | None = Field(
        default=None, description="the run ingesting the document now (cloud: its execution)"
    )
    metadata: dict[str, str | int | float | bool | list[str]] = Field(
        default_factory=dict,
        description="the document's own metadata (sidecar, --meta, S3 user metadata), checked "
        "by drac.metadata; filterable at search",
    )
    verification: VerificationCounts | None = Field(
        default=None,
        description="how a vision model's pages compared with their text (None: not checked, "
        "e.g. converted offline); the tokens are in the stored summary",
    )
    created_at: str = ""
    updated_at: str = ""

    @property
    def live(self) -> bool:
        """True when the document's active chunks may be searched."""
        return self.status in (DocumentStatus.INDEXED, DocumentStatus.PARTIAL)


class LedgerEntry(Frozen):
    """One model call, for the token and cost ledger."""

    document_id: str
    stage: str = Field(description="conversion, planning or embedding")
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    outcome: str = "ok"
    at: str = ""
