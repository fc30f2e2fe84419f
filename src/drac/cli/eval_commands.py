"""`drac eval` (retrieval quality by the paper's protocol) and `drac cost` (the token bill)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from drac.cli import cli
from drac.cli.options import json_option, open_workspace, print_json, stdout, workspace_option
from drac.costs.prices import load_prices
from drac.costs.report import CostReport, cost_report
from drac.embedders.cache import CachingEmbedder
from drac.errors import DracError
from drac.evaluation.baseline import fixed_chunk_set, pdf_sibling, pdf_text
from drac.evaluation.chunksets import ChunkSet, EvalChunk, load_chunk_set
from drac.evaluation.queries import load_queries
from drac.evaluation.report import print_report
from drac.evaluation.runner import evaluate
from drac.local.workspace import Workspace
from drac.models import DocumentStatus
from drac.settings import EmbedderSettings
from drac.terminal import markup, printable


def workspace_chunk_set(ws: Workspace) -> ChunkSet:
    """The workspace's active chunks as the `drac` chunk set."""
    chunks = tuple(
        EvalChunk(chunk_id=c.chunk_id, source=c.source, text=c.text) for c in ws.active_chunks()
    )
    return ChunkSet(name="drac", chunks=chunks)


def workspace_fixed_set(ws: Workspace) -> tuple[ChunkSet, int]:
    """Fixed 1,000/200 windows over each live document's PDF text layer when its PDF is
    found, else over its converted Markdown; also returns how many used the PDF."""
    documents: list[tuple[str, str]] = []
    from_pdf = 0
    for record in ws.documents():
        if record.status in (DocumentStatus.DELETED, DocumentStatus.FAILED):
            continue
        pdf = pdf_sibling(Path(record.source_path)) if record.source_path else None
        text = pdf_text(pdf) if pdf else ""
        if text.strip():
            from_pdf += 1
        else:
            try:
                text = ws.get_markdown(record.document_id)
            except KeyError:
                continue
        documents.append((record.source, text))
    return fixed_chunk_set(documents, name="fixed 1000/200"), from_pdf


@cli.command("eval")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workspace_option
@click.option(
    "--baseline",
    type=click.Choice(["fixed"]),
    multiple=True,
    help="Add the fixed 1,000-character / 200-overlap windows over the same documents.",
)
@click.option(
    "--compare",
    "compare",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Another chunk set as JSON Lines (at least text and source); repeatable.",
)
@click.option(
    "--embedder",
    default=None,
    help="embedded, embedded:c, none, bedrock, openai or local:PATH (default: $DRAC_EMBEDDER, "
    "else embedded where installed).",
)
@click.option("-k", "k", type=click.IntRange(1, 100), default=6, show_default=True)
@json_option
def eval_command(
    queries: Path,
    workspace: Path,
    baseline: tuple[str, ...],
    compare: tuple[Path, ...],
    embedder: str | None,
    k: int,
    as_json: bool,
) -> None:
    """Score retrieval on QUERIES.csv: R@k, R@3, P@3, P@k, MRR, NDCG@k per chunk set."""
    from drac.embedders.cache import MemoryVectorStore
    from drac.embedders.factory import embedder_from_spec

    sets: list[ChunkSet] = []
    notes: list[str] = []
    ws = open_workspace(workspace) if (workspace / "drac.sqlite").exists() else None
    if ws is None and baseline:
        raise click.UsageError(f"--baseline needs a workspace; none at {workspace}")
    try:
        if ws is not None:
            drac_set = workspace_chunk_set(ws)
            if drac_set.chunks:
                sets.append(drac_set)
            if "fixed" in baseline:
                fixed, from_pdf = workspace_fixed_set(ws)
                sets.append(fixed)
                notes.append(
                    f"fixed windows: {from_pdf} document(s) from the PDF text layer, "
                    f"{len(fixed.documents) - from_pdf} from converted Markdown"
                )
        # a chunk set is named after its file, and the report prints the name
        sets.extend(load_chunk_set(path, printable(path.stem)) for path in compare)
        chosen = embedder_from_spec(
            embedder if embedder is not None else EmbedderSettings.from_env().spec
        )
        if not sets:
            raise click.UsageError("nothing to evaluate: ingest documents or pass --compare")
        if chosen is not None:
            # by text digest: the workspace's vectors (those of its ingest too) are reused, and
            # the baselines' and the queries' are kept in it for the next run
            chosen = CachingEmbedder(chosen, ws.vectors if ws is not None else MemoryVectorStore())
            _embed_missing(chosen, sets, quiet=as_json)
        report = evaluate(sets, load_queries(queries), chosen, k=k)
    except (DracError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if ws is not None:
            ws.close()
    if notes:
        report = report.model_copy(update={"notes": (*report.notes, *notes)})
    if as_json:
        print_json(report)
        return
    wide = stdout if stdout.is_terminal else Console(soft_wrap=True, width=200)
    print_report(report, wide)


def _embed_missing(cached: CachingEmbedder, sets: list[ChunkSet], quiet: bool) -> None:
    """Embed the chunk texts of every set that have no vector yet, with a progress bar."""
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from drac.cli.options import stderr

    texts = [chunk.text for chunk_set in sets for chunk in chunk_set.chunks]
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=stderr, disable=quiet) as progress:
        task = progress.add_task(f"embed ({escape(cached.name)})", total=None, visible=False)

        def report(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total, visible=True)

        cached.fill(texts, report)


