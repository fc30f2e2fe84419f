"""Render an evaluation report: rich tables for people, Markdown for BENCHMARKS.md."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from drac.evaluation.runner import EvalReport

GROUP_METRIC = "R@6"


def _metric_names(report: EvalReport) -> list[str]:
    return list(report.results[0].overall) if report.results else []


def _group_metric(report: EvalReport) -> str:
    names = _metric_names(report)
    wanted = f"R@{report.k}"
    return wanted if wanted in names else (names[0] if names else GROUP_METRIC)


def overall_table(report: EvalReport) -> Table:
    """Side-by-side table: one row per chunk set and retriever, one column per metric."""
    table = Table(title=f"Retrieval, top-{report.k}, {report.queries_used} queries")
    table.add_column("chunk set")
    table.add_column("retriever")
    table.add_column("chunks", justify="right")
    table.add_column("mean chars", justify="right")
    for name in _metric_names(report):
        table.add_column(name, justify="right")
    for result in report.results:
        table.add_row(
            escape(result.chunk_set),
            escape(result.retriever),
            str(result.chunks),
            f"{result.mean_chars:.0f}",
            *(f"{value:.3f}" for value in result.overall.values()),
        )
    return table


def _group_cells(report: EvalReport, group: str, metric: str) -> list[tuple[str, list[str]]]:
    rows = []
    for result in report.results:
        groups = result.by_query_type if group == "query_type" else result.by_company
        cells = [
            f"{groups[name][metric]:.3f}" if name in groups else "-"
            for name in report.group_sizes.get(group, {})
        ]
        rows.append((result.label, cells))
    return rows


def group_table(report: EvalReport, group: str) -> Table:
    """One row per system, one column per query type (or company, with its query count)."""
    metric = _group_metric(report)
    table = Table(title=f"{metric} by {group.replace('_', ' ')}")
    table.add_column("chunk set / retriever")
    for name, count in report.group_sizes.get(group, {}).items():
        table.add_column(f"{escape(name)} ({count})", justify="right")
    for label, cells in _group_cells(report, group, metric):
        table.add_row(escape(label), *cells)
    return table


def print_report(report: EvalReport, console: Console | None = None) -> None:
    """Print the overall table, the per-type and per-company tables, and the notes."""
    console = console or Console()
    console.print(escape(report.selection_note))
    embedder = report.embedder or "none (BM25 only)"
    console.print(
        f"Embedder: {escape(embedder)}. Relevance: >= {report.threshold:.0%} of one supporting "
        "fact's content words."
    )
    for note in report.notes:
        console.print(f"[bold]Note:[/bold] {escape(note)}")
    console.print(overall_table(report))
    console.print(group_table(report, "query_type"))
    console.print(group_table(report, "company"))


def markdown_report(report: EvalReport) -> str:
    """Return the overall and per-type results as Markdown tables."""
    names = _metric_names(report)
    lines = [
        report.selection_note,
        "",
        f"Embedder: {report.embedder or 'none (BM25 only)'}; top-{report.k}.",
        "",
        "| chunk set | retriever | chunks | mean chars | " + " | ".join(names) + " |",
        "|---|---|---:|---:|" + "---:|" * len(names),
    ]
    for r in report.results:
        values = " | ".join(f"{v:.3f}" for v in r.overall.values())
        lines.append(
            f"| {r.chunk_set} | {r.retriever} | {r.chunks} | {r.mean_chars:.0f} | {values} |"
        )
    for group in ("query_type", "company"):
        metric = _group_metric(report)
        names = [f"{n} ({c})" for n, c in report.group_sizes.get(group, {}).items()]
        lines += ["", f"{metric} by {group.replace('_', ' ')}:", ""]
        lines.append("| chunk set / retriever | " + " | ".join(names) + " |")
        lines.append("|---|" + "---:|" * len(names))
        for label, cells in _group_cells(report, group, metric):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
