"""Gather what the report shows of one document from a workspace (page images are written
to the report folder on the way)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from drac.documents.vision.verify import PageVerification, VerificationSummary, chunk_flags
from drac.errors import DocumentError, DracError
from drac.inspect.compare import compare_chunks
from drac.inspect.model import (
    ChunkView,
    Comparison,
    DocumentView,
    ElementView,
    NoteKind,
    PageNote,
    PageView,
)
from drac.inspect.pages import (
    markdown_by_page,
    marker_notes,
    stored_pdf,
    warning_notes,
    write_page_images,
)
from drac.local.verification import stored_verification
from drac.local.workspace import Workspace
from drac.models import Chunk, DocumentRecord, Element

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def report_name(record: DocumentRecord) -> str:
    """The report's file stem for a document: its source name made safe, and its id."""
    stem = _UNSAFE.sub("-", Path(record.source).stem).strip("-.")[:60] or "document"
    return f"{stem}-{record.document_id[:12]}"


def plan_chunks(ws: Workspace, record: DocumentRecord, version: int) -> list[Chunk]:
    """The chunks of one stored plan version (DracError when the version does not exist,
    DamagedFile when its file is missing or damaged)."""
    if not any(row["version"] == version for row in ws.plans.versions(record.document_id)):
        raise DracError(f"{record.source} has no plan version {version}")
    return ws.plan_chunk_file(record.document_id, version)


def chunk_views(
    chunks: Sequence[Chunk],
    elements: Sequence[Element],
    verification: VerificationSummary | None = None,
) -> list[ChunkView]:
    """Chunks numbered from 1, with their content (non-heading) element IDs and what
    verifying the conversion flagged in their text."""
    headings = {e.id for e in elements if e.is_heading}
    return [
        ChunkView(
            number=number,
            chunk_id=chunk.chunk_id,
            version=chunk.plan_version,
            breadcrumb=chunk.breadcrumb,
            element_ids=chunk.element_ids,
            content_ids=tuple(i for i in chunk.element_ids if i not in headings),
            chars=len(chunk.text),
            pages=chunk.pages,
            text=chunk.text,
            boxes=chunk.boxes,
            flags=_chunk_flags(verification, chunk),
        )
        for number, chunk in enumerate(chunks, start=1)
    ]


def build_document(
    ws: Workspace,
    record: DocumentRecord,
    out: Path,
    version: int | None = None,
    compare: int | None = None,
) -> DocumentView:
    """The report of one document at a plan version (default: active), optionally compared
    with another version; page images go to `out/<report name>/`."""
    shown = version or record.active_version
    if not shown:
        raise DracError(f"{record.source} has no plan ({record.status.value})")
    elements = ws.get_elements(record.document_id)
    try:
        plan = ws.plans.get_plan(record.document_id, shown)
    except KeyError as exc:
        raise DracError(f"{record.source} has no plan version {shown}") from exc
    verification = stored_verification(ws, record.document_id)
    chunks = chunk_views(plan_chunks(ws, record, shown), elements, verification)
    owner = {i: c.number for c in chunks for i in c.content_ids}
    for chunk in chunks:  # a heading belongs to the first chunk that writes or names it
        for element_id in chunk.element_ids:
            owner.setdefault(element_id, chunk.number)
    name = report_name(record)
    markdown = ws.get_markdown(record.document_id)
    pdf, page_source = stored_pdf(ws, record)
    images: dict[int, str] = {}
    sizes: dict[int, tuple[float, float]] = {}
    problem = None
    if pdf is not None:
        try:
            for number, file in write_page_images(pdf, out / name, sizes):
                images[number] = f"{name}/{file}"
        except DocumentError as exc:  # one page too large to render: show the text instead
            problem = f"page images not made ({exc}); the pages' text is shown instead"
    pages, general = _pages(record, markdown, chunks, images, page_source, verification)
    pages = [page.model_copy(update={"size_pt": sizes.get(page.number)}) for page in pages]
    if problem:
        general.insert(0, PageNote(kind=NoteKind.ERROR, text=problem))
    return DocumentView(
        record=record,
        file_name=f"{name}.html",
        version=shown,
        strategy=plan.strategy,
        versions=tuple(
            number
            for number in (row["version"] for row in ws.plans.versions(record.document_id))
            if isinstance(number, int)
        ),
        chunks=tuple(chunks),
        elements=tuple(
            ElementView(
                id=e.id,
                kind=e.kind.value,
                page=e.page,
                level=e.level,
                chars=len(e.text),
                text=e.text,
                chunk=owner.get(e.id),
            )
            for e in elements
        ),
        pages=tuple(pages),
        page_source=page_source,
        notes=tuple(general),
        comparison=_comparison(ws, record, shown, chunks, elements, compare) if compare else None,
        problem=problem,
    )


