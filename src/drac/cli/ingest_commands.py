"""`drac ingest` and `drac replan`: the commands that write to the workspace."""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from drac.api.embedding import IngestEmbedding
from drac.api.errors import IngestInterrupted
from drac.api.operations import Removal, remove_reference
from drac.api.operations import table_rows_note as _table_rows_note
from drac.api.running import run_all
from drac.cli import cli
from drac.cli.embed_step import (
    embed_bar,
    embed_new_chunks,
    embed_option,
    ingest_embedding,
    warn_not_embedded,
)
from drac.cli.models_setup import build_escalation, build_models, conversion_options
from drac.cli.options import (
    chosen_strategy,
    json_option,
    model_option,
    open_workspace,
    print_json,
    stderr,
    strategy_options,
    workspace_option,
)
from drac.errors import DracError, MetadataError, WorkspaceError
from drac.local.errors import WorkspaceUnusableError
from drac.local.files import shown_path
from drac.local.inputs import Skipped, walk_inputs
from drac.local.office_ahead import OfficeAhead
from drac.local.outcome import Outcome
from drac.local.pipeline import (
    SCAN_HINT,
    IngestSettings,
    ingest_file,
    live_documents,
    replan_document,
)
from drac.local.workspace import Workspace
from drac.metadata import parse_assignments
from drac.models import Strategy
from drac.planning import PlanningCounts
from drac.planning.errors import ModelServerUnreachable
from drac.terminal import markup


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
@click.option(
    "--meta",
    "meta",
    multiple=True,
    metavar="KEY=VALUE",
    help="Metadata of every document ingested (repeatable; over each file's "
    "<file>.metadata.json; KEY:=JSON for a typed value).",
)
@click.option("--force", is_flag=True, help="Convert again even when the content is unchanged.")
@click.option(
    "--dry-run", is_flag=True, help="Quote pages, batches, tokens and dollars; convert nothing."
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 32),
    default=min(4, os.cpu_count() or 1),
    show_default=True,
    help="Documents processed at once.",
)
@click.option(
    "--escalate-to",
    default=None,
    metavar="BACKEND:MODEL",
    help="Convert again with this model the pages the conversion model converted doubtfully "
    "(verification flags over DRAC_ESCALATE_FLAGS, or failed); each keeps the better answer.",
)
@embed_option
@json_option
def ingest(
    paths: tuple[Path, ...],
    workspace: Path,
    strategy: Strategy | None,
    model: str | None,
    escalate_to: str | None,
    tenant: str | None,
    meta: tuple[str, ...],
    force: bool,
    dry_run: bool,
    jobs: int,
    embed: bool | None,
    as_json: bool,
) -> None:
    """Ingest files or folders (PDF, DOCX, PPTX, HTML, spreadsheets, Markdown, text, scans)."""
    if dry_run:  # a quote: nothing is converted or written, no workspace is made
        from drac.cli.quote_output import dry_run as quote

        quote(paths, chosen_strategy(strategy, workspace), model, as_json, escalate_to)
        return
    try:
        metadata = parse_assignments(meta, "--meta")
    except MetadataError as exc:
        raise click.BadParameter(str(exc).removeprefix("--meta: "), param_hint="--meta") from exc
    files, outcomes, skipped = walk_inputs(list(paths))
    for missing in outcomes:
        _print_failed(stderr, missing)
    if not files:  # nothing to ingest: no workspace made, no empty progress bar
        _report(outcomes, as_json, skipped)
        return
    named = set(paths)
    strategy = chosen_strategy(strategy, workspace)
    vision, text_model = build_models(model, strategy)
    if escalate_to and vision is None:
        raise click.UsageError(
            "--escalate-to converts again what a vision model converted: pass --model "
            "bedrock or --model openai (or set DRAC_MODEL)"
        )
    escalation = build_escalation(escalate_to) if vision is not None else None
    settings = IngestSettings(
        strategy=strategy,
        conversion=conversion_options(),
        force=force,
        tenant=tenant,
        metadata=metadata,
    )
    ws = open_workspace(workspace, create=True)
    try:
        embedding = ingest_embedding(ws, embed, jobs)
        ahead = OfficeAhead(files, ws, settings, named, embedding.budget)

        def run(path: Path, report: Callable[[int, int], None]) -> Outcome:
            return ahead.serve(
                path,
                ingest_file,
                path,
                ws,
                settings,
                vision=vision,
                text_model=text_model,
                escalation=escalation,
                progress=report,
                follow_symlinks=path in named,
            )

        with _writing(ws), ahead:
            outcomes.extend(_run_all(files, run, jobs, embedding))
    finally:
        ws.close()
    _report(outcomes, as_json, skipped)


