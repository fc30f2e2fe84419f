"""`drac ingest` and `drac replan`: the commands that write to the workspace."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from drac.cli import cli
from drac.cli.embed_step import embed_new_chunks, embed_option
from drac.cli.models_setup import build_models
from drac.cli.options import (
    json_option,
    model_option,
    open_workspace,
    print_json,
    stderr,
    strategy_options,
    workspace_option,
)
from drac.documents.spreadsheets import SPREADSHEET_FORMATS, table_rows_advice
from drac.errors import DracError, WorkspaceError
from drac.local.pipeline import (
    SCAN_HINT,
    IngestSettings,
    Outcome,
    collect_inputs,
    ingest_file,
    live_documents,
    replan_document,
    shown_path,
)
from drac.local.workspace import Workspace
from drac.models import DocumentRecord, Strategy


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=False,
    )


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@workspace_option
@strategy_options
@model_option
@click.option("--tenant", default=None, help="Tenant the documents belong to.")
@click.option("--force", is_flag=True, help="Convert again even when the content is unchanged.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 32),
    default=min(4, os.cpu_count() or 1),
    show_default=True,
    help="Documents processed at once.",
)
@embed_option
@json_option
def ingest(
    paths: tuple[Path, ...],
    workspace: Path,
    strategy: Strategy,
    model: str | None,
    tenant: str | None,
    force: bool,
    jobs: int,
    embed: bool | None,
    as_json: bool,
) -> None:
    """Ingest files or folders (PDF, DOCX, PPTX, HTML, spreadsheets, Markdown, text, scans)."""
    vision, text_model = build_models(model, strategy)
    files, outcomes = collect_inputs(list(paths))
    for missing in outcomes:
        _print_failed(stderr, missing)
    settings = IngestSettings(strategy=strategy, force=force, tenant=tenant)
    ws = open_workspace(workspace, create=True)
    try:

        def run(path: Path, report: Callable[[int, int], None]) -> Outcome:
            return ingest_file(
                path, ws, settings, vision=vision, text_model=text_model, progress=report
            )

        with _writing(ws):
            outcomes.extend(_run_all(files, run, jobs, "ingest"))
            embed_new_chunks(ws, embed, quiet=as_json)
    finally:
        ws.close()
    _report(outcomes, as_json)


def _run_all(
    files: Sequence[Path],
    run: Callable[[Path, Callable[[int, int], None]], Outcome],
    jobs: int,
    label: str,
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    with _progress() as progress:
        overall = progress.add_task(label, total=len(files))

        def one(path: Path) -> Outcome:
            name = escape(shown_path(path.name)[:40])
            task = progress.add_task(f"  {name}", total=None, visible=False)

            def report(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total, visible=total > 1)

            try:
                return run(path, report)
            except Exception as exc:  # a bug in one document must not lose the summary
                error = f"unexpected error ({type(exc).__name__}): {exc}"
                return Outcome(path=shown_path(path), status="FAILED", error=error)
            finally:
                progress.remove_task(task)

        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            futures = {pool.submit(one, path): path for path in files}
            for future in as_completed(futures):
                outcome = future.result()
                outcomes.append(outcome)
                if outcome.failed:
                    _print_failed(progress.console, outcome)
                progress.advance(overall)
        except KeyboardInterrupt:
            progress.stop()
            _abandon(len(outcomes), len(files))
        pool.shutdown()
    order = {shown_path(path): index for index, path in enumerate(files)}
    return sorted(outcomes, key=lambda o: order.get(o.path, -1))


def _abandon(done: int, total: int) -> NoReturn:
    """Stop at once on Ctrl-C, abandoning the documents in progress.

    Waiting for the worker threads would finish every queued document first. Exiting the
    process is what `kill -9` does, which the workspace survives: nothing of an unfinished
    document is stored, and each LibreOffice run dies with drac (see `lo_guard`).
    """
    stderr.print(
        f"[yellow]interrupted[/]: {done} of {total} document(s) finished; those in progress "
        "were abandoned (nothing of them is stored)"
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def _print_failed(console: Console, outcome: Outcome) -> None:
    console.print(f"[red]FAILED[/] {escape(outcome.path)}: {escape(outcome.error or '')}")


@contextmanager
def _writing(ws: Workspace) -> Iterator[None]:
    try:
        with ws.writing():
            yield
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc


def _report(outcomes: list[Outcome], as_json: bool) -> None:
    failed = [outcome for outcome in outcomes if outcome.failed]
    if as_json:
        print_json({"outcomes": outcomes, "failed": len(failed)})
    else:
        counts = Counter(outcome.status for outcome in outcomes)
        table = Table(title="drac summary")
        for column in ("status", "documents", "pages", "chunks"):
            table.add_column(column, justify="left" if column == "status" else "right")
        for status, count in sorted(counts.items()):
            subset = [outcome for outcome in outcomes if outcome.status == status]
            table.add_row(
                status,
                str(count),
                str(sum(outcome.pages for outcome in subset)),
                str(sum(outcome.chunks for outcome in subset)),
            )
        stderr.print(table)
        for outcome in outcomes:
            warnings = [warning for warning in outcome.warnings if warning != SCAN_HINT]
            for warning in warnings[:3]:
                name = escape(Path(outcome.path).name)
                stderr.print(f"[yellow]warning[/] {name}: {escape(warning)}")
        scanned = [outcome for outcome in outcomes if SCAN_HINT in outcome.warnings]
        if scanned:
            stderr.print(f"[yellow]hint[/] {len(scanned)} document(s) PARTIAL: {SCAN_HINT}")
        for outcome in failed:
            _print_failed(stderr, outcome)
    if failed:
        raise SystemExit(1)


def _table_rows_note(ws: Workspace, record: DocumentRecord, strategy: Strategy) -> list[str]:
    """Say so when a spreadsheet's stored rows are written another way than asked."""
    if record.format not in SPREADSHEET_FORMATS:
        return []
    advice = table_rows_advice(record.format, ws.get_elements(record.document_id), strategy)
    return [advice] if advice else []


