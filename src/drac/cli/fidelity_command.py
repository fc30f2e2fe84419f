"""`drac eval-conversion`: score the offline conversion of renditions against their source."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from drac.cli import cli
from drac.documents.convert import convert_to_markdown
from drac.documents.options import ConversionOptions
from drac.errors import DocumentError
from drac.evaluation.fidelity_corpus import (
    Rendition,
    ScoredRendition,
    fidelity_table,
    find_documents,
    score_folder,
    totals,
)
from drac.local.files import shown_path
from drac.ports import MemoryLedger


@cli.command("eval-conversion")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--formats",
    default="",
    help="only these rendition formats, by extension (e.g. pdf,docx); default all",
)
@click.option("--json", "as_json", is_flag=True, help="one JSON object per rendition on stdout")
def eval_conversion_command(folder: str, formats: str, as_json: bool) -> None:
    """Score conversions against source Markdown.

    FOLDER holds md/NAME.md beside pdf/NAME.pdf, docx/NAME.docx, ... (the corpus layout), or
    folders each holding source.md and its renditions. Each rendition is converted offline as
    `drac ingest` does and scored: word recall and precision, reading order, headings (text and
    level), table cells with their row key and header, list items, paragraphs split
    mid-sentence, unprintable characters.
    """
    console = Console(stderr=as_json)
    documents = find_documents(Path(folder))
    if not documents:
        raise click.ClickException(
            f"no ground truth under {_printable(shown_path(folder))}: expected md/NAME.md beside"
            " pdf/NAME.pdf"
            " (...), or folders holding source.md and its renditions"
        )
    wanted = frozenset(f.strip().lower() for f in formats.split(",") if f.strip()) or None
    scored = score_folder(documents, _convert, wanted)
    if as_json:
        for item in scored:
            click.echo(json.dumps(_as_record(item), ensure_ascii=True))
        return
    console.print(f"{len(scored)} renditions of {len(documents)} documents", highlight=False)
    console.print(
        escape(fidelity_table(totals(scored, lambda s: s.format), "format")), highlight=False
    )
    console.print()
    by_group = totals(scored, lambda s: f"{_printable(s.document.group)} / {s.format}")
    console.print(escape(fidelity_table(by_group, "group / format")), highlight=False)
    for item in scored:
        for warning in item.warnings:
            console.print(
                f"[yellow]{escape(_printable(shown_path(str(item.path))))}: "
                f"{escape(_printable(warning))}[/yellow]"
            )


def _printable(text: str) -> str:
    """A name or message from a document for the terminal: control characters as "?"."""
    return "".join(char if char.isprintable() else "?" for char in text)


def _convert(path: Path) -> Rendition:
    """The offline conversion of one file, as `drac ingest` makes it (empty when it fails)."""
    try:
        result = convert_to_markdown(
            path.read_bytes(),
            path.name,
            options=ConversionOptions(),
            vision=None,
            ledger=MemoryLedger(),
            document_id="eval-conversion",
        )
    except (DocumentError, OSError) as exc:
        return Rendition("", (f"conversion failed: {exc}",))
    return Rendition(result.markdown, tuple(result.warnings))


def _as_record(item: ScoredRendition) -> dict[str, object]:
    score = item.fidelity
    return {
        "group": item.document.group,
        "document": item.document.name,
        "path": str(item.path),
        "format": item.format,
        "word_recall": score.word_recall,
        "word_precision": score.word_precision,
        "reading_order": score.reading_order,
        "heading_recall": score.heading_recall,
        "heading_text_recall": score.heading_text_recall,
        "table_fidelity": score.table_fidelity,
        "list_fidelity": score.list_fidelity,
        "paragraphs": score.paragraphs,
        "paragraphs_split": score.paragraphs_split,
        "unprintable": score.unprintable,
        "warnings": list(item.warnings),
    }
