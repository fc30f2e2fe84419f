"""`drac render`: write the page images of documents exactly as the pipeline renders them."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from drac.cli import cli
from drac.documents.intake.detect import detect_format
from drac.documents.intake.normalise import normalise_to_pdf
from drac.documents.options import ConversionOptions
from drac.documents.pdf.render import page_count, render_pages
from drac.errors import DocumentError
from drac.local.files import shown_path
from drac.terminal import markup


@cli.command("render")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    required=True,
    metavar="FOLDER",
    type=click.Path(file_okay=False),
    help="Folder to write into: one subfolder per file, named after it.",
)
@click.option(
    "--dpi",
    default=200,
    show_default=True,
    type=click.IntRange(36, 600),
    help="Resolution the pages are rendered at, in dots per inch.",
)
@click.option(
    "--max-side",
    default=1568,
    show_default=True,
    type=click.IntRange(64, 8000),
    help="Pixels of an image's longest side at most (larger pages are scaled down).",
)
def render_command(files: tuple[str, ...], out_dir: str, dpi: int, max_side: int) -> None:
    """Render each FILE's pages to OUT/<file stem>/page-0001.png, ... (as ingest would)."""
    console = Console(stderr=True)
    options = ConversionOptions(dpi=dpi, max_side_px=max_side)
    failed = 0
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        for name in files:
            path = Path(name)
            shown = markup(shown_path(path.name))
            try:
                written = _render_file(path, Path(out_dir), options, progress)
            except (DocumentError, OSError) as exc:
                failed += 1
                progress.console.print(f"[red]{shown}: {markup(str(exc))}[/red]")
                continue
            progress.console.print(f"{shown}: {markup(written)}")
    if failed:
        console.print(f"{failed} of {len(files)} documents failed")
        sys.exit(1)


def page_folder_name(path: Path) -> str:
    """The subfolder of --out a file's pages go to: its stem, or its whole name with the
    dots made underscores when the stem is only dots (`...pdf` must not write to `..`)."""
    stem = path.stem
    return stem if stem.strip(".") else path.name.replace(".", "_")


def _render_file(path: Path, out_root: Path, options: ConversionOptions, progress: Progress) -> str:
    if path.stat().st_size > options.max_file_bytes:  # before reading it
        raise DocumentError(f"file is larger than {options.max_file_bytes} bytes")
    data = path.read_bytes()
    detection = detect_format(data, path.name)
    shown = markup(shown_path(path.name))
    if detection.warning:
        progress.console.print(f"[yellow]{shown}: {markup(detection.warning)}[/yellow]")
    if detection.format.is_text:
        return "no pages to render (Markdown and text are used as-is)"
    pdf = normalise_to_pdf(
        data, detection.format, timeout_s=options.libreoffice_timeout_s, max_pages=options.max_pages
    )
    total = page_count(pdf, options.max_pages)
    target = out_root / page_folder_name(path)
    target.mkdir(parents=True, exist_ok=True)
    task = progress.add_task(shown, total=total)
    for page in render_pages(pdf, options.render_options()):
        (target / f"page-{page.number:04d}.png").write_bytes(page.png)
        progress.advance(task)
    return f"{total} pages -> {target}"
