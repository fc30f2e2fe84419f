"""`drac export`, `search`, `show` and `status`: the commands that read the workspace."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from drac.cli import cli
from drac.cli.options import json_option, open_workspace, print_json, stdout, workspace_option
from drac.errors import DracError
from drac.local.workspace import Workspace
from drac.models import DocumentRecord, Element
from drac.planning.llm import one_line, preview


@cli.command()
@workspace_option
def export(workspace: Path) -> None:
    """Write every chunk of the active plan versions to stdout as JSON Lines."""
    ws = open_workspace(workspace)
    try:
        for chunk in ws.active_chunks():
            sys.stdout.write(chunk.model_dump_json() + "\n")
    finally:
        ws.close()


@cli.command()
@click.argument("query")
@click.option(
    "-k", "k", type=click.IntRange(1, 1000), default=6, show_default=True, help="Results."
)
@workspace_option
@json_option
def search(query: str, k: int, workspace: Path, as_json: bool) -> None:
    """Full-text (BM25) search over the active chunks."""
    ws = open_workspace(workspace)
    try:
        hits = ws.index.search(query, k)
    finally:
        ws.close()
    if as_json:
        print_json([{"score": hit.score, **hit.chunk.model_dump(mode="json")} for hit in hits])
        return
    if not hits:
        stdout.print("no matching chunks")
        return
    for rank, hit in enumerate(hits, start=1):
        chunk = hit.chunk
        pages = ",".join(map(str, chunk.pages))
        stdout.print(
            f"[bold]{rank}. {escape(chunk.source)}[/] p.{pages}  score {hit.score:.2f}  "
            f"{chunk.chunk_id}"
        )
        stdout.print(f"   [dim]{escape(chunk.breadcrumb)}[/]")
        body = one_line(_body(chunk.text, chunk.breadcrumb), 240)
        stdout.print(f"   {escape(body)}\n", highlight=False)


def _body(text: str, breadcrumb: str) -> str:
    return text[len(breadcrumb) + 2 :] if breadcrumb and text.startswith(breadcrumb) else text


@cli.command()
@workspace_option
@json_option
def status(workspace: Path, as_json: bool) -> None:
    """List the workspace's documents with status, pages, chunks and plan version."""
    ws = open_workspace(workspace)
    try:
        documents = ws.documents()
        counts = Counter(chunk.document_id for chunk in ws.active_chunks())
    finally:
        ws.close()
    if as_json:
        print_json(
            [{**d.model_dump(mode="json"), "chunks": counts[d.document_id]} for d in documents]
        )
        return
    table = Table(title=f"drac workspace {escape(str(workspace))}")
    notes = {d.document_id: d.error or (d.warnings[0] if d.warnings else "") for d in documents}
    for column in ("document", "source", "format", "status", "pages", "chunks", "plan"):
        table.add_column(column, no_wrap=column != "source", overflow="fold")
    if any(notes.values()):
        table.add_column("note", overflow="fold")
    for d in documents:
        note = [escape(notes[d.document_id][:80])] if any(notes.values()) else []
        table.add_row(
            d.document_id[:12],
            escape(d.source),
            escape(d.format),
            d.status.value,
            str(d.pages),
            str(counts[d.document_id]),
            f"v{d.active_version}" if d.active_version else "-",
            *note,
        )
    stdout.print(table)
    totals = Counter(d.status.value for d in documents)
    stdout.print(", ".join(f"{n} {s}" for s, n in sorted(totals.items())) or "no documents")


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
            sys.stdout.write(ws.get_markdown(record.document_id))
            return
        _show(ws, record, version, as_json)
    finally:
        ws.close()


def _show(ws: Workspace, record: DocumentRecord, version: int | None, as_json: bool) -> None:
    elements = ws.get_elements(record.document_id)
    sections = ws.get_sections(record.document_id) if elements else []
    wanted = version or record.active_version
    try:
        plan = ws.plans.get_plan(record.document_id, wanted) if wanted else None
    except KeyError as exc:
        raise click.ClickException(str(exc)) from exc
    versions = ws.plans.versions(record.document_id)
    if as_json:
        print_json(
            {
                "document": record,
                "elements": elements,
                "sections": sections,
                "plan": plan,
                "versions": versions,
            }
        )
        return
    stdout.print(
        f"[bold]{escape(record.source)}[/] {record.document_id}  {escape(record.format)},"
        f" {record.pages} page(s), {record.status.value}, active plan v{record.active_version}"
    )
    if record.error:
        stdout.print(f"[red]error[/] {escape(record.error)}")
    for warning in record.warnings:
        stdout.print(f"[yellow]warning[/] {escape(warning)}")
    stdout.print(_outline(elements))
    stdout.print(f"\n[bold]{len(sections)} section(s)[/]")
    for section in sections:
        ids = section.element_ids
        stdout.print(f"  {section.id}: {ids[0]} .. {ids[-1]} ({len(ids)} elements)")
    stdout.print("\n[bold]plan versions[/]")
    for row in versions:
        marker = "*" if row["version"] == record.active_version else " "
        stdout.print(
            f" {marker} v{row['version']} {escape(str(row['strategy']))} ({row['planner']}) tokens"
            f" {row['input_tokens']}/{row['output_tokens']} {row['created_at']}"
        )
    if plan:
        stdout.print(f"\n[bold]chunks of v{plan.version}[/]")
        for index, ids in enumerate(plan.chunk_ids_arrays, start=1):
            stdout.print(f"  {index:3d}. {' '.join(ids)}", highlight=False)


def _outline(elements: list[Element]) -> Tree:
    root = Tree("[bold]elements[/]")
    stack: list[tuple[int, Tree]] = [(0, root)]
    for element in elements:
        if element.is_heading:
            level = element.level or 1
            while stack[-1][0] >= level:
                stack.pop()
            node = stack[-1][1].add(
                f"[bold]{element.id}[/] {escape(element.title)}  [dim]p.{element.page}[/]"
            )
            stack.append((level, node))
        else:
            stack[-1][1].add(
                f"{element.id} [dim]{element.kind.value} {len(element.text)}c p.{element.page}[/]"
                f" {escape(preview(element, 70))}"
            )
    return root
