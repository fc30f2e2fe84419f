"""What every framework integration says of a chunk: its metadata and its place among its
document's chunks (framework-free, so each integration maps the same facts)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drac.api.views import ChunkView
from drac.api.workspace import Workspace
from drac.integrations.errors import DracIngestError
from drac.models import Element


def chunk_metadata(view: ChunkView, source: str) -> dict[str, Any]:
    """A chunk's metadata for a framework document: `source` (the path the document was
    ingested from), `file_name`, `document_id`, `chunk_id`, `plan_version`, `pages`,
    `boxes` (per page, line boxes in PDF points from the page's top-left corner),
    `breadcrumb`, `element_ids`, then the document's own metadata (whose keys never clash
    with these: drac refuses them as metadata keys)."""
    return {
        "source": source,
        "file_name": view.source,
        "document_id": view.document_id,
        "chunk_id": view.chunk_id,
        "plan_version": view.plan_version,
        "pages": list(view.pages),
        "boxes": [box.model_dump(mode="json") for box in view.boxes],
        "breadcrumb": view.breadcrumb,
        "element_ids": list(view.element_ids),
        **view.metadata,
    }


@dataclass(frozen=True)
class PlacedChunk:
    """A chunk with its document's source path, its neighbours in its document and the
    heading it sits under."""

    view: ChunkView
    source: str
    previous_id: str | None
    next_id: str | None
    section_id: str | None
    """`<document id>#<heading element id>` of the deepest heading all its elements share."""
    section_title: str | None


def placed_chunks(ws: Workspace, document_ids: list[str] | None = None) -> Iterator[PlacedChunk]:
    """The active chunks of the documents (all live ones when None), document by document in
    order, each with its neighbours and its section."""
    wanted = document_ids
    if wanted is None:
        wanted = [record.document_id for record in ws.documents() if record.live]
    for document_id in dict.fromkeys(wanted):
        record = ws.local.get_document(document_id)
        if record is None or not record.live:
            continue
        views = list(ws.chunks(document_id))
        elements = {element.id: element for element in ws.local.get_elements(document_id)}
        source = record.source_path or record.source
        for index, view in enumerate(views):
            heading = _shared_heading(view, elements)
            yield PlacedChunk(
                view=view,
                source=source,
                previous_id=views[index - 1].chunk_id if index > 0 else None,
                next_id=views[index + 1].chunk_id if index + 1 < len(views) else None,
                section_id=f"{document_id}#{heading.id}" if heading else None,
                section_title=heading.title if heading else None,
            )


def _shared_heading(view: ChunkView, elements: dict[str, Element]) -> Element | None:
    """The deepest heading that is an ancestor of every content element of the chunk (the
    heading its breadcrumb ends with)."""
    content = [elements[i] for i in view.element_ids if i in elements]
    chains = [element.ancestors for element in content if not element.is_heading]
    if not chains:
        return None
    shared: list[str] = []
    for level in zip(*chains, strict=False):
        if len(set(level)) != 1:
            break
        shared.append(level[0])
    return elements.get(shared[-1]) if shared else None


WorkspaceLike = Workspace | str | os.PathLike[str]
"""An open `drac.Workspace`, or the path of one (opened, and made when missing)."""


class Opened:
    """A workspace given open (left open) or by path (opened here, closed after)."""

    def __init__(self, workspace: WorkspaceLike) -> None:
        if isinstance(workspace, Workspace):
            self.given: Workspace | None = workspace
            self.workspace = workspace
        else:
            self.given = None
            self.workspace = Workspace.open(Path(workspace))

    def __enter__(self) -> Workspace:
        return self.workspace

    def __exit__(self, *_exc: object) -> None:
        if self.given is None:
            self.workspace.close()


def ingested_chunks(
    ws: Workspace,
    paths: Any,
    *,
    skip_failed: bool,
    **options: Any,
) -> Iterator[PlacedChunk]:
    """Ingest the paths into the workspace (unchanged files are not converted again; the
    `options` are `Workspace.ingest`'s), then yield the chunks of the documents they hold,
    document by document; DracIngestError when a file failed and `skip_failed` is off."""
    report = ws.ingest(paths, **options)
    if report.failed and not skip_failed:
        raise DracIngestError.of(report.failed)
    ids = [o.document_id for o in report.outcomes if o.document_id and not o.failed]
    yield from placed_chunks(ws, ids)
