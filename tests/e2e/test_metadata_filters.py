"""Metadata filters end to end on moto: sidecars and S3 user metadata read at Register (every
function under its own role), stored on the document's record, indexed as `meta` on its
chunks, and the retrieval API's filters through the real handler and function URL, the
caller's tenant always ANDed first. A sidecar is never ingested as a document."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from shared_paths import VELVERA

from drac.aws.opensearch import metadata_query
from drac.filters import MetadataFilter
from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import ACME_ROLE, BETA_ROLE
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
