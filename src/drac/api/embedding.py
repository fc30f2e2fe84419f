"""The embedding step of an ingest or a re-plan: embed the chunk texts the workspace has no
vector for yet, with the embedder search will use, so the first search embeds only the query.

An ingest embeds alongside its conversion (`IngestEmbedding`): each committed document's
chunks are embedded while later documents convert, conversion jobs and embedder threads
sharing one thread budget of the cores (`drac.local.cores`)."""

from __future__ import annotations

from pathlib import Path

from drac.api.running import FileProgress, RunEvents
from drac.embedders.factory import embedder_from_spec
from drac.local.background_embedding import BackgroundEmbedding
from drac.local.cores import ThreadBudget, available_cores, budget_size
from drac.local.outcome import Outcome
from drac.local.search import EmbedReport, Progress, embed_active_chunks
from drac.local.workspace import Workspace as LocalWorkspace
from drac.ports import Embedder
from drac.settings import EmbedderSettings

SKIP_ENV = "DRAC_EMBED_AT_INGEST"
"""Set to 0 (or false, no, off) to skip the step by default."""

NETWORK_EMBEDDERS = frozenset({"openai", "bedrock"})
"""Embedder specs that send chunk texts over the network."""


def embedding_wanted(embed: bool | None) -> bool:
    """`embed` when given, else the environment's default (on unless DRAC_EMBED_AT_INGEST
    says 0, false, no or off)."""
    if embed is not None:
        return embed
    return EmbedderSettings.from_env().at_ingest


def configured_embedder_spec() -> str:
    """The embedder `DRAC_EMBEDDER` names ("" for the default)."""
    return EmbedderSettings.from_env().spec


def search_embedder(spec: str | None = None) -> Embedder | None:
    """The embedder a search uses: `spec`, else `DRAC_EMBEDDER`, else the embedded default
    where installed; None for `none` (BM25 only)."""
    return embedder_from_spec(spec if spec is not None else configured_embedder_spec())


def embed_new_chunks(
    ws: LocalWorkspace, embedder: Embedder, progress: Progress | None = None
) -> EmbedReport:
    """Embed the active chunk texts the workspace's vector cache lacks (only those), telling
    `progress(done, total)` as it goes. Raises what the embedder raises."""
    return embed_active_chunks(ws, embedder, progress)


def not_embedded(exc: Exception) -> str:
    """The warning of an embedding step that failed (the documents are stored)."""
    return f"chunks not embedded ({type(exc).__name__}: {exc})"


class IngestEmbedding:
    """An ingest's embedding, alongside its conversion: `start`, feed it the run's events
    (`events`), then `finish` once every document is done (or `abandon` on Ctrl-C).

    A failing embedder is a warning (`finish` returns it), never a failed document; the texts
    left without a vector are embedded by the next ingest or search."""

    def __init__(
        self, ws: LocalWorkspace, embedder: Embedder | None, jobs: int, cores: int | None = None
    ) -> None:
        cores = cores or available_cores()
        self.ws = ws
        self.embedder = embedder
        self.budget = ThreadBudget(budget_size(cores, jobs))
        self._consumer: BackgroundEmbedding | None = None
        # the embedded model's own default; never more because --jobs asked for more
        self._threads = EmbedderSettings.from_env().threads or min(cores, 4)

    def start(self, progress: Progress | None = None) -> IngestEmbedding:
        """Start the consumer thread (nothing to start without an embedder)."""
        if self.embedder is not None:
            self._consumer = BackgroundEmbedding(
                self.ws, self.embedder, self.budget, threads=self._threads, progress=progress
            ).start()
        return self

    def events(self, inner: RunEvents) -> RunEvents:
        """`inner`, each committed document also handed to the consumer."""
        return _Feeding(inner, self)

    def committed(self, outcome: Outcome) -> None:
        """Embed a finished document's chunks (failed ones have none)."""
        if self._consumer is not None and outcome.document_id and not outcome.failed:
            self._consumer.add(outcome.document_id)

    def finish(self) -> tuple[EmbedReport | None, str | None]:
        """Embed what is left with the whole budget; the report, or the warning of an
        embedder that failed."""
        if self._consumer is None:
            return None, None
        try:
            return self._consumer.finish(), None
        except Exception as exc:  # the documents are stored; search embeds what is missing
            return None, not_embedded(exc)

    def abandon(self) -> None:
        """Stop after the batch in progress, not waiting for it (what is embedded stays
        cached, the rest is embedded next time)."""
        if self._consumer is not None:
            self._consumer.abandon()


class _Feeding:
    """Run events passed on, each outcome also handed to the ingest's embedding."""

    def __init__(self, inner: RunEvents, embedding: IngestEmbedding) -> None:
        self.inner = inner
        self.embedding = embedding

    def started(self, path: Path) -> FileProgress:
        return self.inner.started(path)

    def ended(self, path: Path) -> None:
        self.inner.ended(path)

    def finished(self, outcome: Outcome) -> None:
        self.embedding.committed(outcome)
        self.inner.finished(outcome)
