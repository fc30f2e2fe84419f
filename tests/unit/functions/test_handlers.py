"""Handler contracts: parse the event, call the stage, return keys and counts; and what each
handler loads (no local runtime, no CLI, nothing the Lambda layer does not carry)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from handlers import FUNCTIONS, ROOT, LambdaContext, load_handler

from drac.aws.runtime import Runtime
from drac.ids import document_id_for
from drac.models import DocumentRecord, DocumentStatus
from infra.layers import LOCAL_ONLY

BODY = b"# Title\n\nSome text to index.\n"
KEY = "incoming/acme/report.md"


def use(name: str, runtime: Runtime) -> Any:
    module = load_handler(name)
    module._runtime = lambda: runtime
    return module


def sqs_record(body: dict[str, Any], *, message_id: str = "m0", receipt: str = "h",
               receives: int = 1) -> dict[str, Any]:
    return {"messageId": message_id, "receiptHandle": receipt, "body": json.dumps(body),
            "attributes": {"ApproximateReceiveCount": str(receives)}, "messageAttributes": {},
            "md5OfBody": "", "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:ingest", "awsRegion": "us-east-1"}


def s3_event(detail_type: str, key: str = KEY, sequencer: str = "0A", **obj: Any) -> dict:
    return {"detail-type": detail_type, "source": "aws.s3", "time": "2026-11-30T00:00:00Z",
            "detail": {"bucket": {"name": "docs"},
                       "object": {"key": key, "size": 30, "sequencer": sequencer, **obj}}}


def _ingest_queue(rt: Runtime, count: int) -> tuple[Any, str, list[dict[str, Any]]]:
    """A queue named like the records' source holding `count` upload events, all received."""
    sqs = rt.client("sqs")
    url = sqs.create_queue(QueueName="ingest")["QueueUrl"]
    for number in range(count):
        key = f"incoming/f{number}.md"
        rt.client("s3").put_object(Bucket="docs", Key=key, Body=BODY + bytes([65 + number]))
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps(s3_event("Object Created", key)))
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=count,
                                   AttributeNames=["All"])["Messages"]
    return sqs, url, messages


def _records(messages: list[dict[str, Any]], waits: int = 0) -> list[dict[str, Any]]:
    records = [sqs_record(json.loads(m["Body"]), message_id=m["MessageId"],
                          receipt=m["ReceiptHandle"]) for m in messages]
    if waits:
        for record in records:
            record["messageAttributes"] = {
                "drac-waits": {"stringValue": str(waits), "dataType": "Number"}}
    return records


