"""`drac render`: write the page images of documents exactly as the pipeline renders them.

Documents render `--jobs` at a time, each in a contained pdfium worker that goes on to the
next document when it is done with one; the workers start before the rest of the command is
imported, so their start-up overlaps it (what the command imports is what it needs first).
"""

from __future__ import annotations

import os
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, NoReturn

import click

from drac.cli import cli

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from drac.documents.options import ConversionOptions

MAX_JOBS = 4
"""Documents rendered at once by default, at most (one pdfium worker each)."""


def default_jobs() -> int:
    """Documents rendered at once by default: one a core this process may use, at most
    MAX_JOBS."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cores))


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
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 32),
    default=default_jobs(),
    show_default=True,
    help="Documents rendered at once, each in a contained worker of its own.",
)
def render_command(
    files: tuple[str, ...], out_dir: str, dpi: int, max_side: int, jobs: int
) -> None:
    """Render each FILE's pages to OUT/<file stem>/page-0001.png, ... (as ingest would)."""
    from drac.documents.pdf.limits import PDF_LIMITS
    from drac.documents.sandbox.containment import start_ahead

    jobs = min(jobs, len(files))
    start_ahead(PDF_LIMITS, jobs)  # their start-up overlaps the imports below

    from concurrent.futures import ThreadPoolExecutor

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from drac.documents.options import ConversionOptions
    from drac.local.cores import result_of

    console = Console(stderr=True)
    options = ConversionOptions(dpi=dpi, max_side_px=max_side)
    failed = done = 0
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:

        def one(name: str) -> _Result:
            return _render_one_file(Path(name), Path(out_dir), options, progress)

        executor = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="drac-render")
        try:
            futures = [executor.submit(one, name) for name in files]
            for future in futures:  # printed in the files' order
                result = result_of(future)
                failed += result.failed
                done += 1
                progress.console.print(result.line)
        except KeyboardInterrupt:
            progress.stop()
            _abandon(console, done, len(files))
        finally:
            executor.shutdown(wait=False, cancel_futures=True)  # all done, or a bug raised
    if failed:
        console.print(f"{failed} of {len(files)} documents failed")
        sys.exit(1)


def page_folder_name(path: Path) -> str:
    """The subfolder of --out a file's pages go to: its stem, or its whole name with the
    dots made underscores when the stem is only dots (`...pdf` must not write to `..`)."""
    stem = path.stem
    return stem if stem.strip(".") else path.name.replace(".", "_")


class _Result(NamedTuple):
    line: str
    failed: bool


def _abandon(console: Console, done: int, total: int) -> NoReturn:
    """Stop at once on Ctrl-C: waiting for the threads would finish the documents in
    progress (and the queued ones) first; the workers die with drac."""
    console.print(f"[yellow]interrupted[/]: {done} of {total} document(s) rendered")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def _render_one_file(
    path: Path,
    out_root: Path,
    options: ConversionOptions,
    progress: Progress,
) -> _Result:
    from drac.errors import DocumentError
    from drac.local.files import shown_path
    from drac.terminal import markup

    shown = markup(shown_path(path.name))
    try:
        written = _render_file(path, out_root, options, progress)
    except (DocumentError, OSError) as exc:
        return _Result(f"[red]{shown}: {markup(str(exc))}[/red]", True)
    return _Result(f"{shown}: {markup(written)}", False)


def _render_file(
    path: Path,
    out_root: Path,
    options: ConversionOptions,
    progress: Progress,
) -> str:
    from drac.documents.intake.detect import DocumentFormat, detect_format
    from drac.documents.pdf.render import render_document
    from drac.errors import DocumentError
    from drac.local.files import shown_path
    from drac.terminal import markup

    if path.stat().st_size > options.max_file_bytes:  # before reading it
        raise DocumentError(f"file is larger than {options.max_file_bytes} bytes")
    data = path.read_bytes()
    detection = detect_format(data, path.name)
    shown = markup(shown_path(path.name))
    if detection.warning:
        progress.console.print(f"[yellow]{shown}: {markup(detection.warning)}[/yellow]")
    if detection.format.is_text:
        return "no pages to render (Markdown and text are used as-is)"
    pdf = data
    if detection.format is not DocumentFormat.PDF:  # LibreOffice and Pillow only when needed
        from drac.documents.intake.normalise import normalise_to_pdf

        pdf = normalise_to_pdf(
            data,
            detection.format,
            timeout_s=options.libreoffice_timeout_s,
            max_pages=options.max_pages,
        )
    rendered = render_document(pdf, options.render_options())
    for warning in rendered.facts.warnings:
        progress.console.print(f"[yellow]{shown}: {markup(warning)}[/yellow]")
    total = rendered.facts.pages
    target = out_root / page_folder_name(path)
    target.mkdir(parents=True, exist_ok=True)
    task = progress.add_task(shown, total=total)
    with closing(rendered.pages) as pages:  # closed early: the worker stops (and is replaced)
        for page in pages:
            (target / f"page-{page.number:04d}.png").write_bytes(page.png)
            progress.advance(task)
    return f"{total} pages -> {target}"
