"""Conversion cost per model, and what escalating doubtful pages cost against converting
every page with the second model.

A document converted by one model and escalated to another has conversion calls of both in
its ledger; the model of its first conversion call is the first model. Converting every page
with the second model is estimated as the first model's conversion tokens (every page, the
same images and prompt) at the second model's prices.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from drac.costs.prices import PriceTable
from drac.documents.vision.incremental import is_reused
from drac.models import LedgerEntry


class ModelCost(BaseModel):
    """One model's conversion calls, tokens and dollars."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    dollars: float = 0.0


class EscalationCost(BaseModel):
    """What a document's (or a workspace's) escalation cost, against the two alternatives."""

    model_config = ConfigDict(frozen=True)

    first_model: str
    second_model: str
    with_escalation: float
    """Dollars of every conversion call, both models."""
    first_only: float
    """Dollars of the first model's calls alone (no escalation)."""
    all_with_second: float
    """Estimated dollars of converting every page with the second model."""

    def __add__(self, other: EscalationCost) -> EscalationCost:
        return self.model_copy(
            update={
                "with_escalation": self.with_escalation + other.with_escalation,
                "first_only": self.first_only + other.first_only,
                "all_with_second": self.all_with_second + other.all_with_second,
            }
        )


def conversion_by_model(entries: Iterable[LedgerEntry], prices: PriceTable) -> dict[str, ModelCost]:
    """The conversion calls of `entries` summed per model, in the order first called."""
    out: dict[str, ModelCost] = {}
    for entry in sorted(entries, key=lambda entry: entry.at):
        if entry.stage != "conversion" or is_reused(entry):
            continue
        price = prices.price_of(entry.model)
        dollars = price.cost(entry.input_tokens, entry.output_tokens) if price else 0.0
        was = out.get(entry.model, ModelCost())
        out[entry.model] = ModelCost(
            calls=was.calls + 1,
            input_tokens=was.input_tokens + entry.input_tokens,
            output_tokens=was.output_tokens + entry.output_tokens,
            dollars=was.dollars + dollars,
        )
    return out


def escalation_cost(by_model: dict[str, ModelCost], prices: PriceTable) -> EscalationCost | None:
    """The escalation of a document converted by two models (None: by one or none)."""
    if len(by_model) < 2:
        return None
    (first, spent), *rest = by_model.items()
    second = rest[-1][0]
    price = prices.price_of(second)
    return EscalationCost(
        first_model=first,
        second_model=second,
        with_escalation=sum(cost.dollars for cost in by_model.values()),
        first_only=spent.dollars,
        all_with_second=price.cost(spent.input_tokens, spent.output_tokens) if price else 0.0,
    )


class EscalationQuote(BaseModel):
    """A quote's worst case with escalation: every page converted by both models."""

    model_config = ConfigDict(frozen=True)

    second_model: str
    plain: float
    """Dollars of the quote as it is (the first model alone)."""
    escalated_worst_case: float
    """Dollars when every page is escalated: the second model's conversion on top."""
    all_with_second: float
    """Dollars when the second model converts every page instead of the first."""


def escalation_quote(
    plain: float, conversion: ModelCost, second: str, prices: PriceTable, unpriced: set[str]
) -> EscalationQuote:
    """The quote's dollars (`plain`, of which `conversion` is the first model's conversion)
    with every page escalated to `second` (the same tokens at its prices); an unpriced
    `second` is added to `unpriced` and costs 0."""
    price = prices.price_of(second)
    if price is None:
        unpriced.add(second)
    again = price.cost(conversion.input_tokens, conversion.output_tokens) if price else 0.0
    return EscalationQuote(
        second_model=second,
        plain=plain,
        escalated_worst_case=plain + again,
        all_with_second=plain - conversion.dollars + again,
    )
