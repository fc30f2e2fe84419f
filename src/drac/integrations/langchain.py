"""LangChain: `DracLoader`, a document loader that ingests paths into a drac workspace and
yields one `Document` per active chunk, and `DracRetriever`, a retriever over a workspace's
search. Needs `langchain-core` (`pip install 'drac[langchain]'`).

    from drac.integrations.langchain import DracLoader, DracRetriever

    docs = DracLoader(["handbook.pdf"], workspace="kb").load()
    retriever = DracRetriever(workspace="kb", k=4, filters="year>=2023")
    retriever.invoke("how do I claim warranty")
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from drac.api.views import ChunkView
from drac.api.workspace import FilterSpec
from drac.integrations.chunks import (
    Opened,
    WorkspaceLike,
    chunk_metadata,
    ingested_chunks,
)
from drac.metadata import MetaValue
from drac.models import Strategy
from drac.retrieval.rank import Mode


def chunk_document(view: ChunkView, source: str) -> Document:
    """A LangChain `Document` of one chunk: `page_content` is the chunk text exactly as
    `drac export` writes it; `id` is the chunk id."""
    return Document(page_content=view.text, metadata=chunk_metadata(view, source), id=view.chunk_id)


class DracLoader(BaseLoader):
    """Ingest files and folders into a drac workspace, then yield one `Document` per active
    chunk of the documents they hold (in document and chunk order).

    Metadata: `source` (the path), `file_name`, `document_id`, `chunk_id`, `plan_version`,
    `pages`, `boxes`, `breadcrumb`, `element_ids`, and the document's own metadata (its
    `<file>.metadata.json` sidecar, under `metadata`). A file that fails to ingest raises
    DracIngestError naming it, unless `skip_failed` (then it yields nothing)."""

    def __init__(
        self,
        paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        *,
        workspace: WorkspaceLike = ".drac",
        strategy: Strategy | str | None = None,
        model: str | None = None,
        metadata: Mapping[str, MetaValue] | None = None,
        force: bool = False,
        embed: bool | None = False,
        skip_failed: bool = False,
    ) -> None:
        self.paths: list[str | os.PathLike[str]] = (
            [paths] if isinstance(paths, str | os.PathLike) else list(paths)
        )
        self.workspace = workspace
        self.strategy = strategy
        self.model = model
        self.metadata = dict(metadata or {})
        self.force = force
        self.embed = embed
        self.skip_failed = skip_failed

    def lazy_load(self) -> Iterator[Document]:
        """Ingest the paths (unchanged files are not converted again), then yield their
        chunks one by one."""
        with Opened(self.workspace) as ws:
            for placed in ingested_chunks(
                ws,
                self.paths,
                skip_failed=self.skip_failed,
                strategy=self.strategy,
                model=self.model,
                metadata=self.metadata,
                force=self.force,
                embed=self.embed,
            ):
                yield chunk_document(placed.view, placed.source)


class DracRetriever(BaseRetriever):
    """Retrieve a drac workspace's active chunks: by words (`bm25`), meaning (`dense`) or
    both (`hybrid`, the default with an embedder), `k` of them, of the documents whose
    metadata passes `filters` (`"year>=2023"`, a list of such, or Bedrock's filter JSON as a
    dict). Each Document's metadata also holds `score` and `rank`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Any
    """An open `drac.Workspace` or the path of one."""
    k: int = 6
    mode: Mode | None = None
    filters: Any = None
    embedder: str | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        filters: FilterSpec | None = self.filters
        with Opened(self.workspace) as ws:
            results = ws.search(
                query, self.k, mode=self.mode, filters=filters, embedder=self.embedder
            )
            sources = {}
            documents = []
            for hit in results:
                if hit.document_id not in sources:
                    record = ws.local.get_document(hit.document_id)
                    path = record.source_path if record is not None else None
                    sources[hit.document_id] = path or hit.source
                document = chunk_document(hit, sources[hit.document_id])
                document.metadata |= {"score": hit.score, "rank": hit.rank, "mode": hit.mode.value}
                documents.append(document)
            return documents
