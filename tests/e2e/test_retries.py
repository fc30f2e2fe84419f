"""One owner for retries: model clients in Lambda never retry (SDK retries off, a read
timeout above the longest generation); throttling and transient errors surface as the error
names the ASL retries with backoff; a batch becomes error markers only after those retries."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ReadTimeoutError

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import upload
from tests.fakes import client_error

KEY = "incoming/acme/store_locations.pdf"
BATCHES = 2  # the 4-page test PDF in 2-page batches


def _history(deployed: Any, arn: str) -> list[dict[str, Any]]:
    pages = deployed.sfn.get_paginator("get_execution_history").paginate(executionArn=arn)
    return [event for page in pages for event in page["events"]]


def _retried_errors(deployed: Any, run: dict[str, Any]) -> list[str]:
    """The task errors of a run, with those of its document's conversion child executions."""
    document_id = run["name"].split("-")[0]
    children = [child["executionArn"] for child in deployed.executions("convert")
                if json.loads(deployed.sfn.describe_execution(
                    executionArn=child["executionArn"])["input"])["document_id"] == document_id]
    return [e["taskFailedEventDetails"]["error"] for arn in [run["executionArn"], *children]
            for e in _history(deployed, arn) if e["type"] == "TaskFailed"]


def _retry(deployed: Any, state: str, error: str) -> dict[str, Any]:
    machine = "convert" if state in {"ConvertBatch", "MarkBatchFailed"} else "ingest"
    definition = json.loads(deployed.sfn.describe_state_machine(
        stateMachineArn=deployed.machines[machine])["definition"])

    def find(states: dict[str, Any]) -> dict[str, Any] | None:
        for name, body in states.items():
            if name == state:
                return body
            inner = body.get("ItemProcessor", {}).get("States")
            found = find(inner) if inner else None
            if found:
                return found
        return None

    task = find(definition["States"])
    assert task is not None
    (retrier,) = [r for r in task["Retry"] if error in r["ErrorEquals"]]
    return retrier


@pytest.mark.parametrize(("injected", "error"), [
    (client_error("ThrottlingException", 429), "ModelThrottled"),
    (client_error("ServiceUnavailableException", 503), "TransientError"),
    (client_error("ModelTimeoutException", 408), "TransientError"),
    (client_error("ModelNotReadyException", 429), "TransientError"),
    (ReadTimeoutError(endpoint_url="https://bedrock-runtime"), "TransientError"),
])
def test_each_kind_of_model_failure_is_retried_by_step_functions(
    cloud: Any, sleeps: list[float], injected: Exception, error: str
) -> None:
    deployed, bedrock, _opensearch, pdf = cloud
    bedrock.failures = [injected, injected]
    upload(deployed, pdf, KEY)
    (run,) = deployed.wait("ingest")
    assert run["status"] == "SUCCEEDED"
    record = deployed.runtime.registry.get(document_id_for(pdf, "acme"))
    assert record.status is DocumentStatus.INDEXED  # the retries succeeded: nothing lost
    # exactly one model call per invocation, two failed invocations retried by the ASL
    assert len(bedrock.converse_requests) == BATCHES + 2
    assert _retried_errors(deployed, run).count(error) == 2
    assert len(sleeps) >= 2 and all(s <= _retry(deployed, "ConvertBatch", error)[
        "MaxDelaySeconds"] for s in sleeps)
    # every Bedrock client of the functions: no SDK retries, a generous read timeout
    assert deployed.bedrock_configs
    for config in deployed.bedrock_configs:
        assert config.retries["total_max_attempts"] == 1
        assert config.read_timeout >= 600


def test_a_batch_is_given_up_only_after_the_retries(cloud: Any, sleeps: list[float]) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    retrier = _retry(deployed, "ConvertBatch", "ModelThrottled")
    attempts = retrier["MaxAttempts"] + 1
    bedrock.throttle_pages = {1}  # the first batch is throttled for good
    upload(deployed, pdf, KEY)
    (run,) = deployed.wait("ingest")
    assert run["status"] == "SUCCEEDED"
    document_id = document_id_for(pdf, "acme")
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.PARTIAL
    assert any("pages 1-2: conversion failed: ModelThrottled" in w for w in record.warnings)
    assert _retried_errors(deployed, run).count("ModelThrottled") == attempts
    assert len(bedrock.converse_requests) == attempts + 1  # the other batch went through
    assert opensearch.chunks(document_id)


