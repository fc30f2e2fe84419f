"""OpenSearch Serverless adapter of the ChunkIndex port, and the index definition.

Vector-search collections reject custom document `_id`s (OpenSearch Service Developer Guide,
"Supported operations and plugins in Amazon OpenSearch Serverless": `_create/<id>` for search
collections only), so chunks are addressed by their `chunk_id` keyword field. They do not
support `_delete_by_query` either (the request is refused), so deleting finds the
service-assigned `_id`s with a paginated search (`search_after`) and removes them with `_bulk`
delete actions: replacing a chunk deletes the stored copies found by chunk_id, then indexes
anew. Search is eventually consistent, so a retried write could miss copies an earlier try
wrote but search did not show yet: every write is verified (`_settle`): it waits until search
shows the `_id`s it was given, then deletes every other copy of those chunks, so a retried
range leaves exactly one copy of each chunk.

Each chunk is stored with the digest of its text (`text_digest`, the SHA-256 the embedding
caches key by) and the embedding model that made its vector, so a new plan version of the
same document (a re-plan, a metadata change) reuses the vector of every chunk whose text the
index already holds (`stored_vectors`, drac.aws.vectors) instead of embedding it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drac.aws.errors import DimensionChanged, TransientError
from drac.embedders.cache import text_key
from drac.filters import RANGES, MetadataFilter
from drac.metadata import as_date
from drac.models import Chunk
from drac.ports import ChunkIndex, Embedder, SearchHit
from drac.provenance import PageBoxes

SEARCH_PAGE = 1000
VECTOR_PAGE = 200
"""Stored chunks a vector lookup reads per page (each `_source` holds its vector)."""
DELETE_BATCH = 500
SETTLE_WAITS_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0)
"""Pauses while a write is not yet searchable (about a minute in all), then TransientError."""
KEYWORD_FIELDS = (
    "chunk_id",
    "document_id",
    "tenant",
    "plan_version",
    "pages",
    "element_ids",
    "source",
    "text_digest",
    "embedding_model",
)
ADDED_FIELDS = ("meta", "boxes", "unaligned", "text_digest", "embedding_model")
"""Fields added after the first release: an existing index gets them at deployment."""


def index_body(dimension: int = 1024) -> dict[str, Any]:
    """Settings and mappings of the chunk index: faiss HNSW vectors, BM25 text, keywords."""
    properties: dict[str, Any] = {name: {"type": "keyword"} for name in KEYWORD_FIELDS}
    properties["text"] = {"type": "text"}
    properties["breadcrumb"] = {"type": "text"}
    # provenance, returned with hits and never searched (drac.provenance)
    properties["boxes"] = {"type": "object", "enabled": False}
    properties["unaligned"] = {"type": "keyword", "index": False}
    properties["meta"] = META_MAPPING
    properties["embedding"] = {
        "type": "knn_vector",
        "dimension": dimension,
        "method": {
            "name": "hnsw",
            "engine": "faiss",
            "space_type": "l2",
            "parameters": {"m": 16, "ef_construction": 512},
        },
    }
    return {"settings": {"index": {"knn": True}}, "mappings": {"properties": properties}}


def mapping_digest(dimension: int = 1024) -> str:
    """A short digest of the chunk index's settings and mappings: the index's custom resource
    carries it, so a release that changes the mapping updates the resource and the deployment
    adds the new fields to the existing index (`ensure_index`)."""
    canonical = json.dumps(index_body(dimension), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


META_MAPPING: dict[str, Any] = {
    "type": "nested",
    "properties": {
        "key": {"type": "keyword"},
        "keyword": {"type": "keyword"},
        "number": {"type": "double"},
        "date": {"type": "date", "format": "strict_date_optional_time"},
        "bool": {"type": "boolean"},
    },
}
"""A document's metadata on each of its chunks: one nested object per key, its value under a
field of its type. The mapping is fixed, so no tenant's keys can add fields to the index
(no mapping explosion) and a key holding a number in one document and a string in another
conflicts with nothing."""


def meta_fields(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The indexed form of a document's metadata (`meta`): strings and lists as `keyword`
    (an ISO 8601 date string also as `date`, in UTC), numbers as `number`, booleans as
    `bool`."""
    fields: list[dict[str, Any]] = []
    for key, value in metadata.items():
        item: dict[str, Any] = {"key": key}
        if isinstance(value, bool):
            item["bool"] = value
        elif isinstance(value, int | float):
            item["number"] = value
        else:
            item["keyword"] = value
            date = as_date(value)
            if date is not None:
                item["date"] = date.isoformat()
        fields.append(item)
    return fields


