"""Metadata filters end to end on moto: sidecars and S3 user metadata read at Register (every
function under its own role), stored on the document's record, indexed as `meta` on its
chunks, and the retrieval API's filters through the real handler and function URL, the
caller's tenant always ANDed first. A sidecar is never ingested as a document."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import boto3
import pytest
from shared_paths import VELVERA

from drac.aws.opensearch import metadata_query
from drac.filters import MetadataFilter
from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import ACME_ROLE, BETA_ROLE, EMBEDDING_MODEL
from tests.e2e.harness import Cloud

POLICY = (VELVERA / "md" / "environmental_policy.md").read_bytes()
BOOKING = (VELVERA / "md" / "corporate_booking.md").read_bytes()
CONTACT = (VELVERA / "md" / "contact_info.md").read_bytes()


def put(deployed: Cloud, key: str, body: bytes, metadata: dict[str, str] | None = None) -> None:
    boto3.client("s3", region_name=deployed.region).put_object(
        Bucket=deployed.documents_bucket, Key=key, Body=body, Metadata=metadata or {}
    )


def sidecar(attributes: dict[str, Any]) -> bytes:
    return json.dumps({"metadataAttributes": attributes}).encode()


@pytest.fixture
def labelled(cloud: Any) -> tuple[Cloud, dict[str, str]]:
    """acme: a policy with a sidecar (uploaded first) and a booking guide with S3 user
    metadata; beta: contact details with a sidecar naming acme's own values."""
    deployed, _bedrock, _opensearch, _pdf = cloud
    put(
        deployed,
        "incoming/acme/policy.md.metadata.json",
        sidecar(
            {
                "dept": "sustainability",
                "year": 2021,
                "tags": ["policy", "eu"],
                "issued": "2021-06-30",
            }
        ),
    )
    put(deployed, "incoming/acme/policy.md", POLICY)
    put(
        deployed,
        "incoming/acme/booking.md",
        BOOKING,
        {"drac-dept": "sales", "drac-year": "2019", "unrelated": "kept out"},
    )
    put(
        deployed, "incoming/beta/contact.md.metadata.json", sidecar({"dept": "sales", "year": 2019})
    )
    put(deployed, "incoming/beta/contact.md", CONTACT)
    deployed.settle()
    return deployed, {
        "policy": document_id_for(POLICY, "acme"),
        "booking": document_id_for(BOOKING, "acme"),
        "contact": document_id_for(CONTACT, "beta"),
    }


def _search(deployed: Cloud, role: str, body: dict[str, Any]) -> tuple[int, Any]:
    answer = deployed.invoke_url(
        deployed.model.function_for("retrieve"), deployed.caller(role), body
    )
    return answer["statusCode"], json.loads(answer["body"])


def _documents(body: dict[str, Any]) -> set[str]:
    return {chunk["document_id"] for chunk in body["chunks"]}


def test_metadata_is_read_stored_and_indexed(labelled: Any) -> None:
    deployed, ids = labelled
    runs = deployed.wait("ingest")
    assert len(runs) == 3 and all(r["status"] == "SUCCEEDED" for r in runs)  # no sidecar run
    registry = deployed.runtime.registry
    expected = {
        "policy": {
            "dept": "sustainability",
            "year": 2021,
            "tags": ["policy", "eu"],
            "issued": "2021-06-30",
        },
        "booking": {"dept": "sales", "year": 2019},
        "contact": {"dept": "sales", "year": 2019},
    }
    for name, metadata in expected.items():
        record = registry.get(ids[name])
        assert record is not None and record.status is DocumentStatus.INDEXED, name
        assert record.metadata == metadata, name
        chunks = deployed.opensearch.chunks(ids[name])
        assert chunks and all({m["key"] for m in c["meta"]} == set(metadata) for c in chunks)
    # one execution per document, none for a sidecar (its event is seen and ignored)
    assert {r["name"].split("-")[0] for r in runs} == set(ids.values())


