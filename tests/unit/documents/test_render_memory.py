"""The pdfium worker's address-space limit fits the Lambda function's memory beside the
caller (which holds the PDF), or the document fails with the sizes named."""

from __future__ import annotations

import pytest
from pdfs import make_pdf

from drac.documents.pdf.render import (
    MEMORY_HEADROOM,
    MIB,
    PDF_LIMITS,
    _resident_bytes,
    fitted_limits,
    pdf_limits,
    render_pages,
)
from drac.documents.sandbox.containment import GIB
from drac.documents.sandbox.containment import pool as pool_module
from drac.errors import DocumentError


def test_outside_a_function_the_limit_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", raising=False)
    assert pdf_limits(500 * MIB) == PDF_LIMITS
    assert fitted_limits(PDF_LIMITS, 500 * MIB, None, 900 * MIB) == PDF_LIMITS


def test_caller_and_worker_stay_within_the_function() -> None:
    function = 2048 * 1_000_000
    for caller in (150 * MIB, 700 * MIB):  # the runtime alone; with a 500 MiB PDF read
        limits = fitted_limits(PDF_LIMITS, 500 * MIB, function, caller)
        assert limits.memory_bytes < PDF_LIMITS.memory_bytes  # 2 GiB did not fit beside it
        assert caller + limits.memory_bytes + MEMORY_HEADROOM <= function
        assert limits.memory_bytes >= 500 * MIB + 256 * MIB  # the worker still holds the PDF
    assert fitted_limits(PDF_LIMITS, MIB, 10_240 * 1_000_000, 700 * MIB) == PDF_LIMITS


def test_a_pdf_too_large_for_the_function_is_refused_by_name() -> None:
    with pytest.raises(DocumentError) as refused:
        fitted_limits(PDF_LIMITS, 500 * MIB, 1024 * 1_000_000, 650 * MIB)
    message = str(refused.value)
    assert "the function's 977 MiB of memory leave 192 MiB for the pdfium worker" in message
    assert "756 MiB it needs for a 500 MiB PDF: raise the function's memory" in message


def test_a_render_in_a_small_function_fails_named_before_a_worker_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pdf = make_pdf([(612, 792)])
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
    started: list[object] = []
    monkeypatch.setattr(pool_module, "_launch", lambda limits: started.append(limits))
    with pytest.raises(DocumentError, match="raise the function's memory"):
        list(render_pages(pdf))
    assert started == []


def test_a_render_in_a_function_runs_under_the_fitted_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pdf = make_pdf([(612, 792)])
    # a function holding what this process holds now (in a long test run, much more than a
    # fresh Lambda process) and 1 GiB beside it: no room for the worker's usual 2 GiB
    memory_mb = (_resident_bytes() + GIB) // 1_000_000
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", str(memory_mb))
    fitted = pdf_limits(len(pdf))
    assert fitted.memory_bytes < PDF_LIMITS.memory_bytes
    [page] = list(render_pages(pdf))  # the worker holds a page within the cut limit
    assert page.png[:4] == b"\x89PNG"
