"""`drac eval-conversion`: score the conversion of renditions against their source, per model."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from drac.api.models_setup import named_vision_model
from drac.cli import cli
from drac.documents.convert import convert_to_markdown
from drac.documents.options import ConversionOptions
from drac.errors import DocumentError, DracError
from drac.evaluation.fidelity_corpus import (
    Rendition,
    ScoredRendition,
    fidelity_table,
    find_documents,
    score_folder,
    totals,
)
from drac.local.files import shown_path
from drac.ports import MemoryLedger, VisionModel


@cli.command("eval-conversion")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--formats",
    default="",
    help="only these rendition formats, by extension (e.g. pdf,docx); default all",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="BACKEND[:MODEL]",
    help="convert with this model (offline, bedrock, openai, or BACKEND:MODEL; repeatable: "
    "one table per model); default offline",
)
@click.option("--json", "as_json", is_flag=True, help="one JSON object per rendition on stdout")
def eval_conversion_command(
    folder: str, formats: str, models: tuple[str, ...], as_json: bool
) -> None:
    """Score conversions against source Markdown.

    FOLDER holds md/NAME.md beside pdf/NAME.pdf, docx/NAME.docx, ... (the corpus layout), or
    folders each holding source.md and its renditions. Each rendition is converted as `drac
    ingest` does, by each `--model` (offline by default), and scored per model: word recall
    and precision, reading order, headings (text and level), table cells with their row key
    and header, list items, paragraphs split mid-sentence, unprintable characters.
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
    for spec in models or ("offline",):
        try:
            vision = named_vision_model(spec)
        except DracError as exc:
            raise click.BadParameter(str(exc), param_hint="--model") from exc
        name = vision.name if vision is not None else "offline"
        scored = score_folder(documents, partial(_convert, vision), wanted)
        if as_json:
            for item in scored:
                record = {"model": name, **_as_record(item)}
                click.echo(json.dumps(record, ensure_ascii=True))
            continue
        _print_scores(console, f"{_printable(name)}: ", scored, len(documents))


def _print_scores(
    console: Console, label: str, scored: list[ScoredRendition], documents: int
) -> None:
    """One model's scores: by format, by group and format, and each rendition's warnings."""
    console.print(f"{label}{len(scored)} renditions of {documents} documents", highlight=False)
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


def _convert(vision: VisionModel | None, path: Path) -> Rendition:
    """The conversion of one file by `vision` (None: offline), as `drac ingest` makes it
    (empty when it fails)."""
    try:
        result = convert_to_markdown(
            path.read_bytes(),
            path.name,
            options=ConversionOptions(),
            vision=vision,
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