def test_filters_through_the_retrieval_api(labelled: Any) -> None:
    deployed, ids = labelled
    query = {"query": "environmental booking contact", "k": 20, "mode": "bm25"}
    status, body = _search(deployed, ACME_ROLE, query)
    assert status == 200 and _documents(body) == {ids["policy"], ids["booking"]}
    cases = [
        ({"equals": {"key": "dept", "value": "sales"}}, {ids["booking"]}),
        (
            {"in": {"key": "dept", "value": ["sales", "sustainability"]}},
            {ids["policy"], ids["booking"]},
        ),
        ({"greaterThanOrEquals": {"key": "year", "value": 2020}}, {ids["policy"]}),
        (
            {
                "andAll": [
                    {"greaterThan": {"key": "issued", "value": "2021-01-01"}},
                    {"lessThan": {"key": "issued", "value": "2021-12-31T23:59:59Z"}},
                ]
            },
            {ids["policy"]},
        ),
        ({"equals": {"key": "tags", "value": "eu"}}, {ids["policy"]}),
        (
            {
                "orAll": [
                    {"equals": {"key": "dept", "value": "sales"}},
                    {"equals": {"key": "year", "value": 2021}},
                ]
            },
            {ids["policy"], ids["booking"]},
        ),
    ]
    for flt, expected in cases:
        for mode in ("bm25", "dense", "hybrid"):
            status, body = _search(
                deployed, ACME_ROLE, {**query, "mode": mode, "filters": {"metadata": flt}}
            )
            assert status == 200 and _documents(body) == expected, (flt, mode)
            assert {chunk["tenant"] for chunk in body["chunks"]} <= {"acme"}
    # the exact request OpenSearch received last: the tenant first, the filter ANDed after
    (_, last) = deployed.opensearch.requests[-1]
    knn = last["query"]["knn"]["embedding"]
    assert knn["filter"] == {
        "bool": {
            "filter": [
                {"term": {"tenant": "acme"}},
                metadata_query(MetadataFilter.model_validate(flt)),
            ]
        }
    }
    status, body = _search(
        deployed,
        ACME_ROLE,
        {**query, "filters": {"metadata": {"equals": {"key": "dept", "value": "sales"}}}},
    )
    assert body["chunks"][0]["metadata"] == {"dept": "sales", "year": 2019}


def test_no_filter_reaches_another_tenant(labelled: Any) -> None:
    deployed, ids = labelled
    query = {"query": "environmental booking contact email phone", "k": 20}
    # beta's own values, and an orAll that every document of every tenant passes
    for flt in (
        {"equals": {"key": "dept", "value": "sales"}},
        {
            "orAll": [
                {"greaterThan": {"key": "year", "value": 0}},
                {"in": {"key": "dept", "value": ["sales", "sustainability"]}},
            ]
        },
    ):
        status, body = _search(deployed, ACME_ROLE, {**query, "filters": {"metadata": flt}})
        assert status == 200 and ids["contact"] not in _documents(body)
        status, body = _search(deployed, BETA_ROLE, {**query, "filters": {"metadata": flt}})
        assert status == 200 and _documents(body) == {ids["contact"]}
    # a filter naming the tenant (or any field drac uses), however nested, is refused
    for key in ("tenant", "document_id", "Tenant"):
        hidden = {
            "orAll": [
                {"equals": {"key": "dept", "value": "sales"}},
                {"andAll": [{"equals": {"key": key, "value": "beta"}}]},
            ]
        }
        status, body = _search(deployed, ACME_ROLE, {**query, "filters": {"metadata": hidden}})
        assert status == 422, key


def test_a_sidecar_breaking_a_limit_fails_its_document_with_the_key(cloud: Any) -> None:
    deployed, _bedrock, _opensearch, _pdf = cloud
    put(deployed, "incoming/acme/bad.md.metadata.json", sidecar({"tenant": "beta"}))
    put(deployed, "incoming/acme/bad.md", POLICY)
    put(deployed, "incoming/acme/loud.md", BOOKING, {"drac-tenant": "beta"})
    deployed.settle()
    bad = deployed.runtime.registry.get(document_id_for(POLICY, "acme"))
    assert bad is not None and bad.status is DocumentStatus.FAILED
    assert 'bad.md.metadata.json: key "tenant" is reserved' in (bad.error or "")
    loud = deployed.runtime.registry.get(document_id_for(BOOKING, "acme"))
    assert loud is not None and loud.status is DocumentStatus.FAILED
    assert 'x-amz-meta-drac-*): key "tenant" is reserved' in (loud.error or "")
    assert deployed.opensearch.chunks(bad.document_id) == []


# -- metadata that changes after its document ---------------------------------------------------

LATE = "incoming/acme/booking.md"


def _ingest_queue(deployed: Cloud) -> Any:
    (source,) = [s for s in deployed.model.event_sources if s.function.handler_dir == "starter"]
    return source.queue


