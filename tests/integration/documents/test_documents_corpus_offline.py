"""The offline converter on the real corpus PDFs."""

import re
from pathlib import Path

import pytest
import shared_paths
from shared_paths import require

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.parsing import parse_markdown
from drac.ports import MemoryLedger

CORPUS = require(shared_paths.CORPUS)
PDFS = sorted(CORPUS.glob("*/pdf/*.pdf"))

pytestmark = pytest.mark.skipif(not PDFS, reason="corpus not available")


def _headings(markdown: str) -> list[str]:
    return [
        re.sub(r"[*_`]", "", line.lstrip("#").strip()).lower()
        for line in markdown.splitlines()
        if re.match(r"^#{1,6}\s", line)
    ]


def _convert(path: Path):
    return convert_to_markdown(
        path.read_bytes(),
        path.name,
        options=ConversionOptions(),
        vision=None,
        ledger=MemoryLedger(),
        document_id="d",
    )


def test_a_velvera_pdf_recovers_the_headings_and_markers_of_its_markdown_sibling():
    pdf = CORPUS / "Velvera Technologies" / "pdf" / "accessories.pdf"
    sibling = (CORPUS / "Velvera Technologies" / "md" / "accessories.md").read_text()
    result = _convert(pdf)
    assert result.pages == 4 and result.status == "ok"
    assert re.findall(r"<!-- Page (\d+) -->", result.markdown) == ["1", "2", "3", "4"]
    expected = _headings(sibling)
    found = set(_headings(result.markdown))
    recovered = [heading for heading in expected if heading in found]
    assert len(recovered) >= 0.9 * len(expected), set(expected) - found
    assert result.markdown.splitlines()[2] == "# Velvera Product Specification Catalog"
    assert "## Accessories & Add-ons" in result.markdown
    assert "- **Compatibility:** All Velvera Devices" in result.markdown


def test_every_corpus_pdf_converts_with_one_marker_per_page_and_parses():
    total_pages = 0
    for path in PDFS:
        result = _convert(path)
        numbers = [int(n) for n in re.findall(r"<!-- Page (\d+) -->", result.markdown)]
        assert numbers == list(range(1, result.pages + 1)), path.name
        assert result.status == "ok", (path.name, result.warnings)
        elements = parse_markdown(result.markdown)
        assert elements, path.name
        assert max(element.page for element in elements) == result.pages or result.pages > 1
        total_pages += result.pages
    assert total_pages > 200


def test_elements_carry_the_page_they_came_from():
    path = CORPUS / "CloudWay-24" / "pdf" / "Armed Forces Discount Program.pdf"
    elements = parse_markdown(_convert(path).markdown)
    terms = next(e for e in elements if e.is_heading and "Terms & Conditions" in e.text)
    assert terms.page == 2
    assert elements[0].page == 1


def test_no_corpus_pdf_gives_an_unprintable_character_and_fidelity_holds():
    """The whole corpus' PDFs against their Markdown (BENCHMARKS.md, conversion fidelity)."""
    from drac.evaluation.fidelity import Fidelity, score_conversion

    total = Fidelity(documents=0)
    for path in PDFS:
        source = (path.parent.parent / "md" / f"{path.stem}.md").read_text(encoding="utf-8")
        markdown = _convert(path).markdown
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd\ufffe\ue000-\uf8ff]", markdown), (
            path.name
        )
        total = total + score_conversion(source, markdown)
    assert total.documents == len(PDFS) == 75
    assert total.unprintable == 0
    assert total.word_recall >= 0.993 and total.word_precision >= 0.985
    assert total.heading_text_recall >= 0.99 and total.heading_recall >= 0.92
    assert total.table_fidelity >= 0.6 and total.list_fidelity >= 0.9
    assert total.reading_order >= 0.995
    assert total.paragraphs_split <= 4


def test_a_typeset_pdf_joins_wrapped_words_and_keeps_real_hyphens():
    markdown = _convert(CORPUS / "CloudWay-24" / "pdf" / "Airbus A350.pdf").markdown
    assert "environment designed for comfort" in markdown
    assert "flying CloudLux or CloudSaver" in markdown
    assert "## Class-wise Seating Capacity" in markdown
    assert "### 1. **CloudLux (First Class)**" in markdown or "### 1. CloudLux" in markdown


def test_misread_currency_glyphs_are_dropped_the_same_way_with_a_page_warning():
    result = _convert(CORPUS / "Velvera Technologies" / "pdf" / "velvera_audio.pdf")
    assert "ff8,999" not in result.markdown and "| 8,999 | $109 |" in result.markdown
    assert "**Price:** 8,999 / $109" in result.markdown
    assert any(w.startswith("page 1:") and "left out" in w for w in result.warnings)
