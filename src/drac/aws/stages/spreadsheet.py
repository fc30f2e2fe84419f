"""Read a spreadsheet upload as tables: its Markdown is stored as the document's own, as for a
Markdown upload, and Parse goes on from there (no rendering, no model)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from drac.aws import keys
from drac.aws.document_access import DocumentScope
from drac.aws.lambda_support import logger
from drac.aws.runtime import Runtime
from drac.documents.intake.detect import DocumentFormat
from drac.documents.sandbox.containment import document_budget
from drac.documents.spreadsheets import read_spreadsheet
from drac.errors import DocumentError
from drac.ingest import spreadsheet_options
from drac.models import Strategy


class SpreadsheetInput(BaseModel):
    """The ReadSpreadsheet state's payload: the uploaded object version, its detected format
    and the ingest's strategy (which says how rows are written)."""

    document_id: str
    execution: str
    bucket: str
    key: str
    version_id: str | None = None
    format: str
    strategy: Strategy


class SpreadsheetRead(BaseModel):
    """What was read (the Markdown is stored: Parse gets no converted batches) and the
    reader's warnings, which the machine carries to Parse with the sheet count as the page
    count (Parse records both: ReadSpreadsheet has no access to the documents table)."""

    sheets: int
    rows: int
    warnings: list[str] = Field(default_factory=list)


def read_spreadsheet_upload(rt: Runtime, event: SpreadsheetInput) -> SpreadsheetRead:
    """Write the spreadsheet as Markdown (one element per data row, with its header) and store
    it; return the sheet count and the reader's warnings. It reads only the upload's version
    and writes only the document's Markdown.

    The same strategy gives the same Markdown, so the same element ids, as a local ingest.
    Raises DocumentError naming the file when it cannot be read or holds no data.
    """
    filename = event.key.rsplit("/", 1)[-1]
    markdown = keys.markdown_key(event.document_id)
    rt = rt.for_document(
        event.document_id,
        DocumentScope(
            reads=((event.bucket, event.key),),
            writes=((rt.resources.artifacts_bucket, markdown),),
        ),
    )
    data = rt.bucket(event.bucket).get_bytes(event.key, version_id=event.version_id)
    try:
        with document_budget(rt.settings.conversion.cpu_budget(len(data))):
            result = read_spreadsheet(
                data, DocumentFormat(event.format), filename, spreadsheet_options(event.strategy)
            )
    except DocumentError as exc:
        raise DocumentError(f"{filename}: {exc}") from exc
    rt.artifacts.put_text(markdown, result.markdown)
    logger.info("spreadsheet read", extra={"sheets": result.sheets, "rows": result.rows})
    return SpreadsheetRead(sheets=result.sheets, rows=result.rows, warnings=result.warnings)