def _chunk_flags(summary: VerificationSummary | None, chunk: Chunk) -> tuple[str, ...]:
    if summary is None:
        return ()
    flags = chunk_flags(summary, chunk.pages, chunk.text)
    unsupported = [f"unsupported {item['token']}" for item in flags["unsupported"]]
    merged = [f"suspect merged row {item['row']}" for item in flags["suspect_rows"]]
    return tuple(dict.fromkeys([*unsupported, *merged]))


def _verification_note(page: PageVerification) -> PageNote:
    """A flagged page's note: what the model wrote that the page lacks, and so on."""
    parts = [
        f"{label}: {'; '.join(tokens)}"
        for label, tokens in (
            ("unsupported", page.unsupported),
            ("missing", page.missing),
            ("suspect merged rows", page.suspect_rows),
        )
        if tokens
    ]
    return PageNote(
        kind=NoteKind.VERIFICATION,
        text=f"checked against the page's {page.source}: " + " · ".join(parts),
    )


def _pages(
    record: DocumentRecord,
    markdown: str,
    chunks: Sequence[ChunkView],
    images: dict[int, str],
    page_source: str,
    verification: VerificationSummary | None = None,
) -> tuple[list[PageView], list[PageNote]]:
    texts = markdown_by_page(markdown)
    count = max(
        [record.pages, len(images), *texts, *(p for c in chunks for p in c.pages)], default=1
    )
    notes: dict[int, list[PageNote]] = {}
    for number, note in marker_notes(markdown):
        notes.setdefault(number, []).append(note)
    on_pages, general = warning_notes(record.warnings, count)
    for page in verification.flagged if verification else ():
        notes.setdefault(page.page, []).append(_verification_note(page))
    marked = set(notes)
    for number, note in on_pages:
        if number in marked and note.kind is not NoteKind.WARNING:
            continue  # the page's marker already says it
        notes.setdefault(number, []).append(note)
    pages = [
        PageView(
            number=number,
            image=images.get(number),
            text=None if number in images else texts.get(number, ""),
            notes=tuple(notes.get(number, ())),
            chunks=tuple(c.number for c in chunks if c.first_page == number),
            continued=tuple(c.number for c in chunks if number in c.pages[1:]),
        )
        for number in range(1, count + 1)
    ]
    if page_source == "missing":
        general.insert(
            0,
            PageNote(
                kind=NoteKind.WARNING,
                text="no page images: this document was ingested before drac kept the PDF it "
                "renders; `drac ingest --force` it to see them",
            ),
        )
    return pages, general


def _comparison(
    ws: Workspace,
    record: DocumentRecord,
    left_version: int,
    left: Sequence[ChunkView],
    elements: Sequence[Element],
    version: int,
) -> Comparison:
    right = chunk_views(plan_chunks(ws, record, version), elements)
    order = {e.id: index for index, e in enumerate(elements)}
    return Comparison(
        left_version=left_version,
        right_version=version,
        left=tuple(left),
        right=tuple(right),
        groups=tuple(compare_chunks(left, right, order)),
    )
