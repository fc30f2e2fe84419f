"""The paper's fixed baseline: 1,000-character windows with 200 characters of overlap.

Windows run over a document's plain text: the PDF text layer (via pypdfium2) when the PDF is
at hand, otherwise the document's converted Markdown. Window starts are 0, 800, 1600, ...;
the last window ends at the text's end; a text no longer than one window is one chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from drac.evaluation.chunksets import ChunkSet, EvalChunk
from drac.evaluation.queries import document_key

WINDOW = 1000
OVERLAP = 200


def fixed_windows(text: str, window: int = WINDOW, overlap: int = OVERLAP) -> list[str]:
    """Split text into windows of `window` characters, consecutive ones sharing `overlap`.

    Empty or whitespace-only text gives no windows. Windows are not stripped or realigned:
    this is the naive baseline, word cuts included.
    """
    if window <= 0 or not 0 <= overlap < window:
        raise ValueError("need window > 0 and 0 <= overlap < window")
    if not text.strip():
        return []
    step = window - overlap
    windows: list[str] = []
    start = 0
    while True:
        windows.append(text[start : start + window])
        if start + window >= len(text):
            return windows
        start += step


def pdf_text(path: Path) -> str:
    """Return the text layer of a PDF, pages joined by a newline (pypdfium2)."""
    import pypdfium2 as pdfium  # lazy: only the baseline reads PDFs

    pdf = pdfium.PdfDocument(str(path))
    try:
        pages: list[str] = []
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range().replace("\r\n", "\n"))
            textpage.close()
            page.close()
        return "\n".join(pages)
    finally:
        pdf.close()


def index_pdfs(search_roots: Sequence[Path]) -> dict[str, Path]:
    """Map the format-free key of every `.pdf` under the roots (recursively) to its path.

    In the corpus layout (`<company>/pdf/<stem>.pdf`) this finds each document's PDF sibling;
    the first path in sorted order wins when two PDFs share a key.
    """
    found: dict[str, Path] = {}
    for root in search_roots:
        for candidate in sorted(Path(root).rglob("*.pdf")):
            found.setdefault(document_key(candidate.name), candidate)
    return found


def fixed_chunk_set(
    documents: Iterable[tuple[str, str]],
    name: str = "fixed 1000/200",
    window: int = WINDOW,
    overlap: int = OVERLAP,
) -> ChunkSet:
    """Build the fixed-window chunk set from (source, text) pairs."""
    chunks: list[EvalChunk] = []
    for source, text in documents:
        for index, piece in enumerate(fixed_windows(text, window, overlap)):
            chunks.append(EvalChunk(chunk_id=f"{source}#fixed-{index}", source=source, text=piece))
    return ChunkSet(name=name, chunks=tuple(chunks))


def pdf_sibling(source_path: Path) -> Path | None:
    """The PDF of an ingested file: itself when a PDF, else `<stem>.pdf` beside it or in a
    sibling `pdf/` folder (the corpus layout `<company>/<format>/<stem>.<ext>`)."""
    source_path = Path(source_path)
    if source_path.suffix.lower() == ".pdf" and source_path.is_file():
        return source_path
    for candidate in (
        source_path.with_suffix(".pdf"),
        source_path.parent.parent / "pdf" / f"{source_path.stem}.pdf",
    ):
        if candidate.is_file():
            return candidate
    return None