@cli.command()
@click.argument("documents", nargs=-1)
@workspace_option
@strategy_options
@model_option
@embed_option
@json_option
def replan(
    documents: tuple[str, ...],
    workspace: Path,
    strategy: Strategy,
    model: str | None,
    embed: bool | None,
    as_json: bool,
) -> None:
    """Plan stored documents again (all, or those named) without converting anything."""
    _, text_model = build_models(model, strategy)
    ws = open_workspace(workspace)
    outcomes: list[Outcome] = []
    try:
        try:
            records = live_documents(ws, documents)
        except DracError as exc:
            raise click.ClickException(str(exc)) from exc
        with _writing(ws), _progress() as progress:
            task = progress.add_task("replan", total=len(records))
            for record in records:
                try:
                    outcome = replan_document(record, ws, strategy, text_model=text_model)
                    outcome.warnings[:0] = _table_rows_note(ws, record, strategy)
                    outcomes.append(outcome)
                except DracError as exc:
                    outcomes.append(
                        Outcome(
                            path=record.source,
                            document_id=record.document_id,
                            status="FAILED",
                            error=str(exc),
                        )
                    )
                    _print_failed(progress.console, outcomes[-1])
                progress.advance(task)
        embed_new_chunks(ws, embed, quiet=as_json)
    finally:
        ws.close()
    _report(outcomes, as_json)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@workspace_option
@json_option
def remove(paths: tuple[Path, ...], workspace: Path, as_json: bool) -> None:
    """Forget ingested files: a document no remaining path holds leaves search.

    Files on disk are not touched; ingesting a path again brings its document back.
    """
    ws = open_workspace(workspace)
    results: list[dict[str, str | None]] = []
    try:
        with _writing(ws):
            for path in paths:
                source = shown_path(path.resolve())
                held = ws.registry.source_document(source)
                retired = ws.remove_source(source) if held else None
                results.append({"path": shown_path(path), "document_id": held, "retired": retired})
    finally:
        ws.close()
    if as_json:
        print_json(results)
    else:
        for result in results:
            if result["document_id"] is None:
                stderr.print(f"[yellow]not ingested[/] {escape(str(result['path']))}")
            elif result["retired"]:
                stderr.print(f"removed {escape(str(result['path']))}: its document left search")
            else:
                stderr.print(
                    f"removed {escape(str(result['path']))}: its document stays (another path"
                    " holds the same content)"
                )
    if any(result["document_id"] is None for result in results):
        raise SystemExit(1)
