"""Batches reused from an earlier version are counted apart from model calls."""

from drac.costs.prices import PriceTable
from drac.costs.report import stage_costs
from drac.documents.vision.incremental import reused_entry
from drac.models import LedgerEntry


def test_a_reused_batch_is_no_call_and_costs_nothing() -> None:
    entries = [
        reused_entry("d2", "google.gemma-3-27b-it", [1, 2, 3, 4, 5], "d1"),
        reused_entry("d2", "google.gemma-3-27b-it", [6, 7, 8, 9, 10], "d1"),
        LedgerEntry(
            document_id="d2",
            stage="conversion",
            model="google.gemma-3-27b-it",
            input_tokens=10_000,
            output_tokens=2_000,
        ),
    ]
    conversion = stage_costs(entries, PriceTable(), set())["conversion"]
    assert (conversion.calls, conversion.reused) == (1, 2)
    assert conversion.input_tokens == 10_000
    assert conversion.dollars == stage_costs(entries[2:], PriceTable(), set())["conversion"].dollars
