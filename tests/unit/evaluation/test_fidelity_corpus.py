"""Finding ground truth and renditions in a folder, and scoring them with a given converter."""

from __future__ import annotations

from pathlib import Path

from drac.evaluation.fidelity_corpus import (
    Rendition,
    fidelity_table,
    find_documents,
    score_folder,
    totals,
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_both_layouts_are_found_and_symlinks_are_not_followed(tmp_path: Path) -> None:
    corpus = tmp_path / "Acme"
    _write(corpus / "md" / "guide.md", "# Guide\n\nText here.\n")
    _write(corpus / "pdf" / "guide.pdf", "pdf")
    _write(corpus / "docx" / "guide.docx", "docx")
    _write(corpus / "pdf" / "other.pdf", "no source for this one")
    single = tmp_path / "mine" / "report"
    _write(single / "source.md", "# Report\n")
    _write(single / "report.html", "html")
    _write(single / "notes.md", "not a rendition")
    outside = _write(tmp_path.parent / f"{tmp_path.name}-secret.pdf", "secret")
    (single / "linked.pdf").symlink_to(outside)
    (tmp_path / "linked-dir").symlink_to(corpus, target_is_directory=True)
    documents = find_documents(tmp_path)
    assert [(d.group, d.name) for d in documents] == [("Acme", "guide"), ("mine", "report")]
    assert [p.name for p in documents[0].renditions] == ["guide.docx", "guide.pdf"]
    assert [p.name for p in documents[1].renditions] == ["report.html"]


def test_each_rendition_is_converted_scored_and_summed(tmp_path: Path) -> None:
    _write(tmp_path / "Acme" / "md" / "guide.md", "# Guide\n\nRefunds take thirty days.\n")
    _write(tmp_path / "Acme" / "pdf" / "guide.pdf", "pdf")
    _write(tmp_path / "Acme" / "html" / "guide.html", "html")
    outputs = {
        "guide.pdf": Rendition("# Guide\n\nRefunds take thirty days.\n"),
        "guide.html": Rendition("Guide\n\nRefunds take days.\n", ("a warning",)),
    }
    scored = score_folder(find_documents(tmp_path), lambda path: outputs[path.name])
    by_format = totals(scored, lambda s: s.format)
    assert by_format["pdf"].word_recall == 1.0 and by_format["pdf"].heading_recall == 1.0
    assert by_format["html"].word_recall == 0.8 and by_format["html"].heading_recall == 0.0
    assert [s.warnings for s in scored if s.format == "html"] == [("a warning",)]
    only_pdf = score_folder(find_documents(tmp_path), lambda p: outputs[p.name], frozenset({"pdf"}))
    assert [s.format for s in only_pdf] == ["pdf"]
    table = fidelity_table(by_format, "format")
    assert "| html | 1 | 0.8000 |" in table and "| pdf | 1 | 1.0000 | 1.0000 |" in table