def _delayed(sqs: Any, url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesDelayed"])["Attributes"]
    return int(attributes["ApproximateNumberOfMessagesDelayed"])


def test_starter_requeues_a_waiting_upload_with_a_delay_and_its_count_of_waits(
    cloud: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    rt, _ = cloud
    sqs, url, messages = _ingest_queue(rt, 3)
    result = use("starter", rt).handler({"Records": _records(messages, waits=4)},
                                        LambdaContext())
    # two documents at most run at once (the fixture's setting): the third one waits, as a
    # delayed copy carrying its fifth wait; the original is done (deleted by Lambda), so its
    # receive count never grows with waiting
    assert result == {"batchItemFailures": []}
    assert _delayed(sqs, url) == 1
    assert '"StartsDeferred"' in capsys.readouterr().out


def test_a_transient_aws_error_makes_the_upload_wait_not_fail(
    cloud: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fakes import client_error

    rt, _ = cloud
    sqs, url, messages = _ingest_queue(rt, 1)
    sfn = rt.client("stepfunctions")

    def throttled(**_: Any) -> Any:
        raise client_error("ThrottlingException", 400, "ListExecutions")

    monkeypatch.setattr(sfn, "list_executions", throttled)
    result = use("starter", rt).handler({"Records": _records(messages)}, LambdaContext())
    assert result == {"batchItemFailures": []}
    assert _delayed(sqs, url) == 1
    out = capsys.readouterr().out
    assert '"StartsDeferred"' in out and '"StartsFailed"' not in out


def test_any_other_start_error_is_counted_and_left_to_the_dead_letter_queue(
    cloud: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fakes import client_error

    rt, _ = cloud
    sqs, url, messages = _ingest_queue(rt, 1)
    sfn = rt.client("stepfunctions")

    def denied(**_: Any) -> Any:
        raise client_error("AccessDeniedException", 400, "ListExecutions")

    monkeypatch.setattr(sfn, "list_executions", denied)
    result = use("starter", rt).handler({"Records": _records(messages)}, LambdaContext())
    assert result == {"batchItemFailures": [{"itemIdentifier": messages[0]["MessageId"]}]}
    assert _delayed(sqs, url) == 0  # no copy: the receive count grows, maxReceiveCount ends it
    assert '"StartsFailed"' in capsys.readouterr().out


def test_an_upload_that_waited_days_stops_waiting_and_fails(
    cloud: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from drac.aws.stages.starter import MAX_WAITS

    rt, _ = cloud
    sqs, url, messages = _ingest_queue(rt, 3)
    result = use("starter", rt).handler({"Records": _records(messages, waits=MAX_WAITS)},
                                        LambdaContext())
    assert result == {"batchItemFailures": [{"itemIdentifier": messages[2]["MessageId"]}]}
    assert _delayed(sqs, url) == 0
    assert '"StartsFailed"' in capsys.readouterr().out


def test_delete_marker_event_retires_the_document(cloud: Any) -> None:
    rt, opensearch = cloud
    s3 = rt.client("s3")
    s3.put_object(Bucket="docs", Key=KEY, Body=BODY)
    document_id = document_id_for(BODY, "acme")
    rt.registry.put(DocumentRecord(document_id=document_id, source="report.md",
                                   sha256="0" * 64, tenant="acme",
                                   status=DocumentStatus.INDEXED, active_version=1))
    rt.registry.claim_source(KEY, document_id, "0A".ljust(32, "0"))
    opensearch.docs.extend({"_id": f"s{n}", "chunk_id": f"c{n}", "plan_version": "1",
                            "document_id": document_id} for n in range(3))
    marker = s3.delete_object(Bucket="docs", Key=KEY)
    event = s3_event("Object Deleted", sequencer="0B", **{
        "version-id": marker["VersionId"], "deletion-type": "Delete Marker Created"})
    result = use("delete", rt).handler({"Records": [sqs_record(event)]}, LambdaContext())
    assert result == {"batchItemFailures": []}
    assert opensearch.chunks(document_id) == []
    record = rt.registry.get(document_id)
    assert record is not None and record.status is DocumentStatus.DELETED


def test_register_handler_returns_the_route(cloud: Any) -> None:
    rt, _ = cloud
    version = rt.client("s3").put_object(Bucket="docs", Key=KEY, Body=BODY)["VersionId"]
    out = use("register", rt).handler(
        {"document_id": "d1", "tenant": "acme", "bucket": "docs", "key": KEY,
         "version_id": version, "sha256": "0" * 64, "size": len(BODY), "strategy": {},
         "previous_document": None, "execution": "run-1"}, LambdaContext())
    assert out == {"outcome": "owned", "route": "text", "format": "markdown",
                   "pdf_bucket": "", "pdf_key": "", "pdf_version_id": None}


def test_replan_manifest_handler_validates_the_request(cloud: Any) -> None:
    from pydantic import ValidationError

    rt, _ = cloud
    manifest = use("replan_manifest", rt)
    out = manifest.handler({"source": "drac.admin", "request": {"tenant": "acme",
                                                                "strategy": "fine"},
                            "run_id": "r1"}, LambdaContext())
    assert (out["bucket"], out["count"], out["strategy"]["name"]) == ("art", 0, "fine")
    with pytest.raises(ValidationError, match="name a tenant"):
        manifest.handler({"source": "drac.admin", "request": {"document_ids": ["d1"]},
                          "run_id": "r2"}, LambdaContext())


FORBIDDEN = ("drac.local", "drac.cli", "drac.evaluation", *sorted(LOCAL_ONLY))
PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("handler", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(name: str) -> list[str]:
    path = ROOT / "functions" / name / "handler.py"
    done = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True,
                          text=True, check=True, env={"PATH": "", "AWS_REGION": "us-east-1"})
    return json.loads(done.stdout)


@pytest.mark.subprocess
def test_each_handler_loads_only_the_core_and_the_aws_adapters() -> None:
    """In a fresh interpreter, as a Lambda container starts: no local runtime, CLI,
    evaluation or local-only dependency (the deps layer does not carry them)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        loaded = dict(zip(FUNCTIONS, pool.map(_loaded, FUNCTIONS), strict=True))
    assert len(loaded) == 22
    for name, modules in loaded.items():
        bad = [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
        assert bad == [], f"{name} loads {bad}"
    assert "drac.documents.intake.normalise" in loaded["normalise"]
    assert "drac.documents.spreadsheets" in loaded["read_spreadsheet"]
    assert "drac.documents.offline.pages" not in loaded["convert"]
    assert "drac.documents.offline" not in loaded["escalate"]  # the second model's pages
    # ReadScans (an image with the ocr extra) runs the local OCR path; the engine itself is
    # imported only in its contained worker
    assert "drac.documents.pdf.scans" in loaded["read_scans"]
    assert "rapidocr" not in loaded["read_scans"] and "onnxruntime" not in loaded["read_scans"]


def test_finalise_counts_each_final_status_in_its_own_metric() -> None:
    """PARTIAL has its own metric (and alarm): a document with failed pages alerts someone."""
    finalise = load_handler("finalise")
    assert [finalise.status_metric(s) for s in ("INDEXED", "PARTIAL", "FAILED", "UNKNOWN")] == [
        "DocumentsIndexed", "DocumentsPartial", "DocumentsFailed", "DocumentsIndexed"]
