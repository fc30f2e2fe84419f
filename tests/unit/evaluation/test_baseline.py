import pytest

from drac.evaluation.baseline import (
    fixed_chunk_set,
    fixed_windows,
    index_pdfs,
    pdf_sibling,
    pdf_text,
)


def test_windows_of_1000_with_200_overlap():
    text = "".join(chr(ord("a") + i % 26) for i in range(2500))
    windows = fixed_windows(text)
    assert [len(w) for w in windows] == [1000, 1000, 900]
    assert windows[0] == text[0:1000]
    assert windows[1] == text[800:1800]
    assert windows[2] == text[1600:2500]
    assert windows[0][-200:] == windows[1][:200]


def test_text_exactly_one_window_and_one_step_past():
    assert fixed_windows("x" * 1000) == ["x" * 1000]
    assert [len(w) for w in fixed_windows("x" * 1001)] == [1000, 201]
    assert fixed_windows("short") == ["short"]


def test_empty_text_gives_no_windows_and_bad_sizes_raise():
    assert fixed_windows("  \n ") == []
    with pytest.raises(ValueError):
        fixed_windows("abc", window=100, overlap=100)


def test_fixed_chunk_set_names_sources():
    chunk_set = fixed_chunk_set([("a.pdf", "y" * 1700), ("b.pdf", "z")], window=1000, overlap=200)
    assert [c.source for c in chunk_set.chunks] == ["a.pdf", "a.pdf", "b.pdf"]
    assert chunk_set.documents == {"a", "b"}


def test_pdf_text_layer_and_sibling_index(tmp_path):
    pdfium = pytest.importorskip("pypdfium2")
    raw = pdfium.raw
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(300, 200)
    font = raw.FPDFText_LoadStandardFont(pdf.raw, b"Helvetica")
    obj = raw.FPDFPageObj_NewTextObj(pdf.raw, b"Helvetica", 12.0)
    assert font and obj
    text = "Premium term 16 years"
    encoded = (text + "\x00").encode("utf-16-le")
    import ctypes

    buffer = (ctypes.c_ushort * (len(encoded) // 2)).from_buffer_copy(encoded)
    raw.FPDFText_SetText(obj, buffer)
    raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 20, 100)
    raw.FPDFPage_InsertObject(page.raw, obj)
    raw.FPDFPage_GenerateContent(page.raw)
    folder = tmp_path / "Acme" / "pdf"
    folder.mkdir(parents=True)
    target = folder / "Policy_Doc.pdf"
    pdf.save(str(target))
    assert index_pdfs([tmp_path]) == {"policy_doc": target}
    assert "Premium term 16 years" in pdf_text(target)


def test_pdf_sibling_in_corpus_layout(tmp_path):
    (tmp_path / "Acme" / "pdf").mkdir(parents=True)
    (tmp_path / "Acme" / "md").mkdir()
    pdf = tmp_path / "Acme" / "pdf" / "guide.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    md = tmp_path / "Acme" / "md" / "guide.md"
    md.write_text("# Guide")
    assert pdf_sibling(md) == pdf
    assert pdf_sibling(pdf) == pdf
    assert pdf_sibling(tmp_path / "Acme" / "md" / "other.md") is None
