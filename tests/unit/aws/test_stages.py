"""The Lambda stages on moto (S3, DynamoDB, Step Functions) and the OpenSearch fake."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pdfs import Text, make_pdf, text_page

from drac.aws import keys
from drac.aws.errors import ModelThrottled, TransientError
from drac.aws.events import ReplanRequest, S3EventBridgeEvent
from drac.aws.runtime import Runtime
from drac.aws.stages.commit import (
    ActivateInput,
    IndexInput,
    PrepareInput,
    RangeItem,
    activate_version,
    index_range,
    prepare_plan,
)
from drac.aws.stages.conversion import (
    BatchFailedInput,
    BatchItem,
    ConvertInput,
    RenderInput,
    SliceInput,
    convert_pages,
    record_batch_failure,
    render_document,
    render_slice,
)
from drac.aws.stages.errors import PipelineFull
from drac.aws.stages.fanout import SLICE_PAGES, ItemGroup, render_slices
from drac.aws.stages.lifecycle import FinaliseInput, delete_object, finalise_document
from drac.aws.stages.parse import ParseInput, parse_converted
from drac.aws.stages.planning import PlanSectionInput, SectionItem, plan_one_section
from drac.aws.stages.register import RegisterInput, register_document
from drac.aws.stages.replan import ManifestInput, write_replan_manifest
from drac.aws.stages.spreadsheet import SpreadsheetInput, read_spreadsheet_upload
from drac.aws.stages.starter import (
    BACKOFF_MAX_S,
    backoff_seconds,
    execution_name,
    start_ingest,
)
from drac.errors import DocumentError
from drac.ids import document_id_for
from drac.models import DocumentRecord, DocumentStatus, Strategy
from tests.fakes import FakeBedrockRuntime, client_error

MARKDOWN = (
    b"# Returns\n\nItems may be returned within 30 days.\n\n## Refunds\n\nRefunds take 5 days.\n"
)


def s3_event(key: str, sequencer: str, *, detail_type: str = "Object Created",
             size: int = 10, version: str | None = None) -> S3EventBridgeEvent:
    obj: dict[str, Any] = {"key": key, "size": size, "sequencer": sequencer}
    if version:
        obj["version-id"] = version
    return S3EventBridgeEvent.model_validate({
        "detail-type": detail_type, "source": "aws.s3", "time": "2026-11-30T00:00:00Z",
        "detail": {"bucket": {"name": "docs"}, "object": obj}})


def upload(rt: Runtime, key: str, body: bytes) -> str:
    """Put an object in the documents bucket; return its version id."""
    return rt.client("s3").put_object(Bucket="docs", Key=key, Body=body)["VersionId"]


def executions(rt: Runtime) -> list[dict[str, Any]]:
    sfn = rt.client("stepfunctions")
    return sfn.list_executions(stateMachineArn=rt.resources.ingest_state_machine_arn)[
        "executions"]


# --- starter ---------------------------------------------------------------------------------


def test_starter_starts_one_execution_per_upload_with_keys_only(cloud: Any) -> None:
    rt, _ = cloud
    key = "incoming/acme/returns.md"
    version = upload(rt, key, MARKDOWN)
    event = s3_event(key, "0055AED6DCD90281E5", size=len(MARKDOWN), version=version)
    result = start_ingest(rt, event)
    document_id = document_id_for(MARKDOWN, "acme")
    assert result.outcome == "started" and result.document_id == document_id
    (run,) = executions(rt)
    assert run["name"] == execution_name(document_id, key, event.order) == result.execution
    assert len(run["name"]) <= 80
    detail = rt.client("stepfunctions").describe_execution(executionArn=run["executionArn"])
    payload = json.loads(detail["input"])
    assert payload["key"] == key and payload["version_id"] == version
    assert payload["size"] == len(MARKDOWN) and payload["tenant"] == "acme"
    assert "Returns" not in detail["input"], "no document content in the execution input"
    # the same event again starts nothing: while the execution runs, StartExecution with the
    # same name and input is idempotent; once it has ended, the name is taken
    start_ingest(rt, event)
    assert len(executions(rt)) == 1
    rt.client("stepfunctions").stop_execution(executionArn=run["executionArn"])
    assert start_ingest(rt, event).outcome == "duplicate"
    assert len(executions(rt)) == 1
    assert rt.registry.sources_of(document_id) == [key]


def test_starter_ignores_folders_empty_objects_and_stale_events(cloud: Any) -> None:
    rt, _ = cloud
    assert start_ingest(rt, s3_event("incoming/acme/", "01", size=0)).outcome == "ignored"
    upload(rt, "incoming/empty.md", b"")
    assert start_ingest(rt, s3_event("incoming/empty.md", "02", size=0)).outcome == "ignored"
    key = "incoming/doc.md"
    upload(rt, key, MARKDOWN)
    assert start_ingest(rt, s3_event(key, "0A")).outcome == "started"
    older = start_ingest(rt, s3_event(key, "09FFFF"))  # shorter: right-padded, so it is older
    assert older.outcome == "stale"
    assert len(executions(rt)) == 1


def test_starter_reuploads_of_failed_documents_start_again(cloud: Any) -> None:
    rt, _ = cloud
    key = "incoming/doc.md"
    upload(rt, key, MARKDOWN)
    first = start_ingest(rt, s3_event(key, "0A"))
    rt.registry.put(DocumentRecord(document_id=first.document_id or "", source="doc.md",
                                   sha256="0" * 64, status=DocumentStatus.FAILED))
    upload(rt, key, MARKDOWN)
    second = start_ingest(rt, s3_event(key, "0B"))
    assert second.outcome == "started" and second.document_id == first.document_id
    assert second.execution != first.execution
    assert len(executions(rt)) == 2


def test_a_full_pipeline_defers_without_reading_the_upload(cloud: Any) -> None:
    rt, _ = cloud
    for number in range(2):  # max_running_documents is 2 in the fixture
        upload(rt, f"incoming/d{number}.md", MARKDOWN + str(number).encode())
        start_ingest(rt, s3_event(f"incoming/d{number}.md", "0A"))
    with pytest.raises(PipelineFull):
        start_ingest(rt, s3_event("incoming/never-read.md", "0A"))  # the object does not exist
    assert rt.registry.sources_of("any") == []


def test_backoff_grows_and_is_capped() -> None:
    import random

    rng = random.Random(7)
    waits = [backoff_seconds(n, rng) for n in range(1, 12)]
    assert 30 <= waits[0] <= 60
    assert waits[4] >= 480  # 16 minutes ceiling, at least half of it
    assert max(waits) <= BACKOFF_MAX_S
    assert backoff_seconds(100, rng) >= BACKOFF_MAX_S // 2


# --- register --------------------------------------------------------------------------------


def register_input(rt: Runtime, key: str, body: bytes, execution: str = "run-1",
                   **overrides: Any) -> RegisterInput:
    version = upload(rt, key, body)
    tenant = key.split("/")[1] if key.count("/") > 1 else None
    fields = {"document_id": document_id_for(body, tenant), "tenant": tenant, "bucket": "docs",
              "key": key, "version_id": version, "sha256": "0" * 64, "size": len(body),
              "strategy": {}, "execution": execution, **overrides}
    return RegisterInput.model_validate(fields)


def test_register_claims_the_document_and_stores_markdown_as_converted(cloud: Any) -> None:
    rt, _ = cloud
    event = register_input(rt, "incoming/acme/returns.md", MARKDOWN)
    result = register_document(rt, event)
    assert (result.outcome, result.route, result.format) == ("owned", "text", "markdown")
    record = rt.registry.get(event.document_id)
    assert record is not None and record.owner == "run-1" and record.attempt == 1
    assert record.status is DocumentStatus.REGISTERED and record.source == "returns.md"
    assert rt.artifacts.get_text(keys.markdown_key(event.document_id)) == MARKDOWN.decode()
    # a retry of the same run claims again without counting an attempt
    assert register_document(rt, event).outcome == "owned"
    assert rt.registry.get(event.document_id).attempt == 1  # type: ignore[union-attr]


def test_register_routes_pdfs_and_office_files(cloud: Any) -> None:
    rt, _ = cloud
    pdf = make_pdf([text_page([Text("Hello", 72, 700)])])
    result = register_document(rt, register_input(rt, "incoming/a.pdf", pdf))
    assert (result.route, result.pdf_bucket, result.pdf_key) == ("pdf", "docs", "incoming/a.pdf")
    docx = b"PK\x03\x04" + b"\0" * 40
    with pytest.raises(DocumentError, match=r"b\.docx"):
        register_document(rt, register_input(rt, "incoming/b.docx", docx))


def test_register_routes_spreadsheets_to_be_read_as_tables(cloud: Any) -> None:
    rt, _ = cloud
    event = register_input(rt, "incoming/acme/fares.csv", b"city,fare\nOslo,42\n")
    result = register_document(rt, event)
    assert (result.outcome, result.route, result.format) == ("owned", "spreadsheet", "csv")


def test_a_spreadsheet_is_stored_as_markdown_rows_written_as_the_strategy_says(
    cloud: Any,
) -> None:
    rt, _ = cloud
    body = b"city,fare,zone\nOslo,42,A\nBergen,17,B\n"
    registered = register_input(rt, "incoming/acme/fares.csv", body)
    register_document(rt, registered)
    markdown = {}
    for rows in ("pipe", "sentences"):
        event = SpreadsheetInput(
            document_id=registered.document_id, execution="run-1", bucket="docs",
            key=registered.key, version_id=registered.version_id, format="csv",
            strategy=Strategy(table_rows=rows),
        )
        assert read_spreadsheet_upload(rt, event).model_dump() == {
            "sheets": 1, "rows": 2, "warnings": []}
        markdown[rows] = rt.artifacts.get_text(keys.markdown_key(registered.document_id))
    assert "| Oslo | 42 | A |" in markdown["pipe"]
    assert "| Oslo |" not in markdown["sentences"] and "Oslo" in markdown["sentences"]
    # the sheet count travels to Parse (ReadSpreadsheet cannot write the documents table)
    assert rt.registry.get(registered.document_id).pages == 0  # type: ignore[union-attr]
    broken = SpreadsheetInput(
        document_id=registered.document_id, execution="run-1", bucket="docs",
        key=registered.key, version_id=registered.version_id, format="xlsx",
        strategy=Strategy(),
    )
    with pytest.raises(DocumentError, match=r"^fares\.csv: "):
        read_spreadsheet_upload(rt, broken)


def test_register_refuses_a_too_large_upload_before_reading_it(cloud: Any) -> None:
    rt, _ = cloud
    event = register_input(rt, "incoming/big.md", MARKDOWN,
                           size=rt.settings.conversion.max_file_bytes + 1)
    rt.client("s3").delete_object(Bucket="docs", Key="incoming/big.md")  # reading would fail
    with pytest.raises(DocumentError, match=r"big\.md: file is .* MiB, more than the 500 MiB"):
        register_document(rt, event)


def test_register_defers_to_a_live_document_or_a_running_owner(cloud: Any) -> None:
    rt, _ = cloud
    event = register_input(rt, "incoming/doc.md", MARKDOWN, execution="run-1")
    rt.registry.put(DocumentRecord(document_id=event.document_id, source="doc.md",
                                   sha256="0" * 64, status=DocumentStatus.INDEXED,
                                   active_version=1))
    assert register_document(rt, event).outcome == "live"
    rt.registry.put(DocumentRecord(document_id=event.document_id, source="doc.md",
                                   sha256="0" * 64, owner="run-0"))
    sfn = rt.client("stepfunctions")
    sfn.start_execution(stateMachineArn=rt.resources.ingest_state_machine_arn, name="run-0",
                        input="{}")
    assert register_document(rt, event).outcome == "busy"
    # an owner that is not running any more loses its claim
    rt.registry.put(DocumentRecord(document_id=event.document_id, source="doc.md",
                                   sha256="0" * 64, owner="run-gone"))
    assert register_document(rt, event).outcome == "owned"


# --- conversion ------------------------------------------------------------------------------


def rendered(rt: Runtime, pages: int, execution: str = "run-1") -> tuple[str, Any]:
    """Count the pages of a PDF, then render every slice as the RenderSlices map does."""
    pdf = make_pdf([text_page([Text(f"Page {n} text", 72, 700)]) for n in range(1, pages + 1)])
    rt.artifacts.put_bytes("in.pdf", pdf)
    rt.registry.put(DocumentRecord(document_id="d1", source="in.pdf", sha256="0" * 64,
                                   owner=execution))
    result = render_document(rt, RenderInput(document_id="d1", execution=execution,
                                             pdf_bucket="art", pdf_key="in.pdf"))
    for piece in result.slices:
        render_slice(rt, slice_input(result.page_count, piece))
    return "d1", result


def slice_input(page_count: int, piece: ItemGroup) -> SliceInput:
    return SliceInput(document_id="d1", page_count=page_count, pdf_bucket="art",
                      pdf_key="in.pdf", slice=piece)


@pytest.mark.subprocess
def test_render_stores_pages_and_groups_batches(cloud: Any) -> None:
    rt, _ = cloud
    document_id, result = rendered(rt, 5)
    assert (result.page_count, result.batch_count) == (5, 3)  # batches of 2 in the fixture
    assert [g.model_dump() for g in result.groups] == [{"first": 0, "last": 2}]
    assert [g.model_dump() for g in result.slices] == [{"first": 0, "last": 2}]
    assert rt.artifacts.get_bytes(keys.page_key(document_id, 5))[:4] == b"\x89PNG"
    assert json.loads(rt.artifacts.get_text(keys.page_meta_key(document_id, 2))) == {"5": 11}
    # Render has no access to the documents table: Parse records the page count
    assert not rt.registry.get(document_id).pages  # type: ignore[union-attr]


def test_each_slice_renders_only_its_own_batches(cloud: Any) -> None:
    rt, _ = cloud
    pdf = make_pdf([text_page([Text(f"Page {n}", 72, 700)]) for n in range(1, 8)])
    rt.artifacts.put_bytes("in.pdf", pdf)
    done = render_slice(rt, slice_input(7, ItemGroup(first=1, last=2)))  # pages 3 to 6
    assert done.pages == 4
    stored = {n for n in range(1, 8) if rt.artifacts.exists(keys.page_key("d1", n))}
    assert stored == {3, 4, 5, 6}
    assert json.loads(rt.artifacts.get_text(keys.page_meta_key("d1", 1))) == {"3": 6, "4": 6}
    assert not rt.artifacts.exists(keys.page_meta_key("d1", 0))


def test_a_page_that_cannot_render_fails_its_slice_naming_the_page(cloud: Any) -> None:
    rt, _ = cloud
    pdf = make_pdf([text_page([Text(f"Page {n}", 72, 700)]) for n in range(1, 4)])
    rt.artifacts.put_bytes("in.pdf", pdf)
    with pytest.raises(DocumentError, match="page 5 does not exist"):  # counted as 6 pages
        render_slice(rt, slice_input(6, ItemGroup(first=2, last=2)))


@pytest.mark.parametrize(("batches", "batch_size", "count", "largest"),
                         [(1, 5, 1, 1), (10, 5, 1, 10), (11, 5, 2, 10), (1000, 5, 100, 10),
                          (1250, 4, 97, 13), (2500, 5, 100, 25), (2500, 20, 100, 25)])
def test_render_slices_hold_about_50_pages_and_at_most_100_slices(
    batches: int, batch_size: int, count: int, largest: int
) -> None:
    slices = render_slices(batches, batch_size)
    assert len(slices) == count <= 100
    covered = [b for s in slices for b in range(s.first, s.last + 1)]
    assert covered == list(range(batches))  # every batch in exactly one slice, in order
    assert max(s.last - s.first + 1 for s in slices) == largest
    if batches * batch_size >= 100 * SLICE_PAGES:
        return
    assert largest * batch_size < SLICE_PAGES + batch_size  # about SLICE_PAGES pages


def _with_bedrock(rt: Runtime, fake: FakeBedrockRuntime) -> None:
    rt._clients["bedrock-runtime"] = fake


def test_convert_stores_a_batch_and_raises_retryable_errors_for_step_functions(
    cloud: Any,
) -> None:
    rt, _ = cloud
    document_id, _ = rendered(rt, 3)
    fake = FakeBedrockRuntime(rt.artifacts.get_bytes("in.pdf"), "google.gemma-3-27b-it")
    _with_bedrock(rt, fake)
    item = ConvertInput(input=BatchItem(document_id=document_id, page_count=3, batch=1))
    fake.failures = [client_error("ThrottlingException", 400)]
    with pytest.raises(ModelThrottled):
        convert_pages(rt, item)
    fake.failures = [client_error("ServiceUnavailableException", 503)]
    with pytest.raises(TransientError):
        convert_pages(rt, item)
    assert convert_pages(rt, item).ok
    stored = json.loads(rt.artifacts.get_text(keys.batch_key(document_id, 1)))
    assert stored["pages"] == [3] and "<!-- Page 3 -->" in stored["markdown"]
    assert len(fake.converse_requests) == 3  # one call per invocation: Step Functions retries
    outcomes = [item["outcome"] for item in rt.ledger.table.scan()["Items"]]
    assert sorted(outcomes)[-1] == "ok" and len(outcomes) == 3
    # a request the model refuses for good becomes error markers at once
    fake.fail_pages = {1}
    first = ConvertInput(input=BatchItem(document_id=document_id, page_count=3, batch=0))
    assert not convert_pages(rt, first).ok
    assert "conversion failed" in rt.artifacts.get_text(keys.batch_key(document_id, 0))


def test_a_batch_whose_retries_ran_out_becomes_markers(cloud: Any) -> None:
    rt, _ = cloud
    document_id, _ = rendered(rt, 3)
    event = BatchFailedInput(document_id=document_id, page_count=3, batch=0,
                             error="ModelThrottled",
                             cause=json.dumps({"errorMessage": "Too many requests"}))
    assert not record_batch_failure(rt, event).ok
    stored = json.loads(rt.artifacts.get_text(keys.batch_key(document_id, 0)))
    assert stored["failure"] == "pages 1-2: conversion failed: ModelThrottled: Too many requests"
    assert "<!-- Page 2: conversion failed" in stored["markdown"]


# --- parse, plan, commit ---------------------------------------------------------------------


def parsed_markdown(rt: Runtime, execution: str = "run-1") -> Any:
    rt.registry.put(DocumentRecord(document_id="d1", source="doc.md", sha256="0" * 64,
                                   owner=execution))
    rt.artifacts.put_text(keys.markdown_key("d1"), MARKDOWN.decode())
    return parse_converted(rt, ParseInput(document_id="d1", execution=execution,
                                          strategy=Strategy(), batch_count=0))


def test_parse_records_the_page_count_and_normalises_warnings_once(cloud: Any) -> None:
    rt, _ = cloud
    rt.registry.put(DocumentRecord(document_id="d1", source="doc.docx", sha256="0" * 64,
                                   owner="run-1"))
    rt.artifacts.put_text(keys.markdown_key("d1"), MARKDOWN.decode())
    removed = "removed 1 external reference (1 linked object) before conversion"
    event = ParseInput(document_id="d1", execution="run-1", strategy=Strategy(),
                       page_count=3, source_warnings=[removed])
    parse_converted(rt, event)
    parse_converted(rt, event)  # a retried Parse adds the warning once
    record = rt.registry.get("d1")
    assert record is not None and record.pages == 3
    assert record.warnings.count(removed) == 1


def test_parse_stores_elements_and_each_section_with_its_elements(cloud: Any) -> None:
    rt, _ = cloud
    result = parsed_markdown(rt)
    assert (result.elements, result.section_count, result.failed_batches) == (4, 1, 0)
    assert [e.id for e in rt.elements.get_elements("d1")] == ["h1", "p1", "h2", "p2"]
    stored = json.loads(rt.artifacts.get_text(keys.section_key("d1", result.run_id, 0)))
    assert [e["id"] for e in stored["elements"]] == ["h1", "p1", "h2", "p2"]
    assert rt.registry.get("d1").status is DocumentStatus.CONVERTED  # type: ignore[union-attr]


def test_parse_refuses_a_document_without_text(cloud: Any) -> None:
    rt, _ = cloud
    rt.registry.put(DocumentRecord(document_id="d1", source="doc.md", sha256="0" * 64,
                                   owner="run-1"))
    rt.artifacts.put_text(keys.markdown_key("d1"), "# Only a title\n")
    with pytest.raises(DocumentError, match="no text content"):
        parse_converted(rt, ParseInput(document_id="d1", execution="run-1",
                                       strategy=Strategy(), batch_count=0))
    assert rt.elements.get_elements("d1") == []


def committed(rt: Runtime, fake: FakeBedrockRuntime, owner: str = "run-1") -> Any:
    parsed = parsed_markdown(rt, owner)
    _with_bedrock(rt, fake)
    item = SectionItem(document_id="d1", strategy=Strategy(), run_id=parsed.run_id, index=0)
    plan_one_section(rt, PlanSectionInput(input=item))
    prepared = prepare_plan(rt, PrepareInput(document_id="d1", strategy=Strategy(),
                                             run_id=parsed.run_id, section_count=1))
    for index in range(prepared.range_count):
        index_range(rt, IndexInput(input=RangeItem(document_id="d1", version=prepared.version,
                                                   index=index)))
    return prepared


def test_prepare_saves_the_plan_before_indexing_and_activation_retires(cloud: Any) -> None:
    rt, opensearch = cloud
    fake = FakeBedrockRuntime(None, "google.gemma-3-27b-it")
    prepared = committed(rt, fake)
    assert prepared.version == 1 and prepared.chunks == 1
    assert rt.plans.get_plan("d1", 1).chunk_ids_arrays  # body in S3, pointer in DynamoDB
    assert rt.artifacts.get_text(keys.plan_body_key("d1", 1))
    assert len(opensearch.chunks("d1")) == 1 and fake.embed_requests
    assert rt.registry.get("d1").active_version is None  # type: ignore[union-attr]
    activation = activate_version(rt, ActivateInput(document_id="d1", version=1, mode="ingest",
                                                    owner="run-1"))
    assert activation.activated
    record = rt.registry.get("d1")
    assert record is not None and record.status is DocumentStatus.INDEXED
    assert record.active_version == 1 and record.owner is None
    # a re-plan activates version 2 and retires version 1's chunks
    index_range(rt, IndexInput(input=RangeItem(document_id="d1", version=1, index=0)))
    assert len(opensearch.chunks("d1")) == 1  # a repeated range replaces, never adds


def test_throttled_embeddings_are_retried_by_step_functions(cloud: Any) -> None:
    rt, _ = cloud
    fake = FakeBedrockRuntime(None, "google.gemma-3-27b-it")
    fake.failures = [client_error("ThrottlingException", 400, "InvokeModel")]
    with pytest.raises(ModelThrottled):
        committed(rt, fake)


# --- end of ingest, delete, re-plan ----------------------------------------------------------


def test_a_failed_run_marks_failed_and_removes_what_it_indexed(cloud: Any) -> None:
    rt, opensearch = cloud
    committed(rt, FakeBedrockRuntime(None, "google.gemma-3-27b-it"))
    assert opensearch.chunks("d1")
    status = finalise_document(rt, FinaliseInput(
        document_id="d1", execution="run-1", outcome="FAILED", error="States.TaskFailed",
        cause=json.dumps({"errorMessage": "boom"})))
    assert status.status == "FAILED"
    record = rt.registry.get("d1")
    assert record is not None and record.error == "States.TaskFailed: boom"
    assert opensearch.chunks("d1") == []


def test_finalise_retires_the_document_the_key_held_before(cloud: Any) -> None:
    rt, opensearch = cloud
    committed(rt, FakeBedrockRuntime(None, "google.gemma-3-27b-it"))
    activate_version(rt, ActivateInput(document_id="d1", version=1, mode="ingest",
                                       owner="run-1"))
    rt.registry.claim_source("incoming/doc.md", "d1", "01")
    rt.registry.claim_source("incoming/doc.md", "d2", "02")  # a new upload of the key
    rt.registry.put(DocumentRecord(document_id="d2", source="doc.md", sha256="1" * 64))
    status = finalise_document(rt, FinaliseInput(document_id="d2", execution="run-2",
                                                 outcome="SUCCEEDED", previous_document="d1"))
    assert status.retired == ["d1"]
    assert rt.registry.get("d1").status is DocumentStatus.DELETED  # type: ignore[union-attr]
    assert opensearch.chunks("d1") == []


def test_delete_forgets_the_key_unless_a_version_remains(cloud: Any) -> None:
    rt, opensearch = cloud
    committed(rt, FakeBedrockRuntime(None, "google.gemma-3-27b-it"))
    activate_version(rt, ActivateInput(document_id="d1", version=1, mode="ingest",
                                       owner="run-1"))
    key = "incoming/doc.md"
    upload(rt, key, MARKDOWN)
    rt.registry.claim_source(key, "d1", "05")
    deleted = s3_event(key, "06", detail_type="Object Deleted")
    assert delete_object(rt, deleted).retired is None  # the object is still there
    rt.client("s3").delete_object(Bucket="docs", Key=key)  # a delete marker
    assert delete_object(rt, s3_event(key, "04", detail_type="Object Deleted")).retired is None
    assert delete_object(rt, deleted).retired == "d1"
    assert opensearch.chunks("d1") == []


def test_replan_manifest_stays_inside_the_named_tenant(cloud: Any) -> None:
    rt, _ = cloud
    for document_id, tenant in (("a1", "acme"), ("a2", "acme"), ("b1", "beta"), ("n1", None)):
        rt.registry.put(DocumentRecord(document_id=document_id, source="x.md", sha256="0" * 64,
                                       tenant=tenant, status=DocumentStatus.INDEXED,
                                       active_version=1))
    rt.registry.put(DocumentRecord(document_id="a3", source="x.md", sha256="0" * 64,
                                   tenant="acme", status=DocumentStatus.FAILED))

    def listed(**request: Any) -> list[str]:
        manifest = write_replan_manifest(rt, ManifestInput(
            source="drac.admin", request=ReplanRequest.model_validate(request), run_id="r"))
        items = json.loads(rt.artifacts.get_text(manifest.key))
        assert manifest.count == len(items)
        return sorted(item["document_id"] for item in items)

    assert listed(tenant="acme") == ["a1", "a2"]
    assert listed(tenant="acme", document_ids=["a1", "b1"]) == ["a1"]
    assert listed(all=True) == ["a1", "a2", "b1", "n1"]
    with pytest.raises(ValueError, match="name a tenant"):
        ReplanRequest.model_validate({"document_ids": ["a1"]})
    with pytest.raises(ValueError, match="name a tenant"):
        ReplanRequest.model_validate({})
