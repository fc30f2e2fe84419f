"""OpenSearch Serverless adapter: exact request bodies against a recording client."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from drac.aws import opensearch
from drac.aws.opensearch import OpenSearchChunkIndex, ensure_index, index_body, make_client
from drac.models import Chunk

TITAN = "amazon.titan-embed-text-v2:0"


class RecordingClient:
    """Records every call; answers search from `stored` (docs with `_id`)."""

    def __init__(self, stored: list[dict[str, Any]] | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.stored = stored or []

    def bulk(self, body: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls.append(("bulk", {"body": body}))
        items = []
        for action in body:
            if "delete" in action:
                items.append({"delete": {"_id": action["delete"]["_id"], "status": 200,
                                         "result": "deleted"}})
            elif "index" in action:
                items.append({"index": {"_id": f"svc-new-{len(self.stored)}", "status": 201}})
            else:  # the source of the index action before it: stored (searchable at once)
                self.stored.append({**action, "_id": items[-1]["index"]["_id"]})
        return {"errors": False, "items": items}

    def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("search", {"index": index, "body": dict(body)}))
        start = 0
        if "search_after" in body:
            start = next(i for i, d in enumerate(self.stored)
                         if [d["chunk_id"], d["plan_version"]] == body["search_after"]) + 1
        page = self.stored[start:start + body.get("size", 10)]
        return {"hits": {"hits": [{"_id": d["_id"], "_score": 2.5, "_source": d,
                                   "sort": [d["chunk_id"], d["plan_version"]]} for d in page]}}

    def delete_by_query(self, **kwargs: Any) -> dict[str, Any]:
        raise AssertionError("OpenSearch Serverless vector collections refuse _delete_by_query")


def chunk(n: int, version: int = 1) -> Chunk:
    return Chunk(document_id="doc1", source="a.pdf", chunk_id=f"doc1-c{n}", plan_version=version,
                 text=f"Plan >> Intro\n\ntext {n}", breadcrumb="Plan >> Intro",
                 element_ids=("h1", f"p{n}"), pages=(1, 2), tenant="acme")


def test_index_mapping_is_faiss_hnsw_1024_with_bm25_text_and_keywords() -> None:
    body = index_body()
    assert body["settings"] == {"index": {"knn": True}}
    props = body["mappings"]["properties"]
    vector = props["embedding"]
    assert vector["type"] == "knn_vector" and vector["dimension"] == 1024
    assert vector["method"]["engine"] == "faiss" and vector["method"]["name"] == "hnsw"
    assert props["text"] == {"type": "text"}
    for name in ("chunk_id", "document_id", "tenant", "plan_version", "pages"):
        assert props[name] == {"type": "keyword"}, name
    assert index_body(256)["mappings"]["properties"]["embedding"]["dimension"] == 256


def test_upsert_bulk_indexes_without_custom_ids() -> None:
    client = RecordingClient()
    OpenSearchChunkIndex(client, "drac-chunks", batch_size=2, vector_model=TITAN).upsert(
        [chunk(1), chunk(2), chunk(3)], [[0.1] * 1024, [0.2] * 1024, [0.3] * 1024])
    searches = [c for c in client.calls if c[0] == "search"]
    assert searches[0][1]["body"]["query"] == {"terms": {"chunk_id": ["doc1-c1", "doc1-c2",
                                                                      "doc1-c3"]}}
    bulks = [c[1]["body"] for c in client.calls if c[0] == "bulk"]
    assert [len(b) for b in bulks] == [4, 2]  # batches of 2 chunks: action + source each
    actions, docs = bulks[0][::2], bulks[0][1::2]
    assert actions == [{"index": {"_index": "drac-chunks"}}] * 2
    assert docs[0] == {
        "chunk_id": "doc1-c1", "document_id": "doc1", "tenant": "acme", "plan_version": "1",
        "pages": ["1", "2"], "element_ids": ["h1", "p1"], "source": "a.pdf",
        "text": "Plan >> Intro\n\ntext 1", "breadcrumb": "Plan >> Intro",
        "embedding": [0.1] * 1024, "embedding_model": TITAN,
        "text_digest": hashlib.sha256(b"Plan >> Intro\n\ntext 1").hexdigest(),
    }


def test_upsert_needs_one_vector_per_chunk() -> None:
    with pytest.raises(ValueError, match="one vector per chunk"):
        OpenSearchChunkIndex(RecordingClient(), "i").upsert([chunk(1)], [])


def test_bulk_errors_are_raised() -> None:
    class Failing(RecordingClient):
        def bulk(self, body):
            return {"errors": True, "items": [{"index": {"error": {"type": "mapper_parsing"}}}]}

    with pytest.raises(RuntimeError, match="mapper_parsing"):
        OpenSearchChunkIndex(Failing(), "i").upsert([chunk(1)], [[0.0] * 1024])


def test_delete_finds_ids_by_document_and_version_then_bulk_deletes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opensearch, "SEARCH_PAGE", 2)  # force search_after paging
    stored = [{"_id": f"svc-{n}", "chunk_id": f"doc1-c{n}", "plan_version": "1"}
              for n in range(5)]
    client = RecordingClient(stored)
    deleted = OpenSearchChunkIndex(client, "drac-chunks").delete("doc1", plan_version=1)
    assert deleted == 5
    searches = [c[1]["body"] for c in client.calls if c[0] == "search"]
    assert searches[0] == {
        "size": 2, "_source": False,
        "query": {"bool": {"filter": [{"term": {"document_id": "doc1"}},
                                      {"term": {"plan_version": "1"}}]}},
        "sort": [{"chunk_id": "asc"}, {"plan_version": "asc"}],
    }
    assert [s.get("search_after") for s in searches] == [None, ["doc1-c1", "1"],
                                                         ["doc1-c3", "1"]]
    (bulk,) = [c[1]["body"] for c in client.calls if c[0] == "bulk"]
    assert bulk == [{"delete": {"_index": "drac-chunks", "_id": f"svc-{n}"}} for n in range(5)]


def test_stored_vectors_ask_for_one_documents_digests_by_model_page_by_page(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opensearch, "VECTOR_PAGE", 2)  # force search_after paging
    stored = [{"_id": f"svc-{n}", "chunk_id": f"doc1-v1-c{n}", "plan_version": "1",
               "text_digest": f"d{n}", "embedding": [float(n)] * 4} for n in range(3)]
    stored.append({"_id": "svc-x", "chunk_id": "doc1-v1-cx", "plan_version": "1",
                   "text_digest": "dx"})  # indexed without a vector: nothing to reuse
    stored.append({"_id": "svc-y", "chunk_id": "doc1-v1-cy", "plan_version": "1",
                   "text_digest": "d1", "embedding": [9.0] * 8})  # another dimension
    client = RecordingClient(stored)
    index = OpenSearchChunkIndex(client, "drac-chunks")
    found = index.stored_vectors("doc1", TITAN, ["d2", "d0", "d1", "dx", "d0"], 4)
    assert found == {"d0": [0.0] * 4, "d1": [1.0] * 4, "d2": [2.0] * 4}
    searches = [c[1]["body"] for c in client.calls]
    assert searches[0] == {
        "size": 2, "_source": ["text_digest", "embedding"],
        "query": {"bool": {"filter": [{"term": {"document_id": "doc1"}},
                                      {"term": {"embedding_model": TITAN}},
                                      {"terms": {"text_digest": ["d0", "d1", "d2", "dx"]}}]}},
        "sort": [{"chunk_id": "asc"}, {"plan_version": "asc"}],
    }
    assert [s.get("search_after") for s in searches] == [None, ["doc1-v1-c1", "1"],
                                                         ["doc1-v1-cx", "1"]]
    assert index.stored_vectors("doc1", TITAN, [], 4) == {} and len(client.calls) == 3


def test_delete_all_versions_filters_on_document_only() -> None:
    client = RecordingClient()
    assert OpenSearchChunkIndex(client, "i").delete("doc1") == 0
    (call,) = client.calls
    assert call[1]["body"]["query"] == {"bool": {"filter": [{"term": {"document_id": "doc1"}}]}}


def test_search_bm25_with_tenant_filter_and_knn_with_embedder() -> None:
    stored = [{"_id": "x", "chunk_id": "doc1-c1", "plan_version": "1", "document_id": "doc1",
               "text": "t", "pages": ["2"], "tenant": "acme"}]
    client = RecordingClient(stored)
    hits = OpenSearchChunkIndex(client, "i", tenant="acme").search("store hours", k=3)
    body = client.calls[-1][1]["body"]
    assert body["query"] == {"bool": {"must": [{"match": {"text": "store hours"}}],
                                      "filter": [{"term": {"tenant": "acme"}}]}}
    assert body["_source"] == {"excludes": ["embedding"]}
    assert hits[0].chunk.pages == (2,) and hits[0].score == 2.5

    class Embedder:
        name, dimension = "fake", 3

        def embed(self, texts):
            return [[1.0, 0.0, 0.0] for _ in texts]

    OpenSearchChunkIndex(client, "i", embedder=Embedder()).search("q", k=4)
    assert client.calls[-1][1]["body"]["query"] == {
        "knn": {"embedding": {"vector": [1.0, 0.0, 0.0], "k": 4}}}


def test_client_signs_for_aoss() -> None:
    import botocore.credentials

    credentials = botocore.credentials.Credentials("AKID", "SECRET")
    client = make_client("https://abc.us-east-1.aoss.amazonaws.com/", "us-east-1", credentials)
    connection = client.transport.get_connection()
    assert connection.host == "https://abc.us-east-1.aoss.amazonaws.com:443"
    auth = client.transport.kwargs["http_auth"]
    headers = auth("POST", "https://abc.us-east-1.aoss.amazonaws.com/drac-chunks/_search", b"{}")
    assert "Credential=AKID/" in headers["Authorization"]
    assert "/us-east-1/aoss/aws4_request" in headers["Authorization"]
    assert "X-Amz-Content-SHA256" in headers  # aoss requires the payload hash header


def test_ensure_index_retries_while_access_policy_propagates() -> None:
    from opensearchpy.exceptions import AuthorizationException

    class Indices:
        def __init__(self) -> None:
            self.denied, self.created = 2, []

        def exists(self, index):
            if self.denied:
                self.denied -= 1
                raise AuthorizationException(403, "security_exception", {})
            return False

        def create(self, index, body):
            self.created.append((index, body))

    class Client:
        indices = Indices()

    slept: list[float] = []
    assert ensure_index(Client(), "drac-chunks", 1024, sleep=slept.append) is True
    assert len(slept) == 2 and Client.indices.created[0] == ("drac-chunks", index_body(1024))


def test_an_existing_index_gets_the_fields_added_since_with_unchanged_mappings() -> None:
    from tests.fakes import FakeOpenSearch

    client = FakeOpenSearch()
    old = index_body(1024)
    for name in ("meta", "boxes", "unaligned", "text_digest", "embedding_model"):
        del old["mappings"]["properties"][name]
    client.indices.create(index="drac-chunks", body=old)
    assert ensure_index(client, "drac-chunks", 1024) is False
    properties = client.indices.bodies["drac-chunks"]["mappings"]["properties"]
    assert properties == index_body(1024)["mappings"]["properties"]
    assert properties["text_digest"] == properties["embedding_model"] == {"type": "keyword"}


def test_a_retried_write_whose_first_try_is_not_yet_searchable_leaves_one_copy() -> None:
    """IndexChunks indexed a range, the answer was lost (the write succeeded), Step Functions
    retried it while search did not show the first try's copies yet: the retry's delete by
    chunk_id finds nothing, so only the verification after its own write can remove them."""
    from opensearchpy.exceptions import ConnectionError as Unreachable

    from drac.aws.errors import TransientError
    from tests.fakes import FakeOpenSearch

    fake = FakeOpenSearch()
    fake.search_lag = 3  # a write shows in search only after three more searches
    chunks, vectors = [chunk(1), chunk(2), chunk(3)], [[0.1] * 4, [0.2] * 4, [0.3] * 4]

    class LostAnswer:
        """The first bulk is committed, then the connection drops before the answer."""

        def __init__(self) -> None:
            self.indices = fake.indices
            self.lost = False

        def bulk(self, body: list[dict[str, Any]]) -> dict[str, Any]:
            answer = fake.bulk(body=body)
            if not self.lost and any("index" in action for action in body):
                self.lost = True
                raise Unreachable("N/A", "connection reset after the write", None)
            return answer

        def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
            return fake.search(index=index, body=body)

    slept: list[float] = []
    index = OpenSearchChunkIndex(LostAnswer(), "drac-chunks", sleep=slept.append)
    with pytest.raises(TransientError):
        index.upsert(chunks, vectors)  # the first try: written, but its answer lost
    index.upsert(chunks, vectors)  # Step Functions' retry
    stored = sorted(d["chunk_id"] for d in fake.docs)
    assert stored == ["doc1-c1", "doc1-c2", "doc1-c3"]  # one copy each, no duplicate
    assert {d["_id"] for d in fake.docs} == {"auto-4", "auto-5", "auto-6"}  # the retry's
    assert slept  # it waited for its own copies to show
    fake.search_lag = 0
    hits = index.lexical("text", [], 10)
    assert sorted(h.chunk.chunk_id for h in hits) == ["doc1-c1", "doc1-c2", "doc1-c3"]


def test_a_write_search_never_shows_is_retried_not_trusted() -> None:
    from drac.aws.errors import TransientError
    from tests.fakes import FakeOpenSearch

    fake = FakeOpenSearch()
    fake.search_lag = 1_000
    slept: list[float] = []
    with pytest.raises(TransientError, match="not yet searchable"):
        OpenSearchChunkIndex(fake, "drac-chunks", sleep=slept.append).upsert(
            [chunk(1)], [[0.1] * 4])
    assert sum(slept) < 120  # about a minute, far inside IndexChunks' timeout


def test_a_ranking_never_shows_one_chunk_twice() -> None:
    stored = [{"_id": f"svc-{n}", "chunk_id": "doc1-c1", "plan_version": "1",
               "document_id": "doc1", "text": "t", "tenant": "acme"} for n in range(2)]
    hits = OpenSearchChunkIndex(RecordingClient(stored), "i").lexical("t", [], 6)
    assert [h.chunk.chunk_id for h in hits] == ["doc1-c1"]


def test_a_changed_vector_dimension_is_refused_before_any_document_fails() -> None:
    from drac.aws.errors import DimensionChanged
    from tests.fakes import FakeOpenSearch

    client = FakeOpenSearch()
    client.indices.create(index="drac-chunks", body=index_body(1024))
    with pytest.raises(DimensionChanged, match=r"1024-dimension .* embeds 512.*indexName"):
        ensure_index(client, "drac-chunks", 512)
    mapping = client.indices.bodies["drac-chunks"]["mappings"]["properties"]["embedding"]
    assert mapping["dimension"] == 1024  # untouched
    assert ensure_index(client, "drac-chunks", 1024) is False  # the same dimension: fine
