"""The reports `Workspace.ingest` and `Workspace.replan` return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drac.local.inputs import Skipped
from drac.local.outcome import Outcome
from drac.local.search import EmbedReport


@dataclass
class IngestReport:
    """Each input's outcome (status INDEXED, PARTIAL, UNCHANGED or FAILED, with its document
    id, pages, chunks, plan version, warnings and error), the folder entries skipped with
    their reasons, and what the embedding step did."""

    outcomes: list[Outcome] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    embedded: EmbedReport | None = None
    """The embedding step's report (None when it was off or had no embedder)."""
    embed_warning: str | None = None
    """Why the chunks were not embedded, when the embedder failed (search embeds later)."""

    @property
    def failed(self) -> list[Outcome]:
        """The outcomes that FAILED."""
        return [outcome for outcome in self.outcomes if outcome.failed]

    @property
    def ok(self) -> bool:
        """Whether no document failed."""
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        """The report as `drac ingest --json` writes it."""
        return {
            "outcomes": [outcome.model_dump(mode="json") for outcome in self.outcomes],
            "failed": len(self.failed),
            "skipped": len(self.skipped),
            "skipped_entries": [entry.model_dump(mode="json") for entry in self.skipped],
        }


@dataclass
class ReplanReport:
    """Each re-planned document's outcome; `stopped` says why the run ended early (a model
    server that cannot be reached), else it is empty."""

    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str = ""
    embedded: EmbedReport | None = None
    embed_warning: str | None = None

    @property
    def failed(self) -> list[Outcome]:
        """The outcomes that FAILED."""
        return [outcome for outcome in self.outcomes if outcome.failed]

    @property
    def ok(self) -> bool:
        """Whether every document was re-planned."""
        return not self.failed and not self.stopped