def metadata_query(flt: MetadataFilter) -> dict[str, Any]:
    """The OpenSearch query of a metadata filter over `meta` (the semantics of
    `drac.filters.matches`: each comparison a nested query on one key)."""
    operator = flt.operator
    if operator == "andAll":
        return {"bool": {"filter": [metadata_query(child) for child in flt.children]}}
    if operator == "orAll":
        return {
            "bool": {
                "should": [metadata_query(child) for child in flt.children],
                "minimum_should_match": 1,
            }
        }
    condition = flt.condition
    values = condition.value if isinstance(condition.value, list) else [condition.value]
    if operator in RANGES:
        (bound,) = values
        bounds = {
            "greaterThan": "gt",
            "greaterThanOrEquals": "gte",
            "lessThan": "lt",
            "lessThanOrEquals": "lte",
        }
        value_query: dict[str, Any]
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            value_query = {"range": {"meta.number": {bounds[operator]: bound}}}
        else:
            date = as_date(bound)
            assert date is not None  # the filter model admits only dates and numbers here
            value_query = {"range": {"meta.date": {bounds[operator]: date.isoformat()}}}
    else:
        value_query = _any_value(values)
    return {
        "nested": {
            "path": "meta",
            "query": {"bool": {"filter": [{"term": {"meta.key": condition.key}}, value_query]}},
        }
    }


def _any_value(values: Sequence[Any]) -> dict[str, Any]:
    """Equality with any of the values, each against the field of its type."""
    booleans = [v for v in values if isinstance(v, bool)]
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    strings = [v for v in values if isinstance(v, str)]
    clauses: list[dict[str, Any]] = []
    if strings:
        clauses.append({"terms": {"meta.keyword": strings}})
    if numbers:
        clauses.append({"terms": {"meta.number": numbers}})
    if booleans:
        clauses.append({"terms": {"meta.bool": booleans}})
    if len(clauses) == 1:
        return clauses[0]
    return {"bool": {"should": clauses, "minimum_should_match": 1}}


RETRIED_STATUSES = (429, 502, 503, 504)


def make_client(
    endpoint: str, region: str, credentials: Any, timeout: int = 60, retries: int = 0
) -> Any:
    """Return an opensearch-py client signing requests with SigV4 for service `aoss`,
    retrying 429, 502-504 and timeouts `retries` times (0: the caller owns retries)."""
    from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection

    host = endpoint.removeprefix("https://").rstrip("/")
    return OpenSearch(
        hosts=[{"host": host, "port": 443}],
        http_auth=Urllib3AWSV4SignerAuth(credentials, region, "aoss"),
        use_ssl=True,
        verify_certs=True,
        connection_class=Urllib3HttpConnection,
        timeout=timeout,
        pool_maxsize=10,
        max_retries=retries,
        retry_on_status=RETRIED_STATUSES,
        retry_on_timeout=retries > 0,
    )


def chunk_document(
    chunk: Chunk,
    vector: Sequence[float] | None,
    metadata: Mapping[str, Any] | None = None,
    vector_model: str | None = None,
) -> dict[str, Any]:
    """The indexed form of one chunk (`meta` only when its document has metadata; the
    vector's `embedding_model` when it is known)."""
    doc: dict[str, Any] = {
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.document_id,
        "tenant": chunk.tenant or "",
        "plan_version": str(chunk.plan_version),
        "pages": [str(page) for page in chunk.pages],
        "element_ids": list(chunk.element_ids),
        "source": chunk.source,
        "text": chunk.text,
        "text_digest": text_key(chunk.text),
        "breadcrumb": chunk.breadcrumb,
    }
    if chunk.boxes:
        doc["boxes"] = [entry.model_dump(mode="json") for entry in chunk.boxes]
    if chunk.unaligned:
        doc["unaligned"] = list(chunk.unaligned)
    if metadata:
        doc["meta"] = meta_fields(metadata)
    if vector is not None:
        doc["embedding"] = list(vector)
        if vector_model:
            doc["embedding_model"] = vector_model
    return doc


def chunk_from_source(source: dict[str, Any]) -> Chunk:
    """Rebuild a Chunk from an index hit's `_source`."""
    return Chunk(
        document_id=source["document_id"],
        source=source.get("source", ""),
        chunk_id=source["chunk_id"],
        plan_version=int(source["plan_version"]),
        text=source["text"],
        breadcrumb=source.get("breadcrumb", ""),
        element_ids=tuple(source.get("element_ids", ())),
        pages=tuple(int(page) for page in source.get("pages", ())),
        tenant=source.get("tenant") or None,
        boxes=tuple(PageBoxes.model_validate(entry) for entry in source.get("boxes", ())),
        unaligned=tuple(source.get("unaligned", ())),
    )


