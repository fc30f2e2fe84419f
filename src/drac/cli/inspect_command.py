"""`drac inspect`: an HTML report of how documents were converted and chunked."""

from __future__ import annotations

from pathlib import Path

import click

from drac.cli import cli
from drac.cli.options import open_workspace, stdout, workspace_option
from drac.errors import DracError
from drac.inspect.report import write_report
from drac.models import DocumentStatus
from drac.terminal import markup


@cli.command(
    "inspect", short_help="Write a self-contained HTML report of documents and their chunks."
)
@click.argument("documents", nargs=-1)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the report into (index.html, one page per document, page images).",
)
@click.option(
    "--version", "version", type=click.IntRange(1), default=None, help="Plan version shown."
)
@click.option(
    "--compare",
    type=click.IntRange(1),
    default=None,
    help="Another plan version to set beside it: chunks unchanged, split, merged or new.",
)
@workspace_option
def inspect_command(
    documents: tuple[str, ...],
    out: Path,
    version: int | None,
    compare: int | None,
    workspace: Path,
) -> None:
    """Write a self-contained HTML report of DOCUMENTS (default: every document): page images
    beside their chunks, elements in chunk colours, sizes, warnings and plan versions."""
    ws = open_workspace(workspace)
    try:
        if documents:
            records = [ws.find_document(reference) for reference in documents]
        else:
            records = [d for d in ws.documents() if d.status is not DocumentStatus.DELETED]
        summary = write_report(ws, records, out, version=version, compare=compare)
    except DracError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        ws.close()
    index = markup(summary.index)
    stdout.print(f"{len(summary.documents)} document report(s) written; open {index}")
    for source, problem in summary.problems:
        stdout.print(f"  [yellow]{markup(source)}[/]: {markup(problem)}", highlight=False)
    for source in summary.skipped:
        stdout.print(f"  {markup(source)}: no plan to show (listed on the index)", highlight=False)
