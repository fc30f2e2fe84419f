"""A document's CPU budget: every contained call made for it is charged what its worker used,
is given no more CPU than is left, and past the budget the document fails with a reason that
names the budget and the step; documents converted in other threads keep budgets of their
own."""

from __future__ import annotations

import contextvars
import sys
import threading
from dataclasses import replace

import contained_tasks
import pytest
from pdfs import make_pdf

from drac.documents.options import ConversionOptions
from drac.documents.pdf.ocr import ocr_available
from drac.documents.pdf.scans import read_scanned_pages
from drac.documents.sandbox.containment import (
    GIB,
    BudgetExceeded,
    Limits,
    contained_call,
    contained_stream,
    document_budget,
)
from drac.documents.sandbox.containment.budget import MIN_CALL_CPU_S, Budget, current
from drac.errors import DocumentError

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox"),
    pytest.mark.subprocess,
]

LIMITS = Limits(
    memory_bytes=1 * GIB, cpu_s=30, step_cpu_s=30, wall_s=60, preload=("contained_tasks",)
)


def _call(name: str, *args: object) -> object:
    return contained_call(
        getattr(contained_tasks, name), *args, limits=LIMITS, what="while testing"
    )


def test_charges_add_up_and_the_cap_is_what_is_left():
    budget = Budget(10.0)
    budget.charge(3.0)
    budget.charge(-5.0)  # nothing negative is ever charged
    budget.charge(2.5)
    assert budget.used_s == 5.5
    assert budget.remaining_s() == 4.5
    assert budget.cap(30.0) == 4.5  # less than the call's own limit
    assert budget.cap(2.0) == 2.0  # the call's own limit when that is less
    budget.charge(4.4)
    assert budget.cap(30.0) == MIN_CALL_CPU_S  # RLIMIT_CPU's whole seconds
    budget.check("while reading page 2")  # 0.1 s left: not spent
    budget.charge(1.0)
    assert budget.remaining_s() == 0.0 and budget.spent()
    with pytest.raises(BudgetExceeded, match=r"used its 10 s CPU budget while reading page 2"):
        budget.check("while reading page 2")


def test_a_run_stopped_by_its_cap_spends_the_budget():
    budget = Budget(10.0)
    budget.charge_capped(3.0, cap_s=8.0)  # well below its cap: only what it used
    assert budget.used_s == 3.0
    budget.charge_capped(6.7, cap_s=7.0)  # at its cap: RLIMIT_CPU stopped a process of it
    assert budget.spent()


def test_a_budget_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        Budget(0)


def test_no_budget_outside_a_document():
    assert current() is None
    with document_budget(None) as budget:
        assert budget is None and current() is None
    with document_budget(5.0) as budget:
        assert current() is budget
    assert current() is None


def test_every_contained_call_is_charged_what_its_worker_used():
    with document_budget(100.0) as budget:
        assert budget is not None
        _call("burn", 0.6)
        first = budget.used_s
        _call("burn", 0.6)
    assert 0.5 <= first < 1.5  # a warm worker's call: its CPU, not the worker's start
    assert budget.used_s >= first + 0.5


def test_a_call_gets_no_more_cpu_than_is_left_and_fails_naming_the_budget():
    with document_budget(2.0), pytest.raises(BudgetExceeded) as failure:
        _call("spin")  # its own limit is 30 s
    assert "used its 2 s CPU budget while spinning on page 3" in str(failure.value)
    assert "DRAC_DOCUMENT_CPU_S" in str(failure.value)
    assert isinstance(failure.value, DocumentError)  # the document fails alone, as any error
    assert _call("echo", 1)["value"] == 1  # the pool goes on


def test_calls_share_one_budget_and_the_next_call_is_refused_at_once():
    with document_budget(2.0) as budget:
        assert budget is not None
        _call("burn", 1.2)
        with pytest.raises(BudgetExceeded, match=r"2 s CPU budget while testing"):
            _call("burn", 1.2)  # passes what was left (0.8 s, given 1 s): it is named
        with pytest.raises(BudgetExceeded, match=r"2 s CPU budget before testing"):
            _call("echo", 1)  # nothing left: refused before it starts
    assert budget.used_s >= 2.0


def test_a_stream_is_charged_step_by_step_and_stopped_at_the_step_that_spent_it():
    got: list[int] = []
    with document_budget(2.5), pytest.raises(BudgetExceeded) as failure:
        for number in contained_stream(
            contained_tasks.burn_pages, 50, 0.4, limits=LIMITS, what="while opening"
        ):
            got.append(number)
    assert 3 <= len(got) <= 7  # 2.5 s at 0.4 s a page, not 50 pages
    assert "while reading page" in str(failure.value)


def test_threads_of_one_document_share_its_budget_and_other_documents_have_their_own():
    results: dict[str, object] = {}

    def other_document() -> None:
        with document_budget(100.0) as budget:
            _call("burn", 0.3)
            results["other"] = budget.used_s if budget else None

    with document_budget(50.0) as budget:
        assert budget is not None
        batch = threading.Thread(target=contextvars.copy_context().run, args=(_call, "burn", 0.5))
        other = threading.Thread(target=other_document)
        batch.start(), other.start()
        batch.join(), other.join()
        assert 0.4 <= budget.used_s < 0.9  # its batch's call, not the other document's
    assert isinstance(results["other"], float) and 0.2 <= results["other"] < 0.8


def test_without_a_budget_calls_keep_their_own_limits():
    with pytest.raises(DocumentError, match=r"used more than 1 s of CPU while spinning"):
        contained_call(
            contained_tasks.spin, limits=replace(LIMITS, cpu_s=1, step_cpu_s=1), what="x"
        )


@pytest.mark.skipif(not ocr_available(), reason="the ocr extra is not installed")
def test_checking_scans_past_the_budget_leaves_the_other_pages_unread():
    pdf = make_pdf([(200, 200)] * 6, scanned=range(6))
    options = ConversionOptions()
    with document_budget(1.0) as budget:
        read = read_scanned_pages(pdf, list(range(1, 7)), options, unread_past_budget=True)
        assert budget is not None and budget.spent()
    assert len(read) < 6  # stopped when the budget was spent, without failing
    with (
        document_budget(1.0),
        pytest.raises(BudgetExceeded, match=r"1 s CPU budget (while|before)"),
    ):
        read_scanned_pages(pdf, list(range(1, 7)), options)  # converting: the document fails
