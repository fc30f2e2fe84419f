"""Metadata in the cloud: the nested `meta` mapping, the OpenSearch query a filter becomes (the
exact request, and agreement with the local evaluator on arbitrary metadata), the retrieval
API's filter ANDed with the tenant, records' metadata in DynamoDB, and the S3 sources."""

from __future__ import annotations

import json
from typing import Any

import pytest
from handlers import LambdaContext, load_handler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drac.aws.object_metadata import current_metadata, document_metadata, object_tags
from drac.aws.opensearch import (
    META_MAPPING,
    chunk_document,
    ensure_index,
    index_body,
    meta_fields,
    metadata_query,
)
from drac.aws.runtime import INTERACTIVE_BEDROCK, Runtime
from drac.aws.stages.retrieve import RetrieveRequest, retrieve
from drac.errors import MetadataError
from drac.filters import MetadataFilter, matches, parse_expressions
from drac.models import Chunk, DocumentRecord, DocumentStatus
from drac.retrieval.rank import Mode
from tests.fakes import FakeBedrockRuntime, FakeIndices, FakeOpenSearch


def _chunk(document_id: str, tenant: str, text: str) -> Chunk:
    return Chunk(
        document_id=document_id,
        source=f"{document_id}.md",
        chunk_id=f"{document_id}-c1",
        plan_version=1,
        text=text,
        breadcrumb="",
        element_ids=("p1",),
        pages=(1,),
        tenant=tenant,
    )


def test_the_mapping_is_fixed_and_nested() -> None:
    assert index_body()["mappings"]["properties"]["meta"] == META_MAPPING
    assert META_MAPPING["type"] == "nested"
    assert set(META_MAPPING["properties"]) == {"key", "keyword", "number", "date", "bool"}
    assert meta_fields(
        {"dept": "hr", "year": 2024, "ok": True, "tags": ["a", "b"], "issued": "2024-05-01"}
    ) == [
        {"key": "dept", "keyword": "hr"},
        {"key": "year", "number": 2024},
        {"key": "ok", "bool": True},
        {"key": "tags", "keyword": ["a", "b"]},
        {"key": "issued", "keyword": "2024-05-01", "date": "2024-05-01T00:00:00+00:00"},
    ]
    doc = chunk_document(_chunk("d", "acme", "t"), None, {"dept": "hr"})
    assert doc["meta"] == [{"key": "dept", "keyword": "hr"}] and doc["tenant"] == "acme"
    assert "meta" not in chunk_document(_chunk("d", "acme", "t"), None, {})


def test_an_existing_index_gets_the_meta_field() -> None:
    client = FakeOpenSearch()
    client.indices = FakeIndices()
    client.indices.bodies["drac-chunks"] = {"mappings": {"properties": {"text": {"type": "text"}}}}
    assert ensure_index(client, "drac-chunks", 1024) is False
    assert client.indices.bodies["drac-chunks"]["mappings"]["properties"]["meta"] == META_MAPPING
    assert ensure_index(client, "drac-chunks", 1024) is False  # again: the same mapping, fine


def test_the_exact_query_of_a_filter() -> None:
    flt = parse_expressions(["dept=hr|legal", "year>=2020", "issued<2024-01-01"])
    assert flt is not None
    term = {"term": {"meta.key": "dept"}}
    assert metadata_query(flt) == {
        "bool": {
            "filter": [
                {
                    "nested": {
                        "path": "meta",
                        "query": {
                            "bool": {"filter": [term, {"terms": {"meta.keyword": ["hr", "legal"]}}]}
                        },
                    }
                },
                {
                    "nested": {
                        "path": "meta",
                        "query": {
                            "bool": {
                                "filter": [
                                    {"term": {"meta.key": "year"}},
                                    {"range": {"meta.number": {"gte": 2020}}},
                                ]
                            }
                        },
                    }
                },
                {
                    "nested": {
                        "path": "meta",
                        "query": {
                            "bool": {
                                "filter": [
                                    {"term": {"meta.key": "issued"}},
                                    {"range": {"meta.date": {"lt": "2024-01-01T00:00:00+00:00"}}},
                                ]
                            }
                        },
                    }
                },
            ]
        }
    }
    either = MetadataFilter.model_validate(
        {
            "orAll": [
                {"equals": {"key": "a", "value": True}},
                {"in": {"key": "b", "value": ["x", 2]}},
            ]
        }
    )
    assert metadata_query(either) == {
        "bool": {
            "minimum_should_match": 1,
            "should": [
                {
                    "nested": {
                        "path": "meta",
                        "query": {
                            "bool": {
                                "filter": [
                                    {"term": {"meta.key": "a"}},
                                    {"terms": {"meta.bool": [True]}},
                                ]
                            }
                        },
                    }
                },
                {
                    "nested": {
                        "path": "meta",
                        "query": {
                            "bool": {
                                "filter": [
                                    {"term": {"meta.key": "b"}},
                                    {
                                        "bool": {
                                            "minimum_should_match": 1,
                                            "should": [
                                                {"terms": {"meta.keyword": ["x"]}},
                                                {"terms": {"meta.number": [2]}},
                                            ],
                                        }
                                    },
                                ]
                            }
                        },
                    }
                },
            ],
        }
    }


