"""`drac ingest --dry-run` and `drac quote s3://bucket/prefix`: a cost quote before work.

Both read each document (a local file, or an S3 object up to a byte cap), estimate its pages,
batches, model tokens and dollars with `drac.costs.quote`, and print a table; nothing is
converted, no workspace is made, nothing is written anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from drac.cli import cli
from drac.cli.options import json_option, print_json, stdout, strategy_options
from drac.costs.models import EscalationQuote, ModelCost, escalation_quote
from drac.costs.prices import PriceTable, load_prices
from drac.costs.quote import DocumentQuote, Quote, QuoteModels, quote_document, total_quote
from drac.documents.convert import ConversionOptions
from drac.errors import DracError
from drac.local.files import shown_path
from drac.local.inputs import read_limited, walk_inputs
from drac.models import Strategy
from drac.settings import Settings
from drac.terminal import markup

DEFAULT_OBJECT_CAP = 100 * 1024 * 1024
"""Largest S3 object `drac quote` downloads (a PDF must be read whole to count its pages)."""


def _settings(backend: str | None) -> Settings:
    try:
        settings = Settings.load()
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    return settings.changed(backend=backend) if backend else settings


def _models(settings: Settings, strategy: Strategy, *, embedding: bool) -> QuoteModels:
    """The models a run with these settings would call (none offline)."""
    if settings.models.backend == "offline":
        if strategy.planner == "llm":
            raise click.UsageError(
                "the llm planner needs a model: pass --model bedrock or --model openai"
                " (or set DRAC_MODEL), or use --planner rules"
            )
        return QuoteModels()
    try:
        conversion = settings.models.conversion_model
        planning = strategy.planner_model or settings.models.planning_model
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    return QuoteModels(
        backend=settings.models.backend,
        conversion=conversion,
        planning=planning if strategy.planner == "llm" else None,
        embedding=settings.models.embedding_model_id if embedding else None,
    )


def _quote_all(
    documents: Iterator[tuple[str, bytes | str]],
    models: QuoteModels,
    prices: PriceTable,
    strategy: Strategy,
    batch_pages: int,
    max_pages: int,
    max_output_tokens: int,
) -> Quote:
    unpriced: set[str] = set()
    rows: list[DocumentQuote] = []
    for name, data in documents:
        if isinstance(data, str):  # could not be read: the reason
            rows.append(DocumentQuote(name=name, error=data))
            continue
        rows.append(
            quote_document(
                data,
                name,
                models=models,
                prices=prices,
                strategy=strategy,
                batch_pages=batch_pages,
                max_pages=max_pages,
                max_output_tokens=max_output_tokens,
                unpriced=unpriced,
            )
        )
    return total_quote(
        rows, models=models, prices=prices, unpriced=unpriced, batch_pages=batch_pages
    )


def _money(value: float) -> str:
    return f"${value:,.4f}" if value < 100 else f"${value:,.0f}"


def print_quote(quote: Quote, as_json: bool, notes: Sequence[str] = ()) -> None:
    """Print a quote as a table with a total line (or as JSON)."""
    if as_json:
        print_json({"quote": quote, "notes": list(notes)})
        return
    table = Table(title="drac quote (estimated; nothing converted)")
    for column in ("document", "format", "pages", "batches", "tokens in", "tokens out", "dollars"):
        table.add_column(
            column,
            justify="left" if column in ("document", "format") else "right",
            overflow="fold" if column == "document" else "ellipsis",  # a name is never cut
        )
    for row in quote.documents:
        if row.error:
            table.add_row(
                markup(row.name),
                "-",
                "-",
                "-",
                "-",
                "-",
                f"[red]not quoted[/]: {markup(row.error)}",
            )
            continue
        pages = f"~{row.pages}" if row.pages_estimated else str(row.pages)
        table.add_row(
            markup(row.name),
            row.format,
            pages,
            str(row.batches),
            f"~{row.input_tokens:,}",
            f"~{row.output_tokens:,}",
            f"~{_money(row.dollars)}",
        )
    table.add_row(
        "[bold]total[/]",
        "",
        str(quote.pages),
        str(quote.batches),
        f"~{quote.input_tokens:,}",
        f"~{quote.output_tokens:,}",
        f"~{_money(quote.dollars)}",
    )
    stdout.print(table)
    m, a = quote.models, quote.assumptions
    if m.conversion is None:
        stdout.print("offline: conversion and planning make no model calls ($0 in model tokens).")
    else:
        stdout.print(
            f"models ({m.backend}): conversion {markup(m.conversion)}, planning "
            f"{markup(m.planning or 'rules (no model)')}"
            + (f", embedding {markup(m.embedding)}" if m.embedding else "")
            + f"; prices as of {quote.prices_as_of}."
        )
        stdout.print(
            f"dollars: conversion {_money(quote.conversion.dollars)}, planning "
            f"{_money(quote.planning.dollars)}, embedding {_money(quote.embedding.dollars)}."
        )
    stdout.print(
        f"[dim]assumed: {quote.batch_pages} pages a batch, {a.image_tokens_per_page:,} image "
        f"tokens and {a.output_tokens_per_page:,} output tokens a page, planning "
        f"{a.planning_input_per_chunk}/{a.planning_output_per_chunk} tokens a chunk; "
        "~ marks an estimate (office and HTML pages are counted by LibreOffice at ingest).[/]"
    )
    for note in notes:
        stdout.print(f"[yellow]note[/] {markup(note)}")
    if quote.unpriced_models:
        stdout.print(
            f"[yellow]No price for: {markup(', '.join(quote.unpriced_models))} (counted as $0).[/]"
        )
    if quote.failed:
        stdout.print(f"[red]{quote.failed} document(s) could not be quoted[/] (reasons above)")


def _finish(quote: Quote, as_json: bool, notes: Sequence[str] = ()) -> None:
    print_quote(quote, as_json, notes)
    if quote.failed:
        raise SystemExit(1)


def dry_run(
    paths: Sequence[Path],
    strategy: Strategy,
    backend: str | None,
    as_json: bool,
    escalate_to: str | None = None,
) -> None:
    """`drac ingest --dry-run`: quote the files ingest would take, writing nothing; with an
    escalation model (`escalate_to` or the settings'), also the worst case of escalating
    every page to it."""
    files, missing, skipped = walk_inputs(list(paths))
    settings = _settings(backend)
    models = _models(settings, strategy, embedding=False)
    options = ConversionOptions()
    named = set(paths)

    def documents() -> Iterator[tuple[str, bytes | str]]:
        for outcome in missing:
            yield outcome.path, outcome.error or "cannot be read"
        for path in files:
            try:
                yield shown_path(path), read_limited(path, options.max_file_bytes, path in named)
            except (DracError, OSError) as exc:
                yield shown_path(path), str(exc)

    quote = _quote_all(
        documents(),
        models,
        PriceTable(),
        strategy,
        options.batch_pages,
        options.max_pages,
        settings.models.conversion_max_tokens,
    )
    notes = [f"{len(skipped)} folder entries skipped (not documents)"] if skipped else []
    second = (escalate_to or settings.models.escalate_to or "").partition(":")[2].strip()
    if second and models.conversion is not None:
        escalated = _escalated(quote, second)
        if as_json:
            print_json({"quote": quote, "escalation": escalated, "notes": notes})
            raise SystemExit(1 if quote.failed else 0)
        print_quote(quote, as_json, notes)
        stdout.print(
            f"escalation to {markup(second)}: plain ~{_money(escalated.plain)}; worst case "
            f"(every page converted again) ~{_money(escalated.escalated_worst_case)}; every "
            f"page with {markup(second)} alone ~{_money(escalated.all_with_second)}."
        )
        if quote.failed:
            raise SystemExit(1)
        return
    _finish(quote, as_json, notes)


def _escalated(quote: Quote, second: str) -> EscalationQuote:
    conversion = ModelCost(
        calls=quote.conversion.calls,
        input_tokens=quote.conversion.input_tokens,
        output_tokens=quote.conversion.output_tokens,
        dollars=quote.conversion.dollars,
    )
    unpriced: set[str] = set()
    return escalation_quote(quote.dollars, conversion, second, PriceTable(), unpriced)


def _split_url(url: str) -> tuple[str, str]:
    if not url.startswith("s3://") or not url[5:].split("/", 1)[0]:
        raise click.BadParameter(f"{url!r} is not s3://bucket[/prefix]", param_hint="PREFIX")
    bucket, _, prefix = url[5:].partition("/")
    return bucket, prefix


def read_prefix(
    client: Any, bucket: str, prefix: str, cap: int
) -> Iterator[tuple[str, bytes | str]]:
    """Each object under the prefix with its bytes, or the reason it was not read (larger
    than `cap`). Keys ending in `/` (folder markers) are left out."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
        for item in page.get("Contents", []):
            key, size = item["Key"], int(item["Size"])
            name = f"s3://{bucket}/{key}"
            if key.endswith("/"):
                continue
            if size > cap:
                yield (
                    name,
                    (
                        f"{size / 1048576:.1f} MiB, more than the quote's "
                        f"{cap / 1048576:.0f} MiB download cap (--max-object-bytes)"
                    ),
                )
                continue
            body = client.get_object(Bucket=bucket, Key=key)["Body"]
            data = body.read(cap + 1)
            yield (name, data) if len(data) <= cap else (name, "grew past the download cap")


@cli.command("quote")
@click.argument("prefixes", nargs=-1, required=True)
@strategy_options
@click.option(
    "--max-object-bytes",
    type=click.IntRange(1),
    default=DEFAULT_OBJECT_CAP,
    show_default=True,
    help="Larger objects are not downloaded (and not quoted).",
)
@click.option(
    "--prices",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Price table overrides (TOML or JSON).",
)
@json_option
def quote_command(
    prefixes: tuple[str, ...],
    strategy: Strategy | None,
    max_object_bytes: int,
    prices: Path | None,
    as_json: bool,
) -> None:
    """Quote the documents under S3 prefixes as the cloud would ingest them; converts nothing.

    Each PREFIX is s3://bucket/prefix. Objects are listed and downloaded (up to
    --max-object-bytes each: a PDF is read whole to count its pages) with the AWS credentials
    of the environment. The cloud's models (Bedrock, with embeddings), batch size and strategy
    come from the settings (DRAC_* variables, drac.toml), as for the deployed stack.
    """
    import boto3

    try:
        table = load_prices(prices)
    except (ValueError, OSError) as exc:
        raise click.ClickException(f"bad price file: {exc}") from exc
    settings = _settings("bedrock")
    chosen = strategy or settings.conversion.strategy
    models = _models(settings, chosen, embedding=True)
    locations = [_split_url(url) for url in prefixes]
    client = boto3.client("s3", region_name=settings.models.region)

    def documents() -> Iterator[tuple[str, bytes | str]]:
        for bucket, prefix in locations:
            yield from read_prefix(client, bucket, prefix, max_object_bytes)

    from botocore.exceptions import BotoCoreError, ClientError

    try:
        quote = _quote_all(
            documents(),
            models,
            table,
            chosen,
            settings.conversion.batch_size,
            settings.conversion.max_pages,
            settings.models.conversion_max_tokens,
        )
    except (BotoCoreError, ClientError) as exc:
        raise click.ClickException(f"cannot read the prefix: {exc}") from exc
    _finish(quote, as_json)
