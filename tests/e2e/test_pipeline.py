"""End to end on moto: the real ASL, the real handlers, Bedrock and OpenSearch faked."""

from __future__ import annotations

import json
from typing import Any

import boto3

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import ACME_ROLE, put_events_as
from tests.e2e.harness import Cloud

KEY = "incoming/acme/store_locations.pdf"


def upload(deployed: Cloud, pdf: bytes, key: str = KEY) -> None:
    boto3.client("s3", region_name="us-east-1").put_object(
        Bucket=deployed.documents_bucket, Key=key, Body=pdf)


def test_upload_is_indexed_once_and_replan_and_delete(cloud: Any) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    document_id = document_id_for(pdf, "acme")

    upload(deployed, pdf)
    runs = deployed.wait("ingest")
    assert [run["name"].split("-")[0] for run in runs] == [document_id]
    assert runs[0]["status"] == "SUCCEEDED"
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.INDEXED
    assert record.tenant == "acme" and record.pages == 4 and record.active_version == 1
    chunks = opensearch.chunks(document_id)
    assert chunks and {c["plan_version"] for c in chunks} == {"1"}
    assert all(c["tenant"] == "acme" for c in chunks)
    # 4 pages in 2-page batches: two Converse calls, one embedding per chunk.
    assert len(bedrock.converse_requests) == 2
    assert len(bedrock.embed_requests) == len(chunks)
    assert {c["text"] for c in chunks} == {r["inputText"] for r in bedrock.embed_requests}
    # Payloads between states carry keys and counts, never document content.
    for event in deployed.history(runs[0]["executionArn"]):
        for details in event.values():
            if isinstance(details, dict) and isinstance(details.get("output"), str):
                assert len(details["output"]) < 4096
    # The same bytes again (a new version of the key, and a copy under another key): each
    # upload is an execution that finds the document live and converts nothing.
    upload(deployed, pdf)
    copy = "incoming/acme/copy-of-store_locations.pdf"
    upload(deployed, pdf, copy)
    runs = deployed.wait("ingest")
    assert [r["status"] for r in runs] == ["SUCCEEDED"] * 3
    assert len(bedrock.converse_requests) == 2
    assert deployed.runtime.registry.sources_of(document_id) == [copy, KEY]

    # Replan Requested on the project's bus -> plan version 2, version 1 retired.
    converse_calls = len(bedrock.converse_requests)
    # (sent by acme's own application: the bus lets only it send source drac.tenant.acme)
    put_events_as(deployed, ACME_ROLE, [{
        "Source": "drac.tenant.acme", "DetailType": "Replan Requested",
        "Detail": json.dumps({"tenant": "acme", "document_ids": [document_id],
                              "strategy": "fine"})}])
    replans = deployed.wait("replan")
    assert [r["status"] for r in replans] == ["SUCCEEDED"]
    manifest = json.loads(deployed.runtime.artifacts.get_text(_manifest_key(deployed, replans)))
    assert manifest == [{"document_id": document_id, "tenant": "acme"}]
    # The Distributed Map read the manifest and ran the planning sub-workflow for it: one
    # plan execution for the ingest, one for the re-plan, each with its own generated name.
    plans = deployed.executions("plan")
    assert [p["status"] for p in plans] == ["SUCCEEDED", "SUCCEEDED"]
    assert len({p["name"] for p in plans}) == 2
    chunks_v2 = opensearch.chunks(document_id)
    assert chunks_v2 and {c["plan_version"] for c in chunks_v2} == {"2"}
    assert deployed.runtime.plans.latest_version(document_id) == 2
    assert deployed.runtime.plans.get_plan(document_id, 2).strategy.name == "fine"
    assert deployed.runtime.registry.get(document_id).active_version == 2
    assert len(bedrock.converse_requests) == converse_calls  # never re-converted

    # Deleting an old version while a current one exists changes nothing ...
    s3 = boto3.client("s3", region_name="us-east-1")
    bucket = deployed.documents_bucket
    versions = s3.list_object_versions(Bucket=bucket, Prefix=KEY)["Versions"]
    (old,) = [v for v in versions if not v["IsLatest"]]
    s3.delete_object(Bucket=bucket, Key=KEY, VersionId=old["VersionId"])
    deployed.settle()
    assert opensearch.chunks(document_id)
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.INDEXED
    # ... deleting the object (a delete marker) keeps the document: the copy still holds it ...
    s3.delete_object(Bucket=bucket, Key=KEY)
    deployed.settle()
    assert opensearch.chunks(document_id)
    assert deployed.runtime.registry.sources_of(document_id) == [copy]
    # ... and deleting the copy as well removes its chunks and marks it DELETED.
    s3.delete_object(Bucket=bucket, Key=copy)
    deployed.settle()
    assert opensearch.chunks(document_id) == []
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.DELETED
    delete_calls = deployed.log.calls_of(_label(deployed, "delete"))
    assert [c.operation for c in delete_calls if c.service == "s3"] == ["HeadObject"] * 3


def _label(deployed: Cloud, handler_dir: str) -> str:
    return deployed.principal(deployed.model.function_for(handler_dir)).label


def _manifest_key(deployed: Any, replans: list[dict[str, Any]]) -> str:
    for event in deployed.history(replans[0]["executionArn"]):
        details = event.get("taskSucceededEventDetails")
        if details:
            return json.loads(details["output"])["Payload"]["key"]
    raise AssertionError("the Manifest task did not succeed")


def test_throttling_is_retried_with_backoff(cloud: Any, sleeps: list[float]) -> None:
    deployed, bedrock, _opensearch, pdf = cloud
    bedrock.throttle_next = 5  # more than the in-process retries of one invocation
    upload(deployed, pdf)
    runs = deployed.wait("ingest")
    assert runs[0]["status"] == "SUCCEEDED"
    document_id = document_id_for(pdf, "acme")
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.INDEXED
    assert bedrock.throttled == 5
    # no retry inside the Lambda (the SDK's are off): every throttle is a Step Functions retry
    assert len(bedrock.converse_requests) == 2 + 5
    assert sleeps, "Step Functions retried the throttled batch after a backoff wait"
    assert all(0 <= s <= 900 for s in sleeps)
    # the batches ran in the document's conversion child execution (one group: 2 batches)
    (child,) = deployed.executions("convert")
    retried = [e for e in deployed.history(child["executionArn"])
               if e["type"] == "TaskFailed"
               and "ModelThrottled" in e["taskFailedEventDetails"].get("error", "")]
    assert len(retried) == 5


def test_batch_that_keeps_failing_yields_partial(cloud: Any) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    bedrock.fail_pages = {3}
    upload(deployed, pdf)
    runs = deployed.wait("ingest")
    assert runs[0]["status"] == "SUCCEEDED"
    document_id = document_id_for(pdf, "acme")
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.PARTIAL
    assert any("pages 3-4: conversion failed" in w for w in record.warnings)
    markdown = deployed.runtime.artifacts.get_text(f"documents/{document_id}/document.md")
    assert "<!-- Page 3: conversion failed" in markdown
    assert "<!-- Page 1 -->" in markdown
    assert opensearch.chunks(document_id)