# -- the OpenSearch query agrees with the local evaluator, for any metadata and filter ------

KEYS = ("a", "b", "c")
values = st.one_of(
    st.sampled_from(["x", "y", "X", "2024-05-01", "2023-12-31T23:00:00Z", "1"]),
    st.sampled_from([0, 1, 2, 2.5, -3]),
    st.booleans(),
    st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3),
)
metadata_values = st.dictionaries(st.sampled_from(KEYS), values, max_size=3)
scalars = st.one_of(
    st.sampled_from(["x", "y", "1", "2024-05-01"]), st.sampled_from([0, 1, 2, 2.5]), st.booleans()
)
bounds = st.one_of(
    st.sampled_from([0, 1, 2, 2.5]),
    st.sampled_from(["2024-01-01", "2024-05-01", "2023-12-31T22:00:00-02:00"]),
)
leaves = st.one_of(
    st.builds(lambda k, v: {"equals": {"key": k, "value": v}}, st.sampled_from(KEYS), scalars),
    st.builds(
        lambda k, v: {"in": {"key": k, "value": v}},
        st.sampled_from(KEYS),
        st.lists(
            st.one_of(st.sampled_from(["x", "z", "1"]), st.sampled_from([1, 2.5])),
            min_size=1,
            max_size=3,
        ),
    ),
    st.builds(
        lambda op, k, v: {op: {"key": k, "value": v}},
        st.sampled_from(["greaterThan", "greaterThanOrEquals", "lessThan", "lessThanOrEquals"]),
        st.sampled_from(KEYS),
        bounds,
    ),
)
filters = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(lambda xs: {"andAll": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"orAll": xs}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(metadata=metadata_values, raw=filters)
def test_opensearch_and_the_local_search_agree(
    metadata: dict[str, Any], raw: dict[str, Any]
) -> None:
    flt = MetadataFilter.model_validate(raw)
    doc = chunk_document(_chunk("d", "acme", "t"), None, metadata)
    assert FakeOpenSearch._matches(doc, metadata_query(flt)) == matches(flt, metadata)


# -- the retrieval API -----------------------------------------------------------------------


@pytest.fixture
def labelled(cloud: Any) -> tuple[Runtime, FakeOpenSearch]:
    """acme: an HR policy (2021) and a legal contract (2019); beta: an HR policy (2023)."""
    rt, opensearch = cloud
    fake = FakeBedrockRuntime(None, "google.gemma-3-27b-it")
    rt._clients["bedrock-runtime"] = rt._clients[INTERACTIVE_BEDROCK] = fake
    documents = (
        ("hr-acme", "acme", {"dept": "hr", "year": 2021}, "holiday policy for staff"),
        ("legal-acme", "acme", {"dept": "legal", "year": 2019}, "holiday contract terms"),
        ("hr-beta", "beta", {"dept": "hr", "year": 2023}, "holiday policy of beta"),
    )
    for document_id, tenant, metadata, text in documents:
        rt.registry.put(
            DocumentRecord(
                document_id=document_id,
                source=f"{document_id}.md",
                source_path=f"incoming/{tenant}/{document_id}.md",
                sha256="0" * 64,
                tenant=tenant,
                metadata=metadata,
                status=DocumentStatus.INDEXED,
                active_version=1,
            )
        )
        chunk = _chunk(document_id, tenant, text)
        rt.index().upsert([chunk], rt.embedder().embed([text]), {document_id: metadata})
    opensearch.requests.clear()
    return rt, opensearch


def _ids(response: Any) -> set[str]:
    return {c.document_id for c in response.chunks}


def test_the_filter_is_anded_after_the_tenant_in_both_retrievers(labelled: Any) -> None:
    rt, opensearch = labelled
    flt = parse_expressions(["dept=hr"])
    assert flt is not None
    response = retrieve(
        rt,
        RetrieveRequest(query="holiday policy", tenant="acme", filters={"metadata": flt.to_json()}),
    )
    assert _ids(response) == {"hr-acme"}
    assert response.chunks[0].metadata == {"dept": "hr", "year": 2021}
    expected = [{"term": {"tenant": "acme"}}, metadata_query(flt)]
    (_, lexical), (_, nearest) = opensearch.requests[-2:]
    assert lexical["query"]["bool"]["filter"] == expected
    assert nearest["query"]["knn"]["embedding"]["filter"] == {"bool": {"filter": expected}}


def test_no_filter_widens_the_tenant(labelled: Any) -> None:
    rt, _ = labelled
    # an orAll that every document of every tenant passes still stays inside acme
    everything = {
        "orAll": [
            {"equals": {"key": "dept", "value": "hr"}},
            {"greaterThan": {"key": "year", "value": 0}},
            {"in": {"key": "dept", "value": ["legal", "hr"]}},
        ]
    }
    for mode in Mode:
        response = retrieve(
            rt,
            RetrieveRequest(
                query="holiday", tenant="acme", mode=mode, k=10, filters={"metadata": everything}
            ),
        )
        assert _ids(response) == {"hr-acme", "legal-acme"}, mode
        assert {c.tenant for c in response.chunks} == {"acme"}
    # beta's own year only: nothing of acme's passes, and beta's is out of acme's reach
    response = retrieve(
        rt,
        RetrieveRequest(
            query="holiday",
            tenant="acme",
            k=10,
            filters={"metadata": {"equals": {"key": "year", "value": 2023}}},
        ),
    )
    assert response.chunks == []
    for reserved in ("tenant", "document_id", "all_tenants", "TENANT"):
        with pytest.raises(ValueError, match="reserved"):
            RetrieveRequest(
                query="q",
                filters={
                    "metadata": {
                        "orAll": [
                            {"equals": {"key": "dept", "value": "hr"}},
                            {"equals": {"key": reserved, "value": "beta"}},
                        ]
                    }
                },
            )


def test_metadata_the_document_no_longer_has_is_not_matched(labelled: Any) -> None:
    rt, _ = labelled
    rt.registry.update("hr-acme", metadata={"dept": "finance"})  # the index still says hr
    response = retrieve(
        rt,
        RetrieveRequest(
            query="holiday",
            tenant="acme",
            filters={"metadata": {"equals": {"key": "dept", "value": "hr"}}},
        ),
    )
    assert response.chunks == []


ACME_APP = "arn:aws:iam::123456789012:role/acme-app"


def _url_event(body: Any) -> dict[str, Any]:
    session = "arn:aws:sts::123456789012:assumed-role/acme-app/session"
    return {
        "version": "2.0",
        "rawPath": "/",
        "rawQueryString": "",
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "http": {"method": "POST", "path": "/", "sourceIp": "127.0.0.1"},
            "authorizer": {"iam": {"userArn": session}},
            "requestId": "r1",
            "accountId": "123456789012",
            "domainName": "x.lambda-url.aws",
            "stage": "$default",
            "routeKey": "$default",
            "timeEpoch": 0,
        },
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def test_the_handler_takes_a_filter_and_refuses_reserved_or_deep_ones(labelled: Any) -> None:
    rt, _ = labelled
    rt.settings = rt.settings.changed(tenant_principals={ACME_APP: "acme"})
    handler = load_handler("retrieve")
    handler._runtime = lambda: rt
    answer = handler.handler(
        _url_event(
            {
                "query": "holiday",
                "filters": {"metadata": {"lessThan": {"key": "year", "value": 2020}}},
            }
        ),
        LambdaContext(),
    )
    assert answer["statusCode"] == 200, answer
    body = json.loads(answer["body"])
    assert [c["document_id"] for c in body["chunks"]] == ["legal-acme"]
    assert body["chunks"][0]["metadata"] == {"dept": "legal", "year": 2019}
    refused = handler.handler(
        _url_event(
            {
                "query": "holiday",
                "filters": {"metadata": {"equals": {"key": "tenant", "value": "beta"}}},
            }
        ),
        LambdaContext(),
    )
    assert refused["statusCode"] == 422  # the answer names the field, never echoes values
    (problem,) = json.loads(refused["body"])["detail"]
    assert problem["loc"] == ["body", "filters", "metadata", "equals", "key"]
    deep: dict[str, Any] = {"equals": {"key": "dept", "value": "hr"}}
    for _ in range(400):  # deep enough to hurt a recursive validator, shallow enough for JSON
        deep = {"orAll": [deep]}
    refused = handler.handler(
        _url_event({"query": "holiday", "filters": {"metadata": deep}}), LambdaContext()
    )
    assert refused["statusCode"] == 422
    (problem,) = json.loads(refused["body"])["detail"]
    assert problem["loc"] == ["body", "filters", "metadata"]


# -- records and the S3 sources --------------------------------------------------------------


def test_metadata_round_trips_through_dynamodb(cloud: Any) -> None:
    rt, _ = cloud
    metadata = {"score": 4.5, "year": 2024, "ok": False, "tags": ["a", "b"], "name": "ünï"}
    rt.registry.put(
        DocumentRecord(document_id="d", source="d.md", sha256="0" * 64, metadata=metadata)
    )
    stored = rt.registry.get("d")
    assert stored is not None and stored.metadata == metadata
    assert rt.registry.records(["d"])["d"].metadata == metadata


def test_object_metadata_and_the_sidecar(cloud: Any) -> None:
    rt, _ = cloud
    s3 = rt.client("s3")
    s3.put_object(
        Bucket="docs",
        Key="incoming/acme/a.pdf",
        Body=b"%PDF-",
        Metadata={"drac-dept": "hr", "drac-year": "2021", "s3cmd-attrs": "uid:0"},
    )
    assert document_metadata(s3, "docs", "incoming/acme/a.pdf") == {"dept": "hr", "year": 2021}
    sidecar = {"metadataAttributes": {"year": 2024, "tags": ["x"]}}
    s3.put_object(
        Bucket="docs", Key="incoming/acme/a.pdf.metadata.json", Body=json.dumps(sidecar).encode()
    )
    assert document_metadata(s3, "docs", "incoming/acme/a.pdf") == {
        "dept": "hr",
        "year": 2024,
        "tags": ["x"],
    }  # the sidecar wins for a key both name
    s3.put_object(
        Bucket="docs",
        Key="incoming/acme/a.pdf.metadata.json",
        Body=json.dumps({"metadataAttributes": {"tenant": "beta"}}).encode(),
    )
    with pytest.raises(MetadataError, match=r'a\.pdf\.metadata\.json: key "tenant" is reserved'):
        document_metadata(s3, "docs", "incoming/acme/a.pdf")
    s3.put_object(Bucket="docs", Key="incoming/acme/a.pdf.metadata.json", Body=b" " * 20_000)
    with pytest.raises(MetadataError, match="more than the 10 KiB limit"):
        document_metadata(s3, "docs", "incoming/acme/a.pdf")
    s3.put_object(
        Bucket="docs", Key="incoming/acme/b.pdf", Body=b"%PDF-", Metadata={"drac-tenant": "beta"}
    )
    with pytest.raises(MetadataError, match=r"x-amz-meta-drac-\*\): key \"tenant\" is reserved"):
        document_metadata(s3, "docs", "incoming/acme/b.pdf")


def _tag(s3: Any, key: str, tags: dict[str, str], version_id: str | None = None) -> None:
    request: dict[str, Any] = {"Bucket": "docs", "Key": key}
    if version_id:
        request["VersionId"] = version_id
    tag_set = [{"Key": k, "Value": v} for k, v in tags.items()]
    s3.put_object_tagging(**request, Tagging={"TagSet": tag_set})


def test_drac_tags_are_metadata_between_user_metadata_and_the_sidecar(cloud: Any) -> None:
    rt, _ = cloud
    s3 = rt.client("s3")
    key = "incoming/acme/t.pdf"
    s3.put_object(
        Bucket="docs", Key=key, Body=b"%PDF-", Metadata={"drac-dept": "hr", "drac-year": "2020"}
    )
    _tag(
        s3,
        key,
        {
            "drac-dept": "legal",
            "DRAC-Region": "eu",
            "drac-score": "4.5",
            "backup": "daily",
            "cost-center": "42",
        },
    )
    assert object_tags(s3, "docs", key) == {"dept": "legal", "Region": "eu", "score": 4.5}
    # tags over user metadata, the sidecar over both
    assert document_metadata(s3, "docs", key) == {
        "dept": "legal",
        "year": 2020,
        "Region": "eu",
        "score": 4.5,
    }
    s3.put_object(
        Bucket="docs",
        Key=key + ".metadata.json",
        Body=json.dumps({"metadataAttributes": {"dept": "ops"}}).encode(),
    )
    assert document_metadata(s3, "docs", key)["dept"] == "ops"
    s3.delete_object_tagging(Bucket="docs", Key=key)
    assert object_tags(s3, "docs", key) == {}
    assert document_metadata(s3, "docs", key) == {"dept": "ops", "year": 2020}


def test_the_tags_read_are_those_of_the_version_read(cloud: Any) -> None:
    rt, _ = cloud
    s3 = rt.client("s3")
    key = "incoming/acme/v.pdf"
    first = s3.put_object(Bucket="docs", Key=key, Body=b"%PDF-1")["VersionId"]
    _tag(s3, key, {"drac-dept": "old"}, first)
    second = s3.put_object(Bucket="docs", Key=key, Body=b"%PDF-2")["VersionId"]
    _tag(s3, key, {"drac-dept": "new"}, second)
    assert document_metadata(s3, "docs", key, first) == {"dept": "old"}
    assert document_metadata(s3, "docs", key, second) == {"dept": "new"}
    assert current_metadata(s3, "docs", key) == {"dept": "new"}
    s3.delete_object(Bucket="docs", Key=key)  # a delete marker: no current version
    assert current_metadata(s3, "docs", key) is None
    assert current_metadata(s3, "docs", "incoming/acme/never.pdf") is None


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"drac-tenant": "beta"}, r'\(drac-\* tags\): key "tenant" is reserved'),
        ({"drac-a:b": "x"}, r'\(drac-\* tags\): key "a:b" may hold only'),
        ({"drac-dept": ""}, r'\(drac-\* tags\): key "dept": a string must not be empty'),
    ],
)
def test_tags_breaking_a_limit_are_refused_naming_the_tag(
    cloud: Any, tags: dict[str, str], message: str
) -> None:
    rt, _ = cloud
    s3 = rt.client("s3")
    s3.put_object(Bucket="docs", Key="incoming/acme/bad.pdf", Body=b"%PDF-")
    _tag(s3, "incoming/acme/bad.pdf", tags)
    with pytest.raises(MetadataError, match=message):
        document_metadata(s3, "docs", "incoming/acme/bad.pdf")