def _filtered(deployed: Cloud, key: str, value: Any, query: str = "booking travel") -> set[str]:
    flt = {"equals": {"key": key, "value": value}}
    status, body = _search(
        deployed,
        ACME_ROLE,
        {"query": query, "k": 20, "mode": "bm25", "filters": {"metadata": flt}},
    )
    assert status == 200, body
    return _documents(body)


@pytest.fixture
def indexed(cloud: Any) -> tuple[Cloud, str]:
    """acme's booking guide, uploaded with S3 user metadata and no sidecar, indexed."""
    deployed, _bedrock, _opensearch, _pdf = cloud
    put(deployed, LATE, BOOKING, {"drac-dept": "sales"})
    deployed.settle()
    document_id = document_id_for(BOOKING, "acme")
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.status is DocumentStatus.INDEXED
    assert record.metadata == {"dept": "sales"} and record.active_version == 1
    assert _filtered(deployed, "dept", "sales") == {document_id}
    return deployed, document_id


def _texts(deployed: Cloud, document_id: str) -> list[tuple[str, str]]:
    chunks = deployed.opensearch.chunks(document_id)
    return sorted((c["text"], c["plan_version"]) for c in chunks)


def _vector_lookups(requests: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The searches IndexChunks made for stored vectors (drac.aws.vectors)."""
    return [
        body
        for kind, body in requests
        if kind == "search" and body.get("_source") == ["text_digest", "embedding"]
    ]


def test_a_late_sidecar_reindexes_its_document_without_converting(cloud: Any) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    key = "incoming/acme/stores.pdf"
    put(deployed, key, pdf, {"drac-dept": "sales"})
    deployed.settle()
    document_id = document_id_for(pdf, "acme")
    assert _filtered(deployed, "dept", "sales", "store") == {document_id}
    before = [text for text, _ in _texts(deployed, document_id)]
    vectors = {c["text"]: c["embedding"] for c in opensearch.chunks(document_id)}
    conversions, embeddings = len(bedrock.converse_requests), len(bedrock.embed_requests)
    assert conversions == 2  # 4 pages in batches of 2
    # the ingest (plan version 1: nothing earlier to reuse, no lookup) embedded each chunk
    assert sorted(r["inputText"] for r in bedrock.embed_requests) == sorted(before)
    assert _vector_lookups(opensearch.requests) == []
    invocations, requests = len(deployed.invocations), len(opensearch.requests)
    put(deployed, key + ".metadata.json", sidecar({"dept": "travel", "year": 2022}))
    deployed.settle()
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.metadata == {"dept": "travel", "year": 2022}
    assert record.status is DocumentStatus.INDEXED and record.active_version == 2
    # the new value finds the chunks, the old one no longer does
    assert _filtered(deployed, "dept", "travel", "store") == {document_id}
    assert _filtered(deployed, "year", 2022, "store") == {document_id}
    assert _filtered(deployed, "dept", "sales", "store") == set()
    # the same chunks, verbatim, as version 2, each indexed with the new metadata
    assert [text for text, _ in _texts(deployed, document_id)] == before
    chunks = deployed.opensearch.chunks(document_id)
    assert {c["plan_version"] for c in chunks} == {"2"}
    assert all(sorted(m["key"] for m in c["meta"]) == ["dept", "year"] for c in chunks)
    # through the re-plan machine: no page converted again, no chunk embedded again: each
    # keeps version 1's vector, found by its text's digest and the embedding model
    assert len(bedrock.converse_requests) == conversions
    assert len(bedrock.embed_requests) == embeddings
    (lookup,) = _vector_lookups(opensearch.requests[requests:])
    assert lookup["query"] == {
        "bool": {
            "filter": [
                {"term": {"document_id": document_id}},
                {"term": {"embedding_model": EMBEDDING_MODEL}},
                {
                    "terms": {
                        "text_digest": sorted(
                            hashlib.sha256(text.encode()).hexdigest() for text in set(before)
                        )
                    }
                },
            ]
        }
    }
    indexed = [
        doc
        for kind, body in opensearch.requests[requests:]
        if kind == "bulk"
        for doc in body
        if "text" in doc
    ]
    assert sorted(doc["text"] for doc in indexed) == before
    for doc in indexed:
        assert doc["plan_version"] == "2" and doc["embedding"] == vectors[doc["text"]]
        assert doc["embedding_model"] == EMBEDDING_MODEL
    assert len(deployed.executions("ingest")) == 1
    (replan,) = deployed.executions("replan")
    assert replan["status"] == "SUCCEEDED" and replan["name"].startswith(f"meta-{document_id}-")
    since = deployed.invocations[invocations:]
    assert {"register", "render", "convert", "parse"}.isdisjoint(since), since
    assert {
        "replan_manifest",
        "section",
        "plan_section",
        "prepare_plan",
        "index_chunks",
        "activate_plan",
    } <= set(since)
    # deleting the sidecar brings back the object's own metadata, again without a model call
    boto3.client("s3", region_name=deployed.region).delete_object(
        Bucket=deployed.documents_bucket, Key=key + ".metadata.json"
    )
    deployed.settle()
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.metadata == {"dept": "sales"}
    assert _filtered(deployed, "dept", "sales", "store") == {document_id}
    assert _filtered(deployed, "dept", "travel", "store") == set()
    assert len(bedrock.converse_requests) == conversions
    assert len(bedrock.embed_requests) == embeddings
    assert {c["text"]: c["embedding"] for c in opensearch.chunks(document_id)} == vectors


def test_tags_added_and_deleted_later_reindex_the_metadata(indexed: tuple[Cloud, str]) -> None:
    deployed, document_id = indexed
    embeddings = len(deployed.bedrock.embed_requests)
    s3 = boto3.client("s3", region_name=deployed.region)
    s3.put_object_tagging(
        Bucket=deployed.documents_bucket,
        Key=LATE,
        Tagging={
            "TagSet": [
                {"Key": "drac-dept", "Value": "finance"},
                {"Key": "drac-region", "Value": "eu"},
                {"Key": "backup", "Value": "daily"},
            ]
        },
    )
    deployed.settle()
    queue = _ingest_queue(deployed)
    tag_events = [
        json.loads(body)
        for body in deployed.log.delivered(queue.arn)
        if json.loads(body)["detail-type"] == "Object Tags Added"
    ]
    assert len(tag_events) == 1 and "sequencer" not in tag_events[0]["detail"]["object"]
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.metadata == {"dept": "finance", "region": "eu"}
    assert _filtered(deployed, "dept", "finance") == {document_id}
    assert _filtered(deployed, "region", "eu") == {document_id}
    assert _filtered(deployed, "dept", "sales") == set()  # tags win over user metadata
    s3.delete_object_tagging(Bucket=deployed.documents_bucket, Key=LATE)
    deployed.settle()
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.metadata == {"dept": "sales"}
    assert _filtered(deployed, "dept", "sales") == {document_id}
    assert _filtered(deployed, "region", "eu") == set()
    assert len(deployed.executions("ingest")) == 1
    assert [r["status"] for r in deployed.executions("replan")] == ["SUCCEEDED"] * 2
    assert len(deployed.bedrock.embed_requests) == embeddings  # two re-plans, no embedding


def test_a_sidecar_without_its_document_does_nothing(cloud: Any) -> None:
    deployed, _bedrock, _opensearch, _pdf = cloud
    put(deployed, "incoming/acme/ghost.md.metadata.json", sidecar({"dept": "legal"}))
    deployed.settle()
    assert deployed.executions("ingest") == [] and deployed.executions("replan") == []
    assert list(deployed.runtime.registry.live()) == []
    starter = deployed.principal(deployed.model.function_for("starter")).label
    operations = {c.operation for c in deployed.log.calls_of(starter)}
    assert not operations & {"StartExecution", "PutItem", "UpdateItem"}, operations


def test_an_old_sidecar_event_does_not_win(indexed: tuple[Cloud, str]) -> None:
    deployed, document_id = indexed
    put(deployed, LATE + ".metadata.json", sidecar({"dept": "travel"}))
    deployed.settle()
    put(deployed, LATE + ".metadata.json", sidecar({"dept": "ops"}))
    deployed.settle()
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.metadata == {"dept": "ops"}
    replans = len(deployed.executions("replan"))
    # EventBridge delivers the first sidecar upload's event again, late (at least once)
    queue = _ingest_queue(deployed)
    first = next(
        body
        for body in deployed.log.delivered(queue.arn)
        if json.loads(body)["detail"]["object"]["key"].endswith(".metadata.json")
    )
    deployed.sqs.send_message(QueueUrl=queue.url, MessageBody=first)
    deployed.settle()
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.metadata == {"dept": "ops"}
    assert _filtered(deployed, "dept", "ops") == {document_id}
    assert _filtered(deployed, "dept", "travel") == set()
    assert len(deployed.executions("replan")) == replans  # nothing to re-index
