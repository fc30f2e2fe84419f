"""The retrieval API: hybrid search (BM25 + k-NN, fused by reciprocal rank as `drac search`
does) over the active chunks of live documents of one tenant."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from drac.aws.errors import Forbidden
from drac.aws.identity import CallerScope
from drac.aws.opensearch import metadata_query, tenant_filters
from drac.aws.runtime import Runtime
from drac.filters import MetadataFilter, matches
from drac.models import VerificationCounts
from drac.ports import SearchHit
from drac.provenance import PageBoxes
from drac.retrieval.rank import Mode, fuse

CANDIDATES = 4
"""Each retriever returns this many times k candidates, so stale chunks filtered out after
the search (a version being replaced) still leave k results."""


class RetrieveFilters(BaseModel):
    """Optional narrowing of a retrieval."""

    model_config = ConfigDict(extra="forbid")

    document_ids: list[str] = Field(default_factory=list, max_length=1000)
    metadata: MetadataFilter | None = Field(
        default=None,
        description="a metadata filter (drac.filters: equals, in, ranges, andAll, orAll), "
        "ANDed with the caller's tenant; it names no reserved key such as tenant",
    )

    @model_serializer(mode="wrap")
    def _without_empty_filter(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("metadata") is None:
            data.pop("metadata", None)
        return data


class RetrieveRequest(BaseModel):
    """A query for one tenant (`tenant` null: documents uploaded without one), or for every
    tenant with `all_tenants`."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=4000)
    tenant: str | None = None
    all_tenants: bool = False
    k: int = Field(default=6, ge=1, le=100)
    mode: Mode = Mode.HYBRID
    filters: RetrieveFilters = Field(default_factory=RetrieveFilters)

    @model_validator(mode="after")
    def _one_scope(self) -> RetrieveRequest:
        if self.all_tenants and self.tenant is not None:
            raise ValueError("give a tenant or all_tenants, not both")
        return self


class RetrievedChunk(BaseModel):
    """One result: the chunk's text (what was embedded), where it comes from, its score."""

    chunk_id: str
    document_id: str
    source: str = Field(description="the file name")
    source_key: str | None = Field(description="the object key it was uploaded under")
    tenant: str | None
    pages: list[int]
    breadcrumb: str
    text: str
    plan_version: int
    score: float
    boxes: list[PageBoxes] = Field(
        default_factory=list,
        description="per page, the line boxes of the chunk's text in PDF points from the "
        "page's top-left corner (drac.provenance); empty for documents without pages",
    )
    unaligned: list[str] = Field(
        default_factory=list, description="element ids whose text was not (fully) found"
    )
    metadata: dict[str, str | int | float | bool | list[str]] = Field(
        default_factory=dict, description="the document's metadata"
    )
    verification: VerificationCounts | None = Field(
        default=None,
        description="how the document's vision-model pages compared with their text layer "
        "(its record's counts; null when no page was checked)",
    )


class RetrieveResponse(BaseModel):
    """The best chunks, best first."""

    query: str
    mode: Literal["bm25", "dense", "hybrid"]
    chunks: list[RetrievedChunk]


def scoped_request(scope: CallerScope, request: RetrieveRequest) -> RetrieveRequest:
    """The request held to what the caller may read: a tenant's caller reads its own tenant
    (naming it is optional), never another one, documents without a tenant or every tenant;
    Forbidden otherwise. An admin's request passes as it is."""
    if scope.admin:
        return request
    if request.all_tenants:
        raise Forbidden(f"tenant {scope.tenant!r} may not read all tenants")
    if "tenant" in request.model_fields_set and request.tenant != scope.tenant:
        raise Forbidden(f"tenant {scope.tenant!r} may not read tenant {request.tenant!r}")
    return request.model_copy(update={"tenant": scope.tenant})


def retrieve(rt: Runtime, request: RetrieveRequest) -> RetrieveResponse:
    """Search the index, fuse the rankings, and keep only chunks of the active plan version
    of live documents (checked against the documents table)."""
    filters = tenant_filters(
        request.tenant, request.filters.document_ids, all_tenants=request.all_tenants
    )
    wanted = request.filters.metadata
    if wanted is not None:
        filters.append(metadata_query(wanted))  # one more AND: it can only narrow
    size = request.k * CANDIDATES
    index = rt.index(interactive=True)
    rankings: list[list[SearchHit]] = []
    if request.mode in (Mode.BM25, Mode.HYBRID):
        rankings.append(index.lexical(request.query, filters, size))
    if request.mode in (Mode.DENSE, Mode.HYBRID):
        vector = rt.embedder(interactive=True).embed([request.query])[0]
        rankings.append(index.nearest(vector, filters, size))
    hits = _fused(rankings)
    records = rt.registry.records([hit.chunk.document_id for hit in hits])
    chunks: list[RetrievedChunk] = []
    for hit in hits:
        record = records.get(hit.chunk.document_id)
        if record is None or not record.live or record.active_version != hit.chunk.plan_version:
            continue  # a retired version, or a document on its way out
        if not request.all_tenants and {hit.chunk.tenant or "", record.tenant or ""} != {
            request.tenant or ""
        }:
            continue  # the index's filter already excludes it; a second check costs nothing
        if wanted is not None and not matches(wanted, record.metadata):
            continue  # indexed with metadata the document no longer has
        chunk = hit.chunk
        chunks.append(
            RetrievedChunk(
                chunk_id=chunk.chunk_id,
                document_id=chunk.document_id,
                source=chunk.source,
                source_key=record.source_path,
                tenant=chunk.tenant,
                pages=list(chunk.pages),
                breadcrumb=chunk.breadcrumb,
                text=chunk.text,
                plan_version=chunk.plan_version,
                score=hit.score,
                boxes=list(chunk.boxes),
                unaligned=list(chunk.unaligned),
                metadata=record.metadata,
                verification=record.verification,
            )
        )
        if len(chunks) == request.k:
            break
    return RetrieveResponse(query=request.query, mode=request.mode.value, chunks=chunks)


def _fused(rankings: list[list[SearchHit]]) -> list[SearchHit]:
    """One ranking: a single retriever's as it is, two fused by reciprocal rank."""
    if len(rankings) == 1:
        return rankings[0]
    by_id: dict[str, int] = {}
    hits: list[SearchHit] = []
    positions = []
    for ranking in rankings:
        order = []
        for hit in ranking:
            if hit.chunk.chunk_id not in by_id:
                by_id[hit.chunk.chunk_id] = len(hits)
                hits.append(hit)
            order.append((by_id[hit.chunk.chunk_id], hit.score))
        positions.append(order)
    return [hits[item].model_copy(update={"score": score}) for item, score in fuse(positions)]
