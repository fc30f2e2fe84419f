"""`drac cost` says so when planning cost more than agentic chunking (issue 20: a base model's
failed answers priced planning at $0.83 against $0.43 agentic, without a word)."""

from drac.costs.prices import PriceTable
from drac.costs.report import cost_report
from drac.models import DocumentRecord, LedgerEntry

DOC = [DocumentRecord(document_id="a", source="a.md", sha256="x", pages=1)]


def _planning(tokens_in: int, tokens_out: int) -> LedgerEntry:
    return LedgerEntry(document_id="a", stage="planning", model="gpt-4.1",
                       input_tokens=tokens_in, output_tokens=tokens_out)  # fmt: skip


def test_planning_dearer_than_agentic_is_a_warning() -> None:
    # a 4,000-character document: agentic reads and writes 1,000 tokens each way
    report = cost_report(DOC, [_planning(3_000, 2_048)] * 2, {"a": 4_000}, PriceTable())
    assert report.totals["planning"].dollars > report.agentic_total.dollars
    [warning] = report.warnings
    assert warning.startswith("planning cost $0.0448, more than agentic chunking")
    assert "$0.0100" in warning


def test_cheap_planning_says_nothing() -> None:
    report = cost_report(DOC, [_planning(300, 20)], {"a": 4_000}, PriceTable())
    assert report.warnings == ()


def test_no_planning_calls_no_warning() -> None:
    assert cost_report(DOC, [], {"a": 4_000}, PriceTable()).warnings == ()
