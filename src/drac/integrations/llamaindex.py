"""LlamaIndex: `DracReader`, a reader that ingests paths into a drac workspace and returns one
`TextNode` per active chunk, linked to the chunks before and after it, to the section heading
it sits under and to its document. Needs `llama-index-core` (`pip install 'drac[llamaindex]'`).

    from drac.integrations.llamaindex import DracReader
    from llama_index.core import VectorStoreIndex

    nodes = DracReader(workspace="kb").load_data(["handbook.pdf"])
    index = VectorStoreIndex(nodes)   # drac's chunks, as they are: no second splitter
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import NodeRelationship, ObjectType, RelatedNodeInfo, TextNode

from drac.integrations.chunks import (
    Opened,
    PlacedChunk,
    WorkspaceLike,
    chunk_metadata,
    ingested_chunks,
)
from drac.metadata import MetaValue
from drac.models import Strategy

EXCLUDED_FROM_LLM = ("boxes", "element_ids", "chunk_id", "document_id", "plan_version")
"""Metadata a language model is not shown (ids and coordinates)."""


def chunk_node(placed: PlacedChunk) -> TextNode:
    """A `TextNode` of one chunk: `text` is the chunk text exactly as `drac export` writes it
    (breadcrumb included), `id_` the chunk id; no metadata is added to the embedded text
    (the breadcrumb already is), ids and boxes are kept from the LLM's view. Relationships:
    SOURCE (the document), PREVIOUS and NEXT (its neighbours in the document), PARENT (the
    section heading all its elements sit under, `<document id>#<heading id>`)."""
    view = placed.view
    metadata = chunk_metadata(view, placed.source)
    relationships: dict[NodeRelationship, RelatedNodeInfo] = {
        NodeRelationship.SOURCE: RelatedNodeInfo(
            node_id=view.document_id,
            node_type=ObjectType.DOCUMENT,
            metadata={"source": placed.source},
        )
    }
    if placed.previous_id is not None:
        relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(
            node_id=placed.previous_id, node_type=ObjectType.TEXT
        )
    if placed.next_id is not None:
        relationships[NodeRelationship.NEXT] = RelatedNodeInfo(
            node_id=placed.next_id, node_type=ObjectType.TEXT
        )
    if placed.section_id is not None:
        relationships[NodeRelationship.PARENT] = RelatedNodeInfo(
            node_id=placed.section_id,
            node_type=ObjectType.TEXT,
            metadata={"title": placed.section_title or ""},
        )
    return TextNode(
        id_=view.chunk_id,
        text=view.text,
        metadata=metadata,
        relationships=relationships,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=[key for key in EXCLUDED_FROM_LLM if key in metadata],
    )


class DracReader(BaseReader):
    """Ingest files and folders into a drac workspace and read their active chunks as
    `TextNode`s (in document and chunk order). A file that fails to ingest raises
    DracIngestError naming it, unless `skip_failed`."""

    def __init__(
        self,
        *,
        workspace: WorkspaceLike = ".drac",
        strategy: Strategy | str | None = None,
        model: str | None = None,
        metadata: Mapping[str, MetaValue] | None = None,
        force: bool = False,
        embed: bool | None = False,
        skip_failed: bool = False,
    ) -> None:
        self.workspace = workspace
        self.strategy = strategy
        self.model = model
        self.metadata = dict(metadata or {})
        self.force = force
        self.embed = embed
        self.skip_failed = skip_failed

    def lazy_load_data(  # type: ignore[override]
        self, paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], **_: Any
    ) -> Iterator[TextNode]:
        """Ingest the paths (unchanged files are not converted again), then yield their
        chunks' nodes."""
        with Opened(self.workspace) as ws:
            yield from (
                chunk_node(placed)
                for placed in ingested_chunks(
                    ws,
                    paths,
                    skip_failed=self.skip_failed,
                    strategy=self.strategy,
                    model=self.model,
                    metadata=self.metadata,
                    force=self.force,
                    embed=self.embed,
                )
            )

    def load_data(  # type: ignore[override]
        self, paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], **kwargs: Any
    ) -> list[TextNode]:
        """`lazy_load_data` as a list."""
        return list(self.lazy_load_data(paths, **kwargs))
