"""The cost report: ledger tokens and dollars per document and stage, the agentic-chunking
equivalent, and projections per million pages.

Agentic equivalent (the paper's way of counting): an LLM reads the document and writes it
back out as chunks, so its input AND output are the document text, at 4 characters per token,
priced at the table's `agentic_model`. Projections scale the cost per page to 1,000,000
pages; a document with no page count counts as one page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from drac.costs.models import EscalationCost, ModelCost, conversion_by_model, escalation_cost
from drac.costs.prices import PriceTable
from drac.documents.vision.incremental import is_reused
from drac.models import DocumentRecord, LedgerEntry

STAGES = ("conversion", "planning", "embedding")
CHARS_PER_TOKEN = 4
PROJECTION_PAGES = 1_000_000


class StageCost(BaseModel):
    """Tokens, calls and dollars of one stage; `reused` counts conversion batches taken from
    an earlier version of the document (no model call, no tokens)."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    reused: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    dollars: float = 0.0

    def __add__(self, other: StageCost) -> StageCost:
        return StageCost(
            calls=self.calls + other.calls,
            reused=self.reused + other.reused,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            dollars=self.dollars + other.dollars,
        )


class DocumentCost(BaseModel):
    """One document's costs by stage, and its agentic-chunking equivalent."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    source: str
    pages: int
    markdown_chars: int
    stages: dict[str, StageCost]
    planning_at_reference: float
    agentic: StageCost
    models: dict[str, ModelCost] = {}
    """Conversion per model (two for a document whose doubtful pages were escalated)."""
    escalation: EscalationCost | None = None

    @property
    def total_dollars(self) -> float:
        """Conversion + planning + embedding dollars."""
        return sum(s.dollars for s in self.stages.values())


class Projection(BaseModel):
    """Dollars per million pages."""

    model_config = ConfigDict(frozen=True)

    first_index: float
    reindex: float
    agentic_reindex: float
    drac_chunking_at_reference: float
    agentic_chunking_at_reference: float


class CostReport(BaseModel):
    """Everything `drac cost` prints."""

    model_config = ConfigDict(frozen=True)

    prices_as_of: str
    reference_model: str
    documents: tuple[DocumentCost, ...]
    totals: dict[str, StageCost]
    agentic_total: StageCost
    planning_at_reference: float
    pages: int
    projection: Projection
    unpriced_models: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    escalation: EscalationCost | None = None
    """The documents' escalations summed (the first document's pair of models named)."""


def agentic_equivalent(markdown_chars: int, prices: PriceTable) -> StageCost:
    """What agentic chunking would spend on a document: read it, then write it out again."""
    tokens = -(-markdown_chars // CHARS_PER_TOKEN)  # ceiling
    price = prices.price_of(prices.agentic_model)
    dollars = price.cost(tokens, tokens) if price else 0.0
    return StageCost(calls=1, input_tokens=tokens, output_tokens=tokens, dollars=dollars)


def stage_costs(
    entries: Iterable[LedgerEntry], prices: PriceTable, unpriced: set[str]
) -> dict[str, StageCost]:
    """Sum ledger entries by stage (every stage present, zero when unused); unpriced models
    are added to `unpriced` and cost 0."""
    out = {stage: StageCost() for stage in STAGES}
    for entry in entries:
        if is_reused(entry):
            out[entry.stage] = out[entry.stage] + StageCost(reused=1)
            continue
        price = prices.price_of(entry.model)
        if price is None:
            unpriced.add(entry.model)
        dollars = price.cost(entry.input_tokens, entry.output_tokens) if price else 0.0
        cost = StageCost(
            calls=1,
            input_tokens=entry.input_tokens,
            output_tokens=entry.output_tokens,
            dollars=dollars,
        )
        out[entry.stage] = out.get(entry.stage, StageCost()) + cost
    return out


def _dearer_than_agentic(
    planning: StageCost, planning_at_reference: float, agentic: StageCost, prices: PriceTable
) -> list[str]:
    """A warning when planning cost more than agentic chunking of the same documents (the
    thing it replaces), at the ledger's prices or at the reference model's."""
    warnings: list[str] = []
    if planning.calls and planning.dollars > agentic.dollars > 0:
        warnings.append(
            f"planning cost ${planning.dollars:.4f}, more than agentic chunking of the same "
            f"documents (${agentic.dollars:.4f}): check the planner's answers and retries"
        )
    elif planning.calls and planning_at_reference > agentic.dollars > 0:
        warnings.append(
            f"planning's tokens at {prices.agentic_model} prices (${planning_at_reference:.4f}) "
            f"cost more than agentic chunking of the same documents (${agentic.dollars:.4f})"
        )
    return warnings


def _per_million_pages(dollars: float, pages: int) -> float:
    return dollars / max(pages, 1) * PROJECTION_PAGES


def cost_report(
    documents: Iterable[DocumentRecord],
    entries: Iterable[LedgerEntry],
    markdown_chars: Mapping[str, int],
    prices: PriceTable,
) -> CostReport:
    """Build the cost report of a workspace's documents from its ledger and Markdown sizes."""
    by_document: dict[str, list[LedgerEntry]] = {}
    for entry in entries:
        by_document.setdefault(entry.document_id, []).append(entry)
    reference = prices.price_of(prices.agentic_model)
    unpriced: set[str] = set()
    rows: list[DocumentCost] = []
    for record in documents:
        own = by_document.get(record.document_id, [])
        stages = stage_costs(own, prices, unpriced)
        plan = stages["planning"]
        chars = markdown_chars.get(record.document_id, 0)
        rows.append(
            DocumentCost(
                document_id=record.document_id,
                source=record.source,
                pages=max(record.pages, 1),
                markdown_chars=chars,
                stages=stages,
                planning_at_reference=(
                    reference.cost(plan.input_tokens, plan.output_tokens) if reference else 0.0
                ),
                agentic=agentic_equivalent(chars, prices),
                models=(models := conversion_by_model(own, prices)),
                escalation=escalation_cost(models, prices),
            )
        )
    totals = {stage: StageCost() for stage in STAGES}
    agentic = StageCost()
    for row in rows:
        for stage, cost in row.stages.items():
            totals[stage] = totals.get(stage, StageCost()) + cost
        agentic = agentic + row.agentic
    pages = sum(row.pages for row in rows)
    planning_ref = sum(row.planning_at_reference for row in rows)
    embed = totals["embedding"].dollars
    projection = Projection(
        first_index=_per_million_pages(sum(t.dollars for t in totals.values()), pages),
        reindex=_per_million_pages(totals["planning"].dollars + embed, pages),
        agentic_reindex=_per_million_pages(agentic.dollars + embed, pages),
        drac_chunking_at_reference=_per_million_pages(planning_ref, pages),
        agentic_chunking_at_reference=_per_million_pages(agentic.dollars, pages),
    )
    escalated = [row.escalation for row in rows if row.escalation is not None]
    return CostReport(
        escalation=sum(escalated[1:], escalated[0]) if escalated else None,
        warnings=tuple(_dearer_than_agentic(totals["planning"], planning_ref, agentic, prices)),
        prices_as_of=prices.as_of,
        reference_model=prices.agentic_model,
        documents=tuple(rows),
        totals=totals,
        agentic_total=agentic,
        planning_at_reference=planning_ref,
        pages=pages,
        projection=projection,
        unpriced_models=tuple(sorted(unpriced)),
    )
