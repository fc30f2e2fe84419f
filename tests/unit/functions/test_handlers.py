"""Handler contracts on moto: parse the event, call the stage, return keys and counts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from drac.aws.runtime import AwsEnvironment, Runtime
from drac.ids import document_id_for
from drac.models import DocumentRecord, DocumentStatus
from tests.e2e.fakes import FakeOpenSearch
from tests.e2e.harness import Context, load_handler
from tests.unit.aws.conftest import make_table

PDF = b"%PDF-1.4\n" + b"0" * 200  # bytes only: the starter hashes, it does not parse
KEY = "incoming/acme/report.pdf"
MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:Drac-ingest"


@pytest.fixture
def runtime(aws: Any) -> Iterator[Runtime]:
    s3 = aws.client("s3")
    for bucket in ("docs", "art"):
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    make_table(aws, "documents", "document_id", None, gsi="source_path")
    aws.client("stepfunctions").create_state_machine(
        name="Drac-ingest", roleArn="arn:aws:iam::123456789012:role/r",
        definition=json.dumps({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 600,
                                                               "End": True}}}))
    env = AwsEnvironment(documents_bucket="docs", artifacts_bucket="art",
                         documents_table="documents", index_name="drac-chunks",
                         ingest_state_machine_arn=MACHINE, max_running_documents=2,
                         default_strategy='{"name": "default", "planner": "rules"}',
                         region="us-east-1")
    yield Runtime(env, aws, opensearch_client=FakeOpenSearch())


def use(name: str, runtime: Runtime) -> Any:
    module = load_handler(name)
    module._runtime = lambda: runtime
    return module


def sqs_event(*bodies: dict[str, Any]) -> dict[str, Any]:
    return {"Records": [{"messageId": f"m{i}", "receiptHandle": "h", "body": json.dumps(body),
                         "attributes": {}, "messageAttributes": {}, "md5OfBody": "",
                         "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:q",
                         "awsRegion": "us-east-1"} for i, body in enumerate(bodies)]}


def s3_event(detail_type: str, key: str = KEY, **obj: str) -> dict[str, Any]:
    return {"detail-type": detail_type, "source": "aws.s3",
            "detail": {"bucket": {"name": "docs"}, "object": {"key": key, **obj}}}


def test_starter_starts_one_named_execution_with_keys_only(runtime: Runtime, aws: Any) -> None:
    aws.client("s3").put_object(Bucket="docs", Key=KEY, Body=PDF)
    starter = use("starter", runtime)
    event = sqs_event(s3_event("Object Created"), s3_event("Object Created"))  # duplicated
    assert starter.handler(event, Context()) == {"batchItemFailures": []}
    sfn = aws.client("stepfunctions")
    (execution,) = sfn.list_executions(stateMachineArn=MACHINE)["executions"]
    document_id = document_id_for(PDF, "acme")
    assert execution["name"] == document_id
    payload = json.loads(sfn.describe_execution(executionArn=execution["executionArn"])["input"])
    assert set(payload) == {"document_id", "tenant", "bucket", "key", "strategy"}
    assert (payload["tenant"], payload["bucket"], payload["key"]) == ("acme", "docs", KEY)
    assert payload["strategy"]["planner"] == "rules"
    assert "0000" not in json.dumps(payload), "no document content in the payload"


def test_starter_defers_when_the_pipeline_is_full(runtime: Runtime, aws: Any) -> None:
    s3 = aws.client("s3")
    keys = [f"incoming/f{i}.pdf" for i in range(3)]
    for i, key in enumerate(keys):
        s3.put_object(Bucket="docs", Key=key, Body=PDF + bytes([i]))
    result = use("starter", runtime).handler(
        sqs_event(*(s3_event("Object Created", key) for key in keys)), Context())
    # max_running_documents=2: the third message goes back to the queue
    assert result == {"batchItemFailures": [{"itemIdentifier": "m2"}]}


def indexed(runtime: Runtime, key: str = KEY) -> str:
    document_id = "doc-1"
    runtime.registry.put(DocumentRecord(document_id=document_id, source="report.pdf",
                                        source_path=key, sha256="0" * 64, tenant="acme",
                                        status=DocumentStatus.INDEXED, active_version=1))
    index = runtime.index()
    index.client.docs.extend({"_id": f"s{n}", "chunk_id": f"c{n}", "plan_version": "1",
                              "document_id": document_id} for n in range(3))
    return document_id


def test_delete_marker_event_removes_chunks_and_marks_deleted(runtime: Runtime,
                                                              aws: Any) -> None:
    """Real AWS: DELETE on a versioned bucket creates a marker and emits this event."""
    s3 = aws.client("s3")
    s3.put_object(Bucket="docs", Key=KEY, Body=PDF)
    document_id = indexed(runtime)
    marker = s3.delete_object(Bucket="docs", Key=KEY)
    assert marker["DeleteMarker"] is True
    event = s3_event("Object Deleted", **{"version-id": marker["VersionId"],
                                          "deletion-type": "Delete Marker Created"})
    result = use("delete", runtime).handler(sqs_event(event), Context())
    assert result == {"batchItemFailures": []}
    assert runtime.index().client.chunks(document_id) == []
    record = runtime.registry.get(document_id)
    assert record.status is DocumentStatus.DELETED and record.active_version is None


def test_delete_of_an_old_version_keeps_the_current_document(runtime: Runtime,
                                                             aws: Any) -> None:
    s3 = aws.client("s3")
    old = s3.put_object(Bucket="docs", Key=KEY, Body=PDF)["VersionId"]
    s3.put_object(Bucket="docs", Key=KEY, Body=PDF + b"new")
    document_id = indexed(runtime)
    s3.delete_object(Bucket="docs", Key=KEY, VersionId=old)
    event = s3_event("Object Deleted", **{"version-id": old,
                                          "deletion-type": "Permanently Deleted"})
    use("delete", runtime).handler(sqs_event(event), Context())
    assert len(runtime.index().client.chunks(document_id)) == 3
    assert runtime.registry.get(document_id).status is DocumentStatus.INDEXED


def test_register_returns_where_to_render(runtime: Runtime, aws: Any) -> None:
    from shared_paths import VELVERA, require

    pdf = require(VELVERA / "pdf" / "store_locations.pdf")
    aws.client("s3").put_object(Bucket="docs", Key=KEY, Body=pdf.read_bytes())
    out = use("register", runtime).handler(
        {"document_id": "d1", "tenant": "acme", "bucket": "docs", "key": KEY}, Context())
    assert out == {"format": "pdf", "is_text": False, "needs_normalise": False,
                   "pdf_bucket": "docs", "pdf_key": KEY}
    record = runtime.registry.get("d1")
    assert record.source == "report.pdf" and record.tenant == "acme"
    assert record.source_path == KEY


def test_replan_manifest_lists_live_documents_and_validates(runtime: Runtime) -> None:
    from pydantic import ValidationError

    runtime.registry.put(DocumentRecord(document_id="d1", source="a", sha256="0" * 64,
                                        status=DocumentStatus.INDEXED, tenant="acme"))
    runtime.registry.put(DocumentRecord(document_id="d2", source="b", sha256="0" * 64,
                                        status=DocumentStatus.FAILED))
    manifest = use("replan_manifest", runtime)
    out = manifest.handler({"request": {"document_ids": ["d1", "d2", "nope"],
                                        "strategy": "fine"}, "run_id": "r1"}, Context())
    assert set(out) == {"bucket", "key", "count", "strategy"}
    assert (out["bucket"], out["count"], out["strategy"]["name"]) == ("art", 1, "fine")
    assert json.loads(runtime.artifacts.get_text(out["key"])) == [
        {"document_id": "d1", "tenant": "acme"}]
    with pytest.raises(ValidationError, match="document_ids or set all"):
        manifest.handler({"request": {"strategy": "fine"}, "run_id": "r2"}, Context())