def test_the_request_the_cli_sends_carries_the_filter_in_its_json_form() -> None:
    from drac.aws.stages.retrieve import RetrieveFilters

    flt = parse_expressions(["dept=hr|legal", "issued>=2024-01-01"])
    request = RetrieveRequest(query="q", filters=RetrieveFilters(metadata=flt))
    body = json.loads(request.model_dump_json())  # what retrieve_remote posts
    assert body["filters"] == {
        "document_ids": [],
        "metadata": {
            "andAll": [
                {"in": {"key": "dept", "value": ["hr", "legal"]}},
                {"greaterThanOrEquals": {"key": "issued", "value": "2024-01-01"}},
            ]
        },
    }
    assert RetrieveRequest.model_validate_json(request.model_dump_json()) == request
    assert "metadata" not in json.loads(RetrieveRequest(query="q").model_dump_json())["filters"]


def test_a_key_too_long_for_a_sidecar_has_none(cloud: Any) -> None:
    rt, _ = cloud
    s3 = rt.client("s3")
    key = "incoming/acme/" + "k" * (1024 - len("incoming/acme/") - 5) + ".pdf"  # 1,023 bytes
    s3.put_object(Bucket="docs", Key=key, Body=b"%PDF-", Metadata={"drac-dept": "hr"})
    assert document_metadata(s3, "docs", key) == {"dept": "hr"}