class OpenSearchChunkIndex(ChunkIndex):
    """Chunks in one OpenSearch Serverless index; hybrid-ready (BM25 text + knn vectors)."""

    def __init__(
        self,
        client: Any,
        index: str,
        *,
        embedder: Embedder | None = None,
        batch_size: int = 100,
        tenant: str | None = None,
        vector_model: str | None = None,
        on_throttled: Callable[[int], None] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        """Wrap a client; `embedder` embeds queries for k-NN search (BM25 otherwise);
        `vector_model` (`drac.embedders.cache.model_identity`) names the model that made the
        vectors it indexes; `on_throttled` is told how many 429s an answer held (a metric)."""
        self.client = client
        self.index = index
        self.embedder = embedder
        self.batch_size = batch_size
        self.tenant = tenant
        self.vector_model = vector_model
        self.on_throttled = on_throttled
        self.sleep = sleep

    def _throttled(self, count: int) -> None:
        if count and self.on_throttled is not None:
            self.on_throttled(count)

    def _request(self, call: Callable[..., Any], **kwargs: Any) -> Any:
        """One request; a busy or unreachable collection (429, 5xx, connection errors) is a
        TransientError, which the state machines retry with backoff."""
        from opensearchpy.exceptions import ConnectionError as Unreachable
        from opensearchpy.exceptions import TransportError

        try:
            return call(**kwargs)
        except Unreachable as exc:
            raise TransientError(f"OpenSearch unreachable: {exc}") from exc
        except TransportError as exc:
            status = exc.status_code if isinstance(exc.status_code, int) else 0
            if status == 429:
                self._throttled(1)
            if status == 429 or status >= 500:
                raise TransientError(f"OpenSearch answered {status}: {exc}") from exc
            raise

    def upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]] | None = None,
        metadata: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Replace chunks by chunk_id: delete any stored copies, bulk-index them, each with its
        document's metadata (by document id) as `meta`, then verify: once search shows the
        new copies, every other copy of these chunks (an earlier try's) is deleted.

        Raises TransientError when the collection is busy or the new copies are not yet
        searchable after about a minute (Step Functions retries the range)."""
        if vectors is not None and len(vectors) != len(chunks):
            raise ValueError("one vector per chunk is required")
        if not chunks:
            return
        ids = [chunk.chunk_id for chunk in chunks]
        for start in range(0, len(ids), 500):
            self._delete_where({"terms": {"chunk_id": ids[start : start + 500]}})
        written: set[str] = set()
        for start in range(0, len(chunks), self.batch_size):
            body: list[dict[str, Any]] = []
            for offset, chunk in enumerate(chunks[start : start + self.batch_size]):
                vector = vectors[start + offset] if vectors is not None else None
                body.append({"index": {"_index": self.index}})
                meta = (metadata or {}).get(chunk.document_id)
                body.append(chunk_document(chunk, vector, meta, self.vector_model))
            response = self._request(self.client.bulk, body=body)
            if response.get("errors"):
                failed = [
                    item["index"]
                    for item in response.get("items", [])
                    if item.get("index", {}).get("error")
                ]
                reason = failed[0]["error"] if failed else "unknown"
                message = f"bulk indexing failed for {len(failed)} chunks: {reason}"
                self._throttled(sum(1 for i in failed if i.get("status") == 429))
                if failed and all(i.get("status", 0) in (429, 503) for i in failed):
                    raise TransientError(message)  # the collection is busy: retried later
                raise RuntimeError(message)
            written.update(
                str(item["index"]["_id"])
                for item in response.get("items", [])
                if item.get("index", {}).get("_id")
            )
        if len(written) != len(chunks):
            raise RuntimeError(f"bulk answers named {len(written)} _ids for {len(chunks)} chunks")
        self._settle(ids, written)

    def _settle(self, chunk_ids: Sequence[str], written: set[str]) -> None:
        """Wait until search shows the `written` copies of these chunks, then delete every
        other copy (one an earlier, interrupted try wrote). A refresh makes every write made
        before it searchable, so the earlier try's copies show no later than these."""
        import time

        wanted = set(chunk_ids)
        for pause in (0.0, *SETTLE_WAITS_S):
            if pause:
                (self.sleep or time.sleep)(pause)
            stored: dict[str, str] = {}
            for start in range(0, len(chunk_ids), 500):
                stored.update(self._copies({"terms": {"chunk_id": chunk_ids[start : start + 500]}}))
            stored = {doc_id: chunk for doc_id, chunk in stored.items() if chunk in wanted}
            if written <= set(stored):
                self._delete_ids([doc_id for doc_id in stored if doc_id not in written])
                return
        raise TransientError(f"{len(written - set(stored))} new chunk copies not yet searchable")

    def delete(self, document_id: str, plan_version: int | None = None) -> int:
        """Delete a document's chunks (one plan version or all); return how many."""
        filters: list[dict[str, Any]] = [{"term": {"document_id": document_id}}]
        if plan_version is not None:
            filters.append({"term": {"plan_version": str(plan_version)}})
        return self._delete_where({"bool": {"filter": filters}})

    def delete_other_versions(self, document_id: str, keep_version: int) -> int:
        """Delete a document's chunks of every plan version but `keep_version`."""
        return self._delete_where(
            {
                "bool": {
                    "filter": [{"term": {"document_id": document_id}}],
                    "must_not": [{"term": {"plan_version": str(keep_version)}}],
                }
            }
        )

    def stored_vectors(
        self, document_id: str, model: str, digests: Sequence[str], dimension: int
    ) -> dict[str, list[float]]:
        """The `dimension`-long vectors the index holds for chunks of one document (any plan
        version) whose text has one of these digests (`text_digest`) and whose vector `model`
        made, by digest."""
        if not digests:
            return {}
        body: dict[str, Any] = {
            "size": VECTOR_PAGE,
            "query": {
                "bool": {
                    "filter": [
                        {"term": {"document_id": document_id}},
                        {"term": {"embedding_model": model}},
                        {"terms": {"text_digest": sorted(set(digests))}},
                    ]
                }
            },
            "_source": ["text_digest", "embedding"],
            "sort": [{"chunk_id": "asc"}, {"plan_version": "asc"}],
        }
        found: dict[str, list[float]] = {}
        while True:
            response = self._request(self.client.search, index=self.index, body=body)
            hits = response.get("hits", {}).get("hits", [])
            for hit in hits:
                source = hit.get("_source") or {}
                digest, vector = source.get("text_digest"), source.get("embedding")
                if (
                    isinstance(digest, str)
                    and isinstance(vector, list)
                    and len(vector) == dimension
                ):
                    found[digest] = [float(x) for x in vector]
            if len(hits) < VECTOR_PAGE:
                return found
            body["search_after"] = hits[-1]["sort"]

    def _matching_ids(self, query: dict[str, Any]) -> list[str]:
        """Return the `_id` of every document matching query (search_after pagination)."""
        return list(self._copies(query))

    def _copies(self, query: dict[str, Any]) -> dict[str, str]:
        """The `_id` -> chunk_id of every document matching query (search_after pagination)."""
        ids: dict[str, str] = {}
        body: dict[str, Any] = {
            "size": SEARCH_PAGE,
            "query": query,
            "_source": False,
            "sort": [{"chunk_id": "asc"}, {"plan_version": "asc"}],
        }
        while True:
            response = self._request(self.client.search, index=self.index, body=body)
            hits = response.get("hits", {}).get("hits", [])
            ids.update((hit["_id"], str(hit["sort"][0])) for hit in hits)
            if len(hits) < SEARCH_PAGE:
                return ids
            body["search_after"] = hits[-1]["sort"]

    def _delete_where(self, query: dict[str, Any]) -> int:
        """Delete every document matching query by its `_id`; return how many were deleted."""
        return self._delete_ids(self._matching_ids(query))

    def _delete_ids(self, ids: Sequence[str]) -> int:
        """Delete documents by `_id` (one already gone is fine); return how many were deleted."""
        deleted = 0
        for start in range(0, len(ids), DELETE_BATCH):
            body = [
                {"delete": {"_index": self.index, "_id": doc_id}}
                for doc_id in ids[start : start + DELETE_BATCH]
            ]
            response = self._request(self.client.bulk, body=body)
            for item in response.get("items", []):
                result = item.get("delete", {})
                if result.get("status") in (200, 201) or result.get("result") == "deleted":
                    deleted += 1
                elif result.get("status") != 404:  # already gone is fine
                    raise RuntimeError(f"bulk delete failed: {result.get('error', result)}")
        return deleted

    def search(self, query: str, k: int = 6) -> list[SearchHit]:
        """The k best chunks (of the index's tenant, or all): k-NN on the query vector when an
        embedder is set, else BM25 (active versions are not checked here: the retrieval API
        does, see drac.aws.stages.retrieve)."""
        filters = tenant_filters(self.tenant, all_tenants=self.tenant is None)
        if self.embedder is not None:
            return self.nearest(self.embedder.embed([query])[0], filters, k)
        return self.lexical(query, filters, k)

    def lexical(self, query: str, filters: Sequence[dict[str, Any]], size: int) -> list[SearchHit]:
        """BM25 on the chunk text, within the filters."""
        body = {
            "size": size,
            "query": {"bool": {"must": [{"match": {"text": query}}], "filter": list(filters)}},
            "_source": {"excludes": ["embedding"]},
        }
        return self._hits(body)

    def nearest(
        self, vector: Sequence[float], filters: Sequence[dict[str, Any]], size: int
    ) -> list[SearchHit]:
        """k-NN on the embeddings, the filters applied inside the k-NN search (efficient
        filtering), so a small tenant still gets `size` results."""
        knn: dict[str, Any] = {"vector": list(vector), "k": size}
        if filters:
            knn["filter"] = {"bool": {"filter": list(filters)}}
        body = {
            "size": size,
            "query": {"knn": {"embedding": knn}},
            "_source": {"excludes": ["embedding"]},
        }
        return self._hits(body)

    def _hits(self, body: dict[str, Any]) -> list[SearchHit]:
        """The ranked hits, one per chunk: a copy a write has not yet cleaned up (`_settle`)
        never shows a chunk twice."""
        response = self._request(self.client.search, index=self.index, body=body)
        hits: dict[str, SearchHit] = {}
        for hit in response.get("hits", {}).get("hits", []):
            chunk = chunk_from_source(hit["_source"])
            hits.setdefault(chunk.chunk_id, SearchHit(chunk=chunk, score=float(hit["_score"])))
        return list(hits.values())


def tenant_filters(
    tenant: str | None, document_ids: Sequence[str] = (), *, all_tenants: bool = False
) -> list[dict[str, Any]]:
    """Filter clauses for one tenant's chunks ("" for documents without a tenant), or every
    tenant's, optionally narrowed to some documents."""
    filters: list[dict[str, Any]] = []
    if not all_tenants:
        filters.append({"term": {"tenant": tenant or ""}})
    if document_ids:
        filters.append({"terms": {"document_id": list(document_ids)}})
    return filters


def stored_dimension(client: Any, index: str) -> int | None:
    """The dimension of the index's `embedding` field (None when it has none)."""
    mappings = client.indices.get_mapping(index=index)
    for body in mappings.values():
        embedding = body.get("mappings", {}).get("properties", {}).get("embedding", {})
        if "dimension" in embedding:
            return int(embedding["dimension"])
    return None


def ensure_index(
    client: Any,
    index: str,
    dimension: int,
    *,
    attempts: int = 30,
    sleep: Callable[[float], None] | None = None,
) -> bool:
    """Create the index unless it exists; retry 401/403 while data-access policies propagate.

    Returns True when this call created the index. Raises DimensionChanged when the existing
    index's vectors have another dimension (a knn_vector's dimension cannot change, and
    every embedding would be refused): the deployment fails before any document does.
    """
    import time

    from opensearchpy.exceptions import AuthorizationException, TransportError

    pause = sleep or time.sleep
    for attempt in range(1, attempts + 1):
        try:
            if client.indices.exists(index=index):
                stored = stored_dimension(client, index)
                if stored is not None and stored != dimension:
                    raise DimensionChanged(
                        f"index {index} holds {stored}-dimension vectors and the deployment "
                        f"embeds {dimension}: a vector field's dimension cannot change. Keep "
                        f"embeddingDimension={stored}, or deploy with a new indexName and "
                        'then re-plan {"all": true} to rebuild every chunk in it'
                    )
                # an index made before metadata filters, boxes and vector reuse gets their
                # fields (adding a field to a mapping is allowed; the same again is a no-op)
                added = index_body(dimension)["mappings"]["properties"]
                fields = {name: added[name] for name in ADDED_FIELDS}
                client.indices.put_mapping(index=index, body={"properties": fields})
                return False
            client.indices.create(index=index, body=index_body(dimension))
            return True
        except (AuthorizationException, TransportError) as exc:
            status = getattr(exc, "status_code", None)
            if status == 400 and "resource_already_exists" in str(exc):
                return False
            if status not in (401, 403) or attempt == attempts:
                raise
            pause(min(30.0, 2.0 * attempt))
    return False
