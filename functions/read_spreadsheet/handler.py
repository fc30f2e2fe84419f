"""Read a spreadsheet upload (XLSX, XLSM, ODS, XLS, CSV, TSV) as tables straight to Markdown
(container image: ODS and XLS go through headless LibreOffice first)."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.spreadsheet import SpreadsheetInput, read_spreadsheet_upload

check_at_cold_start("read_spreadsheet")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Store the spreadsheet's Markdown; return its sheet and row counts."""
    payload = SpreadsheetInput.model_validate(event)
    correlate(payload.document_id, stage="read_spreadsheet")
    return read_spreadsheet_upload(_runtime(), payload).model_dump(mode="json")