def _money(value: float) -> str:
    return f"${value:,.4f}" if value < 100 else f"${value:,.0f}"


def print_cost(report: CostReport) -> None:
    """Print the per-document table, the totals and the projection."""
    table = Table(title=f"Model calls by stage (prices as of {report.prices_as_of})")
    for name in (
        "document",
        "pages",
        "conversion in/out",
        "planning in/out",
        "embedding in",
        "dollars",
        f"agentic ({markup(report.reference_model)})",
    ):
        table.add_column(name, justify="left" if name == "document" else "right")
    for doc in report.documents:
        conv, plan, emb = (doc.stages[s] for s in ("conversion", "planning", "embedding"))
        table.add_row(
            markup(doc.source),
            str(doc.pages),
            f"{conv.input_tokens:,}/{conv.output_tokens:,}",
            f"{plan.input_tokens:,}/{plan.output_tokens:,}",
            f"{emb.input_tokens:,}",
            _money(doc.total_dollars),
            _money(doc.agentic.dollars),
        )
    t = report.totals
    table.add_row(
        "[bold]total[/]",
        str(report.pages),
        f"{t['conversion'].input_tokens:,}/{t['conversion'].output_tokens:,}",
        f"{t['planning'].input_tokens:,}/{t['planning'].output_tokens:,}",
        f"{t['embedding'].input_tokens:,}",
        _money(sum(s.dollars for s in t.values())),
        _money(report.agentic_total.dollars),
    )
    stdout.print(table)
    stdout.print(
        f"Dollars: conversion {_money(t['conversion'].dollars)}, planning "
        f"{_money(t['planning'].dollars)}, embedding {_money(t['embedding'].dollars)}."
    )
    for doc in report.documents:
        if len(doc.models) > 1:
            shown = "; ".join(
                f"{markup(name)} {cost.calls} calls {cost.input_tokens:,}/{cost.output_tokens:,}"
                f" {_money(cost.dollars)}"
                for name, cost in doc.models.items()
            )
            stdout.print(f"Conversion of {markup(doc.source)} by model: {shown}.")
    if report.escalation is not None:
        e = report.escalation
        stdout.print(
            f"Escalation to {markup(e.second_model)}: conversion {_money(e.with_escalation)} "
            f"(the first model alone {_money(e.first_only)}) vs every page with "
            f"{markup(e.second_model)} {_money(e.all_with_second)} (its prices, the first "
            "model's tokens)."
        )
    if t["conversion"].reused:
        stdout.print(
            f"Conversion batches reused from an earlier version of their document (pages "
            f"unchanged, no model call): {t['conversion'].reused:,}; sent to the model: "
            f"{t['conversion'].calls:,}."
        )
    stdout.print(
        f"Chunking at {markup(report.reference_model)} prices: drac planning "
        f"{_money(report.planning_at_reference)} vs agentic (document read and rewritten, "
        f"4 chars/token: {report.agentic_total.input_tokens:,} in / "
        f"{report.agentic_total.output_tokens:,} out) {_money(report.agentic_total.dollars)}."
    )
    p = report.projection
    stdout.print(
        f"Per 1,000,000 pages: first index {_money(p.first_index)}; each re-index "
        f"{_money(p.reindex)} (planning + embedding, no conversion) vs agentic "
        f"{_money(p.agentic_reindex)}; chunking alone at {markup(report.reference_model)} prices "
        f"{_money(p.drac_chunking_at_reference)} drac vs "
        f"{_money(p.agentic_chunking_at_reference)} agentic."
    )
    if not any(stage.calls for stage in t.values()):
        stdout.print(
            "[dim]No model calls are recorded in this workspace (offline conversion and rules"
            " planning cost nothing); ingest with --model bedrock|openai to see model costs.[/]"
        )
    for warning in report.warnings:
        stdout.print(f"[yellow]warning[/] {markup(warning)}")
    if report.unpriced_models:
        stdout.print(
            f"[yellow]No price for: {markup(', '.join(report.unpriced_models))} "
            "(counted as $0; add them with --prices).[/]"
        )


@cli.command("cost")
@workspace_option
@click.option(
    "--prices",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Price table overrides (TOML or JSON).",
)
@json_option
def cost_command(workspace: Path, prices: Path | None, as_json: bool) -> None:
    """Tokens and dollars per document and stage, the agentic equivalent, and projections."""
    try:
        table = load_prices(prices)
    except (ValueError, OSError) as exc:
        raise click.ClickException(f"bad price file: {exc}") from exc
    ws = open_workspace(workspace)
    try:
        records = [d for d in ws.documents() if d.status is not DocumentStatus.DELETED]
        sizes: dict[str, int] = {}
        for record in records:
            try:
                sizes[record.document_id] = len(ws.get_markdown(record.document_id))
            except KeyError:
                sizes[record.document_id] = 0
        report = cost_report(records, ws.ledger_entries(), sizes, table)
    finally:
        ws.close()
    if as_json:
        print_json(report)
        return
    print_cost(report)
