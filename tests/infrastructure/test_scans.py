"""ReadScans, the OCR of scanned pages in the cloud: a container image in the converters'
network with a role that reads the PDF and writes page words only (through a per-document
session of its access role), wired into the ingest machine so that only a document with
scanned pages invokes it."""

from __future__ import annotations

from pathlib import Path

from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import as_list, flatten, role_of_policy, state, statements
from tests.infrastructure.test_security import role_id
from tests.infrastructure.test_state_machines import (
    LAMBDA_ERRORS,
    assert_backoff,
    machine,
    retry_for,
)

ROOT = Path(__file__).resolve().parents[2]


def test_read_scans_is_a_container_image_with_minutes_to_spare(synth: Synth) -> None:
    fn = synth.stack.pipeline.stages.read_scans
    props = synth.resources[synth.logical_id(fn)]["Properties"]
    assert props["PackageType"] == "Image" and "Layers" not in props
    assert props["MemorySize"] == 3008 and props["Timeout"] == 900
    assert props["TracingConfig"] == {"Mode": "Active"}
    (source,) = [
        s for s in synth.docker_sources if s["dockerBuildArgs"]["FUNCTION"] == "read_scans"
    ]
    assert source["dockerFile"] == "functions/read_scans/Dockerfile"
    dockerfile = (ROOT / "functions/read_scans/Dockerfile").read_text()
    # the OCR extra from PyPI (its models are files of the rapidocr wheel), no vendor download
    assert 'pip install --no-cache-dir "/build[aws,ocr]" awslambdaric' in dockerfile
    assert "http" not in dockerfile.split("FROM", 1)[1]
    assert "COPY functions/${FUNCTION}/handler.py /var/task/handler.py" in dockerfile


def _role_statements(synth: Synth, fn: object) -> list[tuple[list[str], list[str]]]:
    return _statements_of(synth, role_id(synth, fn))


def _statements_of(synth: Synth, role: str) -> list[tuple[list[str], list[str]]]:
    return [
        (sorted(as_list(st["Action"])), sorted(flatten(r) for r in as_list(st["Resource"])))
        for policy_id, st in statements(synth.resources)
        if role in role_of_policy(synth.resources[policy_id])
    ]


def test_read_scans_may_read_the_pdf_and_write_page_words_only(synth: Synth) -> None:
    """Every statement of its role: assume its access role (whose sessions each invocation
    narrows to one document) and trace. Every statement of that access role: read an upload
    or a normalised PDF, put objects under pages/ (no delete, no table, no model, no state
    machine)."""
    fn = synth.stack.pipeline.stages.read_scans
    access = synth.logical_id(synth.stack.pipeline.stages.access_roles["ReadScans"])
    documents = synth.logical_id(synth.stack.storage.documents)
    artifacts = synth.logical_id(synth.stack.storage.artifacts)
    assert sorted(_role_statements(synth, fn)) == sorted(
        [
            (["xray:PutTelemetryRecords", "xray:PutTraceSegments"], ["*"]),
            (["sts:AssumeRole"], [f"<{access}.Arn>"]),
        ]
    )
    assert sorted(_statements_of(synth, access)) == sorted(
        [
            (
                ["s3:GetObject", "s3:GetObjectVersion"],
                [
                    f"<{artifacts}.Arn>/documents/*/source.pdf",
                    f"<{documents}.Arn>/incoming/*",
                ],
            ),
            (["s3:PutObject"], [f"<{artifacts}.Arn>/pages/*"]),
        ]
    )
    assert "VpcConfig" in synth.resources[synth.logical_id(fn)]["Properties"]  # converters'


def test_only_a_document_with_scanned_pages_reads_them_before_conversion(synth: Synth) -> None:
    _, ingest, subs = machine(synth, "ingest")
    assert state(ingest, "RenderSlice")["ResultSelector"]["has_scans.$"] == "$.Payload.has_scans"
    find = state(ingest, "FindScans")
    assert find["Parameters"]["any.$"] == "States.ArrayContains($.scanned.flags, true)"
    choice = state(ingest, "AnyScans")
    assert choice["Default"] == "ConvertGroups"  # born-digital: no OCR invocation
    (rule,) = choice["Choices"]
    assert rule == {"Variable": "$.scanned.any", "BooleanEquals": True, "Next": "ListScans"}
    listed = state(ingest, "ListScans")
    assert listed["Parameters"] == {
        "pages.$": "$.scanned.slices[*].scans[*]",
        "per_read.$": "$.rendered.scan_group_pages",  # CountPages sizes the groups
    }
    assert listed["Next"] == "GroupScans"
    count = state(ingest, "CountPages")
    assert count["ResultSelector"]["scan_group_pages.$"] == "$.Payload.scan_group_pages"
    grouped = state(ingest, "GroupScans")
    assert grouped["Parameters"]["groups.$"] == (
        "States.ArrayPartition($.scanned.pages, $.scanned.per_read)"
    )
    scans = state(ingest, "ReadScans")
    assert scans["Type"] == "Map" and scans["ItemsPath"] == "$.scanned.groups"
    assert scans["MaxConcurrency"] == 10 and scans["Next"] == "ConvertGroups"
    assert scans["ResultPath"] is None
    (catch,) = scans["Catch"]
    assert catch["ErrorEquals"] == ["States.ALL"] and catch["Next"] == "MarkFailed"
    task = state(ingest, "ReadScanPages")
    assert task["Parameters"]["FunctionName"] == "SUB:ReadScansFunctionArn"
    assert task["TimeoutSeconds"] == 900 + 60
    for error in LAMBDA_ERRORS:
        assert_backoff(retry_for(task, error))
    assert retry_for(task, "Sandbox.Timedout")["MaxAttempts"] >= 1
    assert subs["ReadScansFunctionArn"] == {
        "Fn::GetAtt": [synth.logical_id(synth.stack.pipeline.stages.read_scans), "Arn"]
    }
