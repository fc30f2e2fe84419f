"""The last step of an ingest or a re-plan: embed the chunk texts the workspace has no vector
for yet, with the embedder search will use, so the first search embeds only the query."""

from __future__ import annotations

from drac.embedders.factory import embedder_from_spec
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
