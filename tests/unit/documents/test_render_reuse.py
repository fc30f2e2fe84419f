"""One contained pdfium worker renders document after document: the same PNGs as a worker of
their own gives each, a document that crashes or stops its worker fails alone (the worker is
replaced and the next documents render), and a worker that rendered documents still reads
no file it was not given."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import contained_tasks
import pytest
from reliability.hostile_pdf import full_page_fills_pdf, page_tree_loop_pdf, text_bomb_pdf
from shared_paths import VELVERA, require

from drac.documents.pdf.limits import PDF_LIMITS
from drac.documents.pdf.render import (
    PdfFacts,
    RenderOptions,
    render_document,
    render_document_here,
    render_pages,
)
from drac.documents.sandbox.containment import GIB, contained_call, contained_stream, protections
from drac.documents.sandbox.containment import pool as pool_module
from drac.errors import DocumentError

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox"),
    pytest.mark.subprocess,
]

PDFS = ("accessories.pdf", "contact_info.pdf", "environmental_policy.pdf")
# pdfium's worker as drac runs it, with a smaller address space (a crash comes sooner), a
# one-second step (a page that spins is stopped soon) and the test's own tasks
LIMITS = replace(
    PDF_LIMITS,
    memory_bytes=GIB // 2,
    step_cpu_s=1.0,
    preload=(*PDF_LIMITS.preload, "contained_tasks"),
)


@pytest.fixture(scope="module")
def corpus_pdfs() -> list[bytes]:
    folder = require(VELVERA) / "pdf"
    return [(folder / name).read_bytes() for name in PDFS]


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The workers started from now on (idle ones closed first, so the count starts at 0)."""
    pool_module._POOL.close()
    started: list[object] = []
    launch = pool_module._launch

    def counting(limits: object) -> object:
        started.append(limits)
        return launch(limits)  # type: ignore[arg-type]

    monkeypatch.setattr(pool_module, "_launch", counting)
    return started


def _alone(data: bytes) -> list[bytes]:
    """The document's PNGs from a worker started for it alone (as each document once had)."""
    pool_module._POOL.close()
    return [page.png for page in render_pages(data)]


def _in(limits: object, data: bytes) -> tuple[PdfFacts, list[bytes]]:
    items = contained_stream(
        render_document_here, data, RenderOptions(), limits=limits, what="while opening the PDF"
    )
    facts = PdfFacts.model_validate(next(items))
    return facts, [item["png"] for item in items]


def test_documents_rendered_by_one_worker_are_byte_identical_to_a_worker_each(
    corpus_pdfs: list[bytes], launches: list[object]
) -> None:
    alone = [_alone(data) for data in corpus_pdfs]
    assert len(launches) == len(corpus_pdfs)
    launches.clear()
    pool_module._POOL.close()
    reused = []
    for data in corpus_pdfs:
        rendered = render_document(data)
        reused.append([page.png for page in rendered.pages])
        assert rendered.facts.pages == len(reused[-1])
    assert len(launches) == 1  # one worker served every document
    assert reused == alone
    assert [len(pngs) for pngs in reused] == [4, 1, 2]


def test_a_hostile_document_in_the_middle_fails_alone_and_the_next_ones_render(
    corpus_pdfs: list[bytes], launches: list[object]
) -> None:
    first, second, third = corpus_pdfs
    expected = [_alone(first), _alone(second), _alone(third)]
    launches.clear()
    pool_module._POOL.close()
    assert _in(LIMITS, first)[1] == expected[0]
    with pytest.raises(DocumentError, match=r"exceeded the 0\.5 GiB memory limit while reading"):
        _in(LIMITS, text_bomb_pdf(20_000))  # pdfium aborts: the worker is gone
    assert _in(LIMITS, second)[1] == expected[1]
    with pytest.raises(DocumentError, match=r"used more than 1 s of CPU while rendering page 1"):
        _in(LIMITS, full_page_fills_pdf())  # a page that takes too long: the worker is stopped
    with pytest.raises(DocumentError, match="page 1 cannot be read"):
        _in(LIMITS, page_tree_loop_pdf())  # refused in the worker, which goes on
    facts, pngs = _in(LIMITS, third)
    assert (facts.pages, pngs) == (2, expected[2])
    assert len(launches) == 3  # the first worker, and one for each that a document ended


def test_a_worker_that_rendered_documents_reads_no_file_it_was_not_given(
    corpus_pdfs: list[bytes], launches: list[object], tmp_path: Path
) -> None:
    if "landlock files" not in protections(LIMITS):
        pytest.skip("Landlock unavailable here")
    canary = tmp_path / "canary.txt"
    canary.write_text("CANARY-render-3b1d")
    for data in corpus_pdfs:
        _in(LIMITS, data)
    said = contained_call(contained_tasks.read, str(canary), limits=LIMITS, what="while testing")
    assert isinstance(said, str) and said.startswith("denied") and "CANARY" not in said
    assert len(launches) == 1  # the very worker that rendered them
