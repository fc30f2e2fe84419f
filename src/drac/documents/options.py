"""Settings of stages 1 and 2 (a light module: the CLI and the runtimes read them without
importing the converters)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from drac.documents.pdf.render import RenderOptions
from drac.documents.sandbox.containment.budget import (
    DOCUMENT_CPU_S,
    DOCUMENT_CPU_S_PER_MIB,
    budget_for,
)

ESCALATE_FLAGS = 0
"""Default escalation threshold: a page with more verification flags than this is converted
again by the second model. A faithful conversion flags nothing (BENCHMARKS.md, Escalation:
every honest page of the scripted run had 0 flags; every invented number, dropped row or
merged row at least 1)."""


class ConversionOptions(BaseModel):
    """Settings of stages 1 and 2 (defaults are the method's)."""

    batch_pages: int = Field(default=5, ge=1, le=20)
    max_in_flight: int = Field(default=5, ge=1, le=64)
    dpi: int = Field(default=200, ge=36, le=600)
    max_side_px: int = Field(default=1568, ge=64, le=8000)
    libreoffice_timeout_s: float = Field(default=180, gt=0)
    max_pages: int = Field(default=5000, ge=1)
    max_file_bytes: int = Field(default=500 * 1024 * 1024, ge=1)
    batch_attempts: int = Field(default=2, ge=1, le=5, description="tries per batch on bad answers")
    cpu_budget_s: float | None = Field(
        default=DOCUMENT_CPU_S,
        gt=0,
        description="CPU seconds a document's parsers may use in all, plus cpu_budget_s_per_mib"
        " a MiB of the file (None: no budget)",
    )
    cpu_budget_s_per_mib: float = Field(default=DOCUMENT_CPU_S_PER_MIB, ge=0)
    verify_scans: bool = Field(
        default=True,
        description="check a vision model's pages without a text layer against OCR (when the "
        "ocr extra is installed; seconds a page)",
    )

    def cpu_budget(self, size_bytes: int) -> float | None:
        """The CPU budget of a document of `size_bytes` (None: no budget)."""
        return budget_for(size_bytes, self.cpu_budget_s, self.cpu_budget_s_per_mib)

    def render_options(self) -> RenderOptions:
        """Return the rendering settings these options imply."""
        return RenderOptions(dpi=self.dpi, max_side_px=self.max_side_px, max_pages=self.max_pages)
