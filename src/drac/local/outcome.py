"""What happened to one input file or one re-planned document, as the pipeline reports it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from drac.models import DocumentStatus
from drac.planning import PlanningCounts


class Outcome(BaseModel):
    """What happened to one input file or one re-planned document."""

    path: str
    document_id: str | None = None
    status: str
    pages: int = 0
    elements: int = 0
    chunks: int = 0
    plan_version: int | None = None
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    cpu_s: float | None = None  # CPU its parsers used, counted against its budget
    planning: PlanningCounts | None = None  # how the sections were planned (LLM strategies)
    kept_version: bool = False  # a re-plan stored nothing: the document keeps its plan
    reused_batches: int = 0  # conversion batches taken from the version the path held before

    @property
    def failed(self) -> bool:
        return self.status == DocumentStatus.FAILED.value
