"""Write a report folder: one HTML page per document (page images beside it) and an index."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from drac.inspect.build import build_document, report_name
from drac.inspect.html import document_html, index_html
from drac.inspect.model import IndexRow
from drac.local.workspace import Workspace
from drac.models import DocumentRecord, DocumentStatus

INDEX = "index.html"


class ReportSummary(BaseModel):
    """What `write_report` wrote."""

    model_config = ConfigDict(frozen=True)

    index: Path
    documents: tuple[Path, ...]
    skipped: tuple[str, ...]


def write_report(
    ws: Workspace,
    records: Sequence[DocumentRecord],
    out: Path,
    version: int | None = None,
    compare: int | None = None,
) -> ReportSummary:
    """Write the reports of these documents into `out`, and an index of every live document
    of the workspace (linked when its report is in `out`). Documents without a plan (failed)
    get no report."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    skipped: list[str] = []
    for record in records:
        if record.active_version and record.status is not DocumentStatus.DELETED:
            view = build_document(ws, record, out, version, compare)
            path = out / view.file_name
            path.write_text(document_html(view), encoding="utf-8")
            written.append(path)
        else:
            skipped.append(record.source)
    counts = Counter(chunk.document_id for chunk in ws.active_chunks())
    rows = []
    for record in ws.documents():
        if record.status is DocumentStatus.DELETED:
            continue
        page = f"{report_name(record)}.html"
        rows.append(
            _row(record, counts[record.document_id], page if (out / page).exists() else None)
        )
    index = out / INDEX
    index.write_text(index_html(rows, str(ws.root)), encoding="utf-8")
    return ReportSummary(index=index, documents=tuple(written), skipped=tuple(skipped))


def _row(record: DocumentRecord, chunks: int, file_name: str | None) -> IndexRow:
    return IndexRow(
        source=record.source,
        document_id=record.document_id,
        file_name=file_name,
        format=record.format,
        status=record.status.value,
        pages=record.pages,
        chunks=chunks,
        version=record.active_version,
        warnings=len(record.warnings),
        note=record.error or (record.warnings[0] if record.warnings else ""),
    )
