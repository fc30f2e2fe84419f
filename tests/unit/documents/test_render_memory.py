"""The pdfium worker's address-space limit fits the Lambda function's memory beside the
caller, or the document fails with the sizes named; a PDF given as a file is read as its
pages need it, never copied whole into the caller or the worker."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from pdfs import make_pdf
from PIL import Image

from drac.documents.pdf.render import (
    MEMORY_HEADROOM,
    MIB,
    PDF_LIMITS,
    WORKER_OVERHEAD,
    _resident_bytes,
    fitted_limits,
    pdf_limits,
    render_pages,
    source_limits,
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


def _image_pdf(path: Path, pages: int) -> None:
    """A PDF of `pages` pages, each a 1.7 MiB incompressible (noise) JPEG, written to `path`."""
    pictures = []
    for seed in range(2):
        buffer = io.BytesIO()
        Image.effect_noise((1240, 1754), 40 + seed).save(buffer, "JPEG", quality=95)
        pictures.append(buffer.getvalue())
    document = pdfium.PdfDocument.new()
    for number in range(pages):
        page = document.new_page(595, 842)
        image = pdfium.PdfImage.new(document)
        image.load_jpeg(io.BytesIO(pictures[number % 2]), inline=True)
        image.set_matrix(pdfium.PdfMatrix().scale(595, 842))
        page.insert_obj(image)
        page.gen_content()
        page.close()
    document.save(path)
    document.close()


def _worker_peak(folder: Path) -> int:
    """The peak resident memory (bytes) of the idle pdfium worker that may read `folder`."""
    [worker] = [
        worker
        for key, workers in pool_module._POOL.idle.items()
        if str(folder) in key[1]
        for worker in workers
    ]
    status = Path(f"/proc/{worker.process.pid}/status").read_text()
    [line] = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) * 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_pdf_file_is_read_as_pages_need_it_never_copied_whole(tmp_path: Path) -> None:
    pdf = tmp_path / "large.pdf"
    _image_pdf(pdf, 80)
    size = pdf.stat().st_size
    assert size > 128 * MIB
    pages = list(render_pages(pdf, pages=[1, 80]))  # the first and the last page
    assert [page.number for page in pages] == [1, 80]
    assert pages[1].png[:4] == b"\x89PNG"
    # measured: 59 MiB for this 136 MiB PDF; a worker given its bytes peaks at 331 MiB (its
    # copy of them, the pickled request's, pdfium's)
    assert _worker_peak(tmp_path) < 0.8 * size


def test_a_pdf_file_needs_no_room_for_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a function with 512 MiB beside what this process holds: a worker fits, but not
    # beside a copy of a 300 MiB PDF
    monkeypatch.setenv(
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", str((_resident_bytes() + 512 * MIB) // 1_000_000)
    )
    with pytest.raises(DocumentError, match="it needs for a 300 MiB PDF"):
        pdf_limits(300 * MIB)
    limits = source_limits(tmp_path / "large.pdf")
    assert WORKER_OVERHEAD <= limits.memory_bytes < PDF_LIMITS.memory_bytes
    assert limits.readable == (str(tmp_path),)  # the worker may read the PDF's folder


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ((Path(__file__).parent / "data" / "encrypted.pdf").read_bytes(), "password-protected"),
        (b"%PDF-1.7\nthis is not a pdf at all", "corrupt or unreadable PDF"),
    ],
)
def test_a_pdf_file_is_refused_for_the_reasons_its_bytes_are(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    pdf = tmp_path / "refused.pdf"
    pdf.write_bytes(data)
    for source in (data, pdf):
        with pytest.raises(DocumentError, match=reason):
            list(render_pages(source))
