"""Write a report folder: one HTML page per document (page images beside it) and an index."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from drac.errors import DracError
from drac.inspect.build import build_document, report_name
from drac.inspect.html import document_html, index_html, unavailable_html
from drac.inspect.model import IndexRow
from drac.local.workspace import Workspace
from drac.models import DocumentRecord, DocumentStatus

INDEX = "index.html"


class ReportSummary(BaseModel):
    """What `write_report` wrote, and what it could not show."""

    model_config = ConfigDict(frozen=True)

    index: Path
    documents: tuple[Path, ...]
    skipped: tuple[str, ...]
    problems: tuple[tuple[str, str], ...] = ()
    """(source, what could not be shown and why) per document marked on the index."""


def write_report(
    ws: Workspace,
    records: Sequence[DocumentRecord],
    out: Path,
    version: int | None = None,
    compare: int | None = None,
) -> ReportSummary:
    """Write the reports of these documents into `out`, and an index of every live document
    of the workspace (linked when its report is in `out`). Documents without a plan (failed)
    get no report. A document that cannot be shown (a page too large to render, a damaged
    file) is marked, with the reason, on the index and on its page; the others are written.
    DracError only when the report folder cannot be written at all."""
    _check_versions(ws, records, [v for v in (version, compare) if v is not None])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DracError(f"cannot write the report to {out}: {exc.strerror or exc}") from exc
    written: list[Path] = []
    skipped: list[str] = []
    problems: dict[str, str] = {}
    for record in records:
        if record.active_version and record.status is not DocumentStatus.DELETED:
            path = out / f"{report_name(record)}.html"
            try:
                view = build_document(ws, record, out, version, compare)
                page, problem = document_html(view), view.problem
            except (DracError, OSError, ValueError) as exc:  # damaged: say so, go on
                problem = f"not shown: {exc}"
                page = unavailable_html(record, problem)
            _write(path, page)
            written.append(path)
            if problem:
                problems[record.document_id] = problem
        else:
            skipped.append(record.source)
    counts = Counter(chunk.document_id for chunk in ws.active_chunks())
    rows = []
    for record in ws.documents():
        if record.status is DocumentStatus.DELETED:
            continue
        page_name = f"{report_name(record)}.html"
        row = _row(
            record, counts[record.document_id], page_name if (out / page_name).exists() else None
        )
        if record.document_id in problems:
            row = row.model_copy(update={"problem": problems[record.document_id]})
        rows.append(row)
    index = out / INDEX
    _write(index, index_html(rows, str(ws.root)))
    by_id = {record.document_id: record.source for record in records}
    return ReportSummary(
        index=index,
        documents=tuple(written),
        skipped=tuple(skipped),
        problems=tuple((by_id[key], problem) for key, problem in problems.items()),
    )


def _check_versions(
    ws: Workspace, records: Sequence[DocumentRecord], versions: Sequence[int]
) -> None:
    """Refuse a --version or --compare a document does not have, before writing anything."""
    for record in records:
        if not record.active_version or record.status is DocumentStatus.DELETED:
            continue
        stored = {row["version"] for row in ws.plans.versions(record.document_id)}
        for number in versions:
            if number not in stored:
                raise DracError(f"{record.source} has no plan version {number}")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DracError(f"cannot write the report to {path}: {exc.strerror or exc}") from exc


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
