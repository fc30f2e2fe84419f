"""The last step of `drac ingest` and `drac replan`: embed the new chunk texts for search by
meaning, with a progress bar, so the first `drac search` finds every vector cached.

It never fails the command: an embedder that cannot run is one warning line, and search then
embeds what is missing itself or falls back to BM25.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from drac.api.embedding import (
    SKIP_ENV,
    IngestEmbedding,
    configured_embedder_spec,
    embedding_wanted,
    not_embedded,
    search_embedder,
)
from drac.api.embedding import embed_new_chunks as embed_new_chunks_now
from drac.cli.options import stderr
from drac.local.search import EmbedReport
from drac.local.search import Progress as Told
from drac.local.workspace import Workspace
from drac.settings import Settings
from drac.terminal import printable

F = TypeVar("F", bound=Callable[..., Any])


def embed_option(function: F) -> F:
    """`--embed/--no-embed`: whether to embed new chunk texts now (default on, unless
    DRAC_EMBED_AT_INGEST=0)."""
    return click.option(
        "--embed/--no-embed",
        "embed",
        default=None,
        help="Embed new chunk texts for search by meaning now (default: yes, unless "
        f"{SKIP_ENV}=0); skipped, `drac search` embeds them on first use.",
    )(function)


def wanted(embed: bool | None) -> bool:
    """The flag, else the environment's default (on)."""
    return embedding_wanted(embed)


def embed_new_chunks(ws: Workspace, embed: bool | None, quiet: bool = False) -> EmbedReport | None:
    """Embed the active chunk texts not yet in the workspace's vector cache with the embedder
    `drac search` will use (DRAC_EMBEDDER, else the default); a warning, never an error, when
    it cannot."""
    if not wanted(embed):
        return None
    try:
        spec = configured_embedder_spec()
        embedder = search_embedder(spec)
        if embedder is None:
            return None
        _announce_network_embedder(spec, embedder.name)
        with _progress(quiet) as progress:
            task = progress.add_task(f"embed ({escape(embedder.name)})", total=None)

            def report(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            result = embed_new_chunks_now(ws, embedder, report)
            if not result.embedded:
                progress.update(task, visible=False)
        return result
    except Exception as exc:  # any embedder failure is a warning: the ingest has succeeded
        warn_not_embedded(not_embedded(exc))
        return None


def warn_not_embedded(warning: str) -> None:
    """The one line of an embedding step that failed."""
    stderr.print(
        f"[yellow]warning[/] {escape(warning)}; `drac search` embeds them when it can, else "
        "uses BM25"
    )


def ingest_embedding(ws: Workspace, embed: bool | None, jobs: int) -> IngestEmbedding:
    """The embedding that runs alongside an ingest's conversion, with the embedder `drac
    search` will use (none when not wanted, or when it cannot be made: then one warning)."""
    embedder = None
    if wanted(embed):
        try:
            spec = configured_embedder_spec()
            embedder = search_embedder(spec)
            if embedder is not None:
                _announce_network_embedder(spec, embedder.name)
        except Exception as exc:  # a warning: the documents are ingested all the same
            warn_not_embedded(not_embedded(exc))
    return IngestEmbedding(ws, embedder, jobs)


def embed_bar(progress: Progress, embedding: IngestEmbedding) -> Told | None:
    """A bar in the ingest's progress display for the embedding alongside it, shown once
    there are texts to embed."""
    if embedding.embedder is None:
        return None
    task = progress.add_task(
        f"embed ({escape(embedding.embedder.name)})", total=None, visible=False
    )

    def report(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total, visible=True)

    return report


def _announce_network_embedder(spec: str, name: str) -> None:
    """One line when a settings file configures an embedder that sends chunk texts over the
    network (the file is named, as for the model backends)."""
    if spec not in ("openai", "bedrock"):
        return
    config_file = Settings.load().config_file
    if config_file is not None:
        stderr.print(
            printable(f"drac: settings from {config_file} send chunk texts to the {name} embedder"),
            markup=False,
            highlight=False,
        )


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=False,
        disable=quiet,
    )
