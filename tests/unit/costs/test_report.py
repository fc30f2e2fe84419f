import pytest

from drac.costs.prices import PriceTable
from drac.costs.report import agentic_equivalent, cost_report
from drac.models import DocumentRecord, LedgerEntry


def _entry(doc, stage, model, i, o):
    return LedgerEntry(document_id=doc, stage=stage, model=model, input_tokens=i, output_tokens=o)


DOCS = [
    DocumentRecord(document_id="a", source="a.pdf", sha256="x", pages=2),
    DocumentRecord(document_id="b", source="b.md", sha256="y", pages=0),
]
ENTRIES = [
    _entry("a", "conversion", "google.gemma-3-27b-it", 10_000, 2_000),
    _entry("a", "planning", "gpt-4.1", 1_000, 50),
    _entry("a", "planning", "gpt-4.1", 500, 25),
    _entry("a", "embedding", "amazon.titan-embed-text-v2:0", 1_000, 0),
    _entry("b", "planning", "mystery", 5, 1),
]


def test_agentic_equivalent_counts_four_chars_per_token_both_ways():
    cost = agentic_equivalent(4001, PriceTable())
    assert (cost.input_tokens, cost.output_tokens) == (1001, 1001)
    assert cost.dollars == pytest.approx(1001 * 2 / 1e6 + 1001 * 8 / 1e6)


def test_ledger_arithmetic_per_document_and_total():
    report = cost_report(DOCS, ENTRIES, {"a": 4000, "b": 401}, PriceTable())
    a, b = report.documents
    conversion = 10_000 * 0.23 / 1e6 + 2_000 * 0.38 / 1e6
    planning = 1_500 * 2 / 1e6 + 75 * 8 / 1e6
    embedding = 1_000 * 0.02 / 1e6
    assert a.stages["conversion"].dollars == pytest.approx(conversion)
    assert a.stages["planning"].calls == 2
    assert a.stages["planning"].input_tokens == 1_500
    assert a.stages["planning"].dollars == pytest.approx(planning)
    assert a.total_dollars == pytest.approx(conversion + planning + embedding)
    assert a.agentic.dollars == pytest.approx(1000 * 10 / 1e6)
    assert b.pages == 1  # no page count: one page
    assert b.stages["planning"].dollars == 0.0
    assert report.unpriced_models == ("mystery",)
    assert report.totals["planning"].input_tokens == 1_505
    assert report.agentic_total.output_tokens == 1000 + 101
    assert report.pages == 3
    assert report.planning_at_reference == pytest.approx(planning + (5 * 2 + 1 * 8) / 1e6)


def test_projection_per_million_pages():
    report = cost_report(DOCS, ENTRIES, {"a": 4000, "b": 401}, PriceTable())
    p = report.projection
    total = sum(s.dollars for s in report.totals.values())
    assert p.first_index == pytest.approx(total / 3 * 1e6)
    reindex = report.totals["planning"].dollars + report.totals["embedding"].dollars
    assert p.reindex == pytest.approx(reindex / 3 * 1e6)
    assert p.agentic_chunking_at_reference == pytest.approx(report.agentic_total.dollars / 3 * 1e6)
    assert p.reindex < p.agentic_reindex


def test_paper_projection_arithmetic():
    # The paper: $0.624 of planning over 795 pages is about $785 per million pages.
    docs = [DocumentRecord(document_id="c", source="c.pdf", sha256="z", pages=795)]
    entries = [_entry("c", "planning", "gpt-4.1", 264_954, 11_714)]
    report = cost_report(docs, entries, {"c": 0}, PriceTable())
    assert report.projection.drac_chunking_at_reference == pytest.approx(785, abs=1)