def test_reuploading_a_failed_or_deleted_document_ingests_it_again(cloud: Any) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    document_id = document_id_for(pdf, "acme")
    bedrock.fail_pages = {1, 2, 3, 4}  # every batch fails: nothing to chunk, FAILED
    upload(deployed, pdf, KEY)
    deployed.wait("ingest")
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.FAILED
    bedrock.fail_pages = set()
    upload(deployed, pdf, KEY)  # the same bytes again
    runs = deployed.wait("ingest")
    assert [r["status"] for r in runs] == ["SUCCEEDED", "FAILED"]  # newest first
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.INDEXED and record.attempt == 2
    # deleted, then uploaded again: ingested again
    boto3_s3(deployed).delete_object(Bucket=deployed.documents_bucket, Key=KEY)
    deployed.settle()
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.DELETED
    upload(deployed, pdf, KEY)
    deployed.wait("ingest")
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.INDEXED and record.attempt == 3
    assert opensearch.chunks(document_id)
    assert len({r["name"] for r in deployed.executions("ingest")}) == 3


def test_a_repeated_event_of_one_upload_starts_one_execution(cloud: Any) -> None:
    deployed, _bedrock, _opensearch, pdf = cloud
    upload(deployed, pdf, KEY)
    deployed.settle()
    queue = next(q for q in deployed.model.queues.values()
                 if "IngestQueue" in q.logical_id and "Dlq" not in q.logical_id)
    message = deployed.log.delivered(queue.arn)[0]  # what EventBridge put in the queue
    deployed.sqs.send_message(QueueUrl=queue.url, MessageBody=message)  # delivered again
    deployed.settle()
    assert len(deployed.executions("ingest")) == 1


def boto3_s3(deployed: Any) -> Any:
    import boto3

    return boto3.client("s3", region_name=deployed.region)


def test_sustained_throttling_ends_indexed_with_a_bounded_history(
    cloud: Any, sleeps: list[float]
) -> None:
    """Backpressure never fails a document: Lambda refusing Parse 20 times (concurrency
    exhausted), Bedrock throttling 30 calls in a row and IndexChunks' OpenSearch busy 12
    times are each far past the old limits (6, 10 and 4 tries) and end INDEXED."""
    deployed, bedrock, opensearch, pdf = cloud
    deployed.throttles = {"parse": 20, "index_chunks": 12}
    bedrock.throttle_next = 30
    upload(deployed, pdf, KEY)
    (run,) = deployed.wait("ingest")
    assert run["status"] == "SUCCEEDED"
    document_id = document_id_for(pdf, "acme")
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.INDEXED
    assert opensearch.chunks(document_id)
    errors = _retried_errors(deployed, run)
    assert errors.count("Lambda.TooManyRequestsException") == 20
    assert errors.count("ModelThrottled") == 30
    (plan,) = deployed.executions("plan")
    assert _retried_errors(deployed, plan).count("Lambda.TooManyRequestsException") == 12
    assert deployed.throttles == {"parse": 0, "index_chunks": 0} and bedrock.throttle_next == 0
    # backoff with full jitter, each wait capped at the retrier's MaxDelaySeconds (15 min)
    retrier = _retry(deployed, "Parse", "Lambda.TooManyRequestsException")
    assert (retrier["MaxDelaySeconds"], retrier["JitterStrategy"]) == (900, "FULL")
    assert len(sleeps) >= 62 and max(sleeps) <= 900 < sum(sleeps)
    for arn in [r["executionArn"] for m in ("ingest", "convert", "plan")
                for r in deployed.executions(m)]:
        assert len(_history(deployed, arn)) < 25_000
