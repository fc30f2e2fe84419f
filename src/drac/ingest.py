"""From converted Markdown to stored structure: elements and planner sections (stage 3).

Both runtimes call `parse_document` on a document's joined Markdown, so the element limit, the
"nothing to chunk" rule and the sections are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from drac.errors import DocumentError
from drac.models import DocumentStatus, ParseConfig, ParsedDocument, Strategy
from drac.parsing import normalise_newlines, parse_markdown
from drac.sectioning import make_sections

if TYPE_CHECKING:
    from drac.documents.spreadsheets import SpreadsheetOptions

CHUNK_HEADROOM = 500
"""Room kept in a chunk beside its largest element: the breadcrumb (at most 300 characters)
and a table's header."""


def element_config(strategy: Strategy, base: ParseConfig | None = None) -> ParseConfig:
    """Parser settings whose largest element still fits the strategy's hard limit."""
    base = base or ParseConfig()
    fitting = max(100, strategy.hard_limit_chars - CHUNK_HEADROOM)
    return base.model_copy(update={"max_element_chars": min(base.max_element_chars, fitting)})


def spreadsheet_options(strategy: Strategy) -> SpreadsheetOptions:
    """How a spreadsheet is written for this strategy: its table rows (pipe or sentences),
    and no row (with its header) longer than the parser's element limit, so the same
    strategy gives the same Markdown, and the same element ids, in both runtimes."""
    # imported here: parsing a converted document (the Parse Lambda) needs no spreadsheet reader
    from drac.documents.spreadsheets import SpreadsheetOptions

    return SpreadsheetOptions.for_strategy(strategy, element_config(strategy))


def parse_document(
    markdown: str,
    strategy: Strategy,
    failures: Sequence[str] = (),
    *,
    allow_empty: bool = False,
) -> ParsedDocument:
    """Parse Markdown into elements and cut them into sections for the strategy.

    Raises DocumentError when there is no text to chunk (naming the first conversion failure
    when the conversion failed everywhere), unless `allow_empty` (a scan converted offline:
    stored with no chunks, PARTIAL, for a vision model to convert later).
    """
    text = normalise_newlines(markdown)
    elements = parse_markdown(text, element_config(strategy))
    if not any(not element.is_heading for element in elements) and not allow_empty:
        if failures:
            raise DocumentError(f"conversion failed: {failures[0]}")
        raise DocumentError("the document has no text content to chunk")
    sections = make_sections(elements, strategy.section_budget)
    return ParsedDocument(markdown=text, elements=tuple(elements), sections=tuple(sections))


def status_after_conversion(conversion_failures: int) -> DocumentStatus:
    """PARTIAL when some pages became error markers, INDEXED otherwise."""
    return DocumentStatus.PARTIAL if conversion_failures else DocumentStatus.INDEXED