def _run_all(
    files: Sequence[Path],
    run: Callable[[Path, Callable[[int, int], None]], Outcome],
    jobs: int,
    embedding: IngestEmbedding,
) -> list[Outcome]:
    """The documents run `jobs` at a time, their chunks embedded alongside as each is
    committed, then what is left; one bar for the documents, one for the embedding."""
    with _progress() as progress:
        events = embedding.events(_ProgressEvents(progress, "ingest", len(files)))
        embedding.start(embed_bar(progress, embedding))
        try:
            outcomes = run_all(files, run, jobs, events, embedding.budget)
        except IngestInterrupted as exc:
            progress.stop()
            _abandon(exc.done, exc.total)  # the process ends: the embedding thread with it
        _, warning = embedding.finish()
    if warning:
        warn_not_embedded(warning)
    return outcomes


class _ProgressEvents:
    """`run_all`'s events shown as rich progress bars: one overall, one per document."""

    def __init__(self, progress: Progress, label: str, total: int) -> None:
        self.progress = progress
        self.overall = progress.add_task(label, total=total)
        self.tasks: dict[Path, TaskID] = {}
        self.guard = threading.Lock()

    def started(self, path: Path) -> Callable[[int, int], None]:
        name = markup(shown_path(path.name)[:40])
        task = self.progress.add_task(f"  {name}", total=None, visible=False)
        with self.guard:
            self.tasks[path] = task

        def report(done: int, total: int) -> None:
            self.progress.update(task, completed=done, total=total, visible=total > 1)

        return report

    def ended(self, path: Path) -> None:
        with self.guard:
            task = self.tasks.pop(path)
        self.progress.remove_task(task)

    def finished(self, outcome: Outcome) -> None:
        if outcome.failed:
            _print_failed(self.progress.console, outcome)
        self.progress.advance(self.overall)


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


def _print_kept(console: Console, outcome: Outcome) -> None:
    version = f"v{outcome.plan_version}" if outcome.plan_version else "no plan"
    console.print(
        f"[red]not re-planned[/] {markup(outcome.path)} (stays {outcome.status}, {version}): "
        f"{markup(outcome.error or '')}"
    )


def _print_failed(console: Console, outcome: Outcome) -> None:
    console.print(f"[red]FAILED[/] {markup(outcome.path)}: {markup(outcome.error or '')}")


@contextmanager
def _writing(ws: Workspace) -> Iterator[None]:
    try:
        with ws.writing():
            yield
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc


_SKIPS_LISTED = 20
"""Skipped entries listed per reason on the terminal (all of them are in `--json`)."""


def _report(outcomes: list[Outcome], as_json: bool, skipped: Sequence[Skipped] = ()) -> None:
    failed = [outcome for outcome in outcomes if outcome.failed]
    if as_json:
        planned = [outcome.planning for outcome in outcomes if outcome.planning]
        print_json(
            {
                "outcomes": outcomes,
                "planning": _planning_total(planned) if planned else None,
                "seconds": round(sum(outcome.seconds for outcome in outcomes), 3),
                "not_replanned": sum(1 for outcome in outcomes if outcome.kept_version),
                "failed": len(failed),
                "skipped": len(skipped),
                "skipped_entries": skipped,
            }
        )
    else:
        counts = Counter(_row_label(outcome) for outcome in outcomes)
        table = Table(title="drac summary")
        for column in ("status", "documents", "pages", "chunks"):
            table.add_column(column, justify="left" if column == "status" else "right")
        for status, count in sorted(counts.items()):
            subset = [outcome for outcome in outcomes if _row_label(outcome) == status]
            table.add_row(
                status,
                str(count),
                str(sum(outcome.pages for outcome in subset)),
                str(sum(outcome.chunks for outcome in subset)),
            )
        if skipped:
            table.add_row("SKIPPED", str(len(skipped)), "-", "-")
        stderr.print(table)
        _print_skipped(skipped)
        for outcome in outcomes:
            warnings = [warning for warning in outcome.warnings if warning != SCAN_HINT]
            for warning in warnings[:3]:
                name = markup(Path(outcome.path).name)
                stderr.print(f"[yellow]warning[/] {name}: {markup(warning)}")
        reused = sum(outcome.reused_batches for outcome in outcomes)
        if reused:
            stderr.print(
                f"conversion: {reused} batch(es) reused from the earlier version of their file "
                "(pages unchanged, no model call)"
            )
        planned = [outcome.planning for outcome in outcomes if outcome.planning]
        if planned:
            stderr.print(f"planning: {_planning_total(planned).describe()}")
        scanned = [outcome for outcome in outcomes if SCAN_HINT in outcome.warnings]
        if scanned:
            stderr.print(f"[yellow]hint[/] {len(scanned)} document(s) PARTIAL: {SCAN_HINT}")
        if failed:  # each was printed when it failed
            stderr.print(f"[red]{len(failed)} document(s) FAILED[/] (the reasons are above)")
        kept = [outcome for outcome in outcomes if outcome.kept_version]
        if kept:
            stderr.print(
                f"[red]{len(kept)} document(s) not re-planned[/]: they keep their earlier plan "
                "(the reasons are above)"
            )
    if failed:
        raise SystemExit(1)


