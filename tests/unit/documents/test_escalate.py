"""Which pages are escalated, and which answer each page keeps
(`drac.documents.vision.escalate`)."""

from __future__ import annotations

from drac.documents.vision.batches import BatchResult, failed_batch, join_batches
from drac.documents.vision.escalate import escalation_reasons, merge_escalated
from drac.documents.vision.verify import PageVerification


def _checked(page: int, unsupported: int = 0, missing: int = 0) -> PageVerification:
    return PageVerification(
        page=page, counts={"unsupported": unsupported, "missing": missing, "suspect_rows": 0}
    )


def _batch(texts: dict[int, str], flags: dict[int, int]) -> BatchResult:
    markdown = "\n\n".join(f"<!-- Page {n} -->\n\n{text}" for n, text in texts.items())
    return BatchResult(
        pages=list(texts),
        markdown=markdown,
        warnings=["first batch note"],
        verification=[_checked(n, unsupported=flags.get(n, 0)) for n in texts],
    )


def test_pages_over_the_threshold_and_failed_pages_are_escalated_with_their_reasons() -> None:
    first = _batch({1: "one", 2: "two", 3: "three"}, {2: 1, 3: 3})
    failed = failed_batch([4, 5], "the answer repeats itself")
    assert escalation_reasons([first, failed], 0) == {
        2: "1 verification flags (1 unsupported, 0 missing, 0 suspect rows), more than 0",
        3: "3 verification flags (3 unsupported, 0 missing, 0 suspect rows), more than 0",
        4: "conversion failed: the answer repeats itself",
        5: "conversion failed: the answer repeats itself",
    }
    assert set(escalation_reasons([first, failed], 2)) == {3, 4, 5}
    assert escalation_reasons([_batch({1: "one"}, {})], 0) == {}


def test_each_page_keeps_the_better_answer_and_ties_go_to_the_second_model() -> None:
    first = _batch({1: "one", 2: "two bad", 3: "three bad", 4: "four bad"}, {2: 2, 3: 1, 4: 1})
    second = _batch({2: "two good", 3: "three worse", 4: "four tie"}, {2: 0, 3: 4, 4: 1})
    reasons = escalation_reasons([first], 0)
    merged, records = merge_escalated([first], [second], reasons, "cheap", "strong")
    joined = join_batches(merged)
    assert joined.markdown == (
        "<!-- Page 1 -->\n\none\n\n<!-- Page 2 -->\n\ntwo good\n\n"
        "<!-- Page 3 -->\n\nthree bad\n\n<!-- Page 4 -->\n\nfour tie\n"
    )
    assert [(r.page, r.model, r.flags_before, r.flags_after) for r in records] == [
        (2, "strong", 2, 0), (3, "cheap", 1, 4), (4, "strong", 1, 1),
    ]  # fmt: skip
    assert [page.flags for page in joined.verification] == [0, 0, 1, 1]  # the kept answers'
    assert joined.warnings.count("first batch note") == 1 and not joined.failures


def test_a_failed_page_takes_any_written_answer_and_a_failed_second_never_replaces_one() -> None:
    first = BatchResult(
        pages=[1, 2],
        markdown="<!-- Page 1 -->\n\none\n\n" + failed_batch([2], "looped").markdown,
        failure="page 2: conversion failed: looped",
        verification=[_checked(1, missing=3)],
    )
    second = BatchResult(
        pages=[1, 2],
        markdown=failed_batch([1], "refused").markdown + "\n\n<!-- Page 2 -->\n\ntwo",
        failure="page 1: conversion failed: refused",
        verification=[_checked(2, unsupported=5)],
    )
    reasons = escalation_reasons([first], 0)
    merged, records = merge_escalated([first], [second], reasons, "cheap", "strong")
    joined = join_batches(merged)
    assert joined.markdown == "<!-- Page 1 -->\n\none\n\n<!-- Page 2 -->\n\ntwo\n"
    assert not joined.failures  # page 2's failure is gone with its marker
    assert [(r.page, r.model, r.flags_before, r.flags_after) for r in records] == [
        (1, "cheap", 3, None), (2, "strong", None, 5),
    ]  # fmt: skip


def test_a_page_the_second_model_never_answered_keeps_the_first_answer() -> None:
    first = _batch({1: "one", 2: "two"}, {2: 1})
    merged, records = merge_escalated([first], [], {2: "flags"}, "cheap", "strong")
    assert join_batches(merged).markdown == "<!-- Page 1 -->\n\none\n\n<!-- Page 2 -->\n\ntwo\n"
    assert [(r.model, r.flags_after) for r in records] == [("cheap", None)]
