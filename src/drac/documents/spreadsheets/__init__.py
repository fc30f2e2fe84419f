"""Spreadsheets read as tables, straight to Markdown (no rendering, no vision model)."""

from drac.documents.spreadsheets.read import (
    SPREADSHEET_FORMATS,
    SpreadsheetOptions,
    SpreadsheetResult,
    read_spreadsheet,
    stored_table_rows,
    table_rows_advice,
)

__all__ = [
    "SPREADSHEET_FORMATS",
    "SpreadsheetOptions",
    "SpreadsheetResult",
    "read_spreadsheet",
    "stored_table_rows",
    "table_rows_advice",
]