def _row_label(outcome: Outcome) -> str:
    """The summary row of an outcome: its status, or that a re-plan kept the document's
    plan (the document's own status is unchanged)."""
    return f"{outcome.status}, not re-planned" if outcome.kept_version else outcome.status


def _print_skipped(skipped: Sequence[Skipped]) -> None:
    """Each skipped folder entry with its reason (the first few of each reason)."""
    by_reason: dict[str, list[Skipped]] = {}
    for entry in skipped:
        by_reason.setdefault(entry.reason.split(" (")[0], []).append(entry)
    for entries in by_reason.values():
        for entry in entries[:_SKIPS_LISTED]:
            stderr.print(f"[dim]skipped[/] {markup(entry.path)}: {markup(entry.reason)}")
        if len(entries) > _SKIPS_LISTED:
            more = len(entries) - _SKIPS_LISTED
            stderr.print(f"[dim]skipped[/] {more} more like these (`--json` lists every one)")


def _planning_total(counts: Sequence[PlanningCounts]) -> PlanningCounts:
    fields = PlanningCounts.model_fields
    return PlanningCounts(**{name: sum(getattr(c, name) for c in counts) for name in fields})


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
    strategy: Strategy | None,
    model: str | None,
    embed: bool | None,
    as_json: bool,
) -> None:
    """Plan stored documents again (all, or those named) without converting anything.

    Strategy options given for all documents are remembered: later ingests and re-plans
    without options use them (`status` shows the workspace's strategy).
    """
    remember = strategy is not None and not documents
    strategy = chosen_strategy(strategy, workspace)
    _, text_model = build_models(model, strategy)
    ws = open_workspace(workspace)
    outcomes: list[Outcome] = []
    stopped = ""
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
                    if outcome.kept_version:
                        _print_kept(progress.console, outcome)
                except WorkspaceUnusableError:
                    raise  # the same for every document: one line, not one per document
                except ModelServerUnreachable as exc:  # every later call would fail the same
                    stopped = f"{exc} ({len(records) - len(outcomes)} document(s) not re-planned)"
                    break
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
            if remember and not stopped and not any(o.failed or o.kept_version for o in outcomes):
                ws.save_strategy(strategy)
        embed_new_chunks(ws, embed, quiet=as_json)
    finally:
        ws.close()
    if stopped:
        stderr.print(f"[red]stopped[/]: {markup(stopped)}")
    _report(outcomes, as_json)
    if stopped or any(outcome.kept_version for outcome in outcomes):
        raise SystemExit(1)


@cli.command()
@click.argument("documents", nargs=-1, required=True)
@workspace_option
@json_option
def remove(documents: tuple[str, ...], workspace: Path, as_json: bool) -> None:
    """Forget ingested files: a document no remaining path holds leaves search.

    Each DOCUMENT is what `status` and `show` take: a path, a file name, a stem or a document
    id (prefix). A path forgets that path; a name or id forgets every path of its document.
    Files on disk are not touched; ingesting a path again brings its document back.
    """
    ws = open_workspace(workspace)
    results: list[Removal] = []
    try:
        with _writing(ws):
            for reference in documents:
                results.extend(remove_reference(ws, reference))
    finally:
        ws.close()
    if as_json:
        print_json(results)
    else:
        for result in results:
            shown = markup(result.path)
            if result.document_id is None:
                stderr.print(f"[yellow]not ingested[/] {shown}: {markup(result.error)}")
            elif result.retired:
                stderr.print(f"removed {shown}: its document left search")
            else:
                stderr.print(
                    f"removed {shown}: its document stays (another path holds the same content)"
                )
    if any(result.document_id is None for result in results):
        raise SystemExit(1)
