"""The same corpus PDF through the local runtime and the cloud path gives identical chunks.

Both sides see the same conversion answers: the local pipeline's VisionModel forwards each
batch to a Bedrock fake built exactly like the cloud test's (same pages, same text), so any
difference comes from the runtimes (batching, joining, parsing, sectioning, planning,
assembly), which is what this test is about.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3

from drac.documents.convert import ConversionOptions
from drac.ids import document_id_for
from drac.local import Workspace
from drac.local.pipeline import IngestSettings, ingest_file
from drac.models import DocumentStatus
from drac.ports import ModelReply, VisionModel
from tests.e2e.conftest import PDF, upload
from tests.fakes import FakeBedrockRuntime

KEY = "incoming/acme/store_locations.pdf"
CONVERSION_MODEL = "google.gemma-3-27b-it"


class BedrockFakeVision(VisionModel):
    """A VisionModel answering through the cloud test's Bedrock fake (a Converse request)."""

    name = CONVERSION_MODEL

    def __init__(self, fake: FakeBedrockRuntime) -> None:
        self.fake = fake

    def convert(self, system: str, prompt: str, images: Any) -> ModelReply:
        """Send the batch as Bedrock Converse would carry it; return the fake's answer."""
        content = [{"image": {"format": "png", "source": {"bytes": bytes(image)}}}
                   for image in images]
        response = self.fake.converse(
            modelId=CONVERSION_MODEL, system=[{"text": system}],
            messages=[{"role": "user", "content": [*content, {"text": prompt}]}],
            inferenceConfig={"temperature": 0.1, "maxTokens": 8192})
        return ModelReply(text=response["output"]["message"]["content"][0]["text"],
                          model=CONVERSION_MODEL)


def test_local_and_cloud_chunks_are_identical(cloud: Any, tmp_path: Path) -> None:
    deployed, cloud_bedrock, opensearch, pdf = cloud
    document_id = document_id_for(pdf, "acme")

    boto3.client("s3", region_name="us-east-1").put_object(
        Bucket=deployed.documents_bucket, Key=KEY, Body=pdf)
    assert [r["status"] for r in deployed.wait("ingest")] == ["SUCCEEDED"]
    cloud_chunks = sorted(opensearch.chunks(document_id), key=lambda c: c["chunk_id"])

    local_bedrock = FakeBedrockRuntime(pdf, CONVERSION_MODEL, "amazon.titan-embed-text-v2:0")
    (tmp_path / "in").mkdir()
    source = tmp_path / "in" / "store_locations.pdf"
    source.write_bytes(PDF.read_bytes())
    settings = IngestSettings(
        strategy=deployed.runtime.settings.conversion.strategy,  # the stack's default strategy
        conversion=ConversionOptions(batch_pages=deployed.runtime.settings.conversion.batch_size),
        tenant="acme",
    )
    workspace = Workspace(tmp_path / "ws")
    outcome = ingest_file(source, workspace, settings, vision=BedrockFakeVision(local_bedrock))
    assert outcome.status == DocumentStatus.INDEXED.value, outcome.error
    assert outcome.document_id == document_id

    # the same batches were asked of the model on both sides (in any order)
    def asked(fake: FakeBedrockRuntime) -> list[str]:
        return [r["messages"][0]["content"][-1]["text"] for r in fake.converse_requests]

    assert sorted(asked(local_bedrock)) == sorted(asked(cloud_bedrock))  # cloud: concurrent
    # identical Markdown (the one conversion's audit trail) ...
    cloud_markdown = deployed.runtime.artifacts.get_text(f"documents/{document_id}/document.md")
    assert workspace.get_markdown(document_id) == cloud_markdown
    # ... and identical chunks: text (what gets embedded), element ids, breadcrumbs, pages
    local_chunks = sorted(workspace.active_chunks(document_id), key=lambda c: c.chunk_id)
    assert len(local_chunks) == len(cloud_chunks) > 1
    for local, remote in zip(local_chunks, cloud_chunks, strict=True):
        assert local.chunk_id == remote["chunk_id"]
        assert local.text == remote["text"]
        assert list(local.element_ids) == remote["element_ids"]
        assert local.breadcrumb == remote["breadcrumb"]
        assert [str(p) for p in local.pages] == remote["pages"]
        assert local.plan_version == int(remote["plan_version"]) == 1
    assert json.dumps([c.text for c in local_chunks]) == json.dumps(
        [c["text"] for c in cloud_chunks])


def _same_chunks(deployed: Any, opensearch: Any, workspace: Workspace, document_id: str) -> int:
    """Assert the cloud's Markdown, elements and chunks are the local ingest's; return how many
    chunks there are."""
    cloud_markdown = deployed.runtime.artifacts.get_text(f"documents/{document_id}/document.md")
    assert workspace.get_markdown(document_id) == cloud_markdown
    assert list(deployed.runtime.elements.get_elements(document_id)) == list(
        workspace.get_elements(document_id))  # ids, text, pages, boxes
    cloud_chunks = sorted(opensearch.chunks(document_id), key=lambda c: c["chunk_id"])
    local_chunks = sorted(workspace.active_chunks(document_id), key=lambda c: c.chunk_id)
    assert [(c.chunk_id, c.text, list(c.element_ids), c.breadcrumb) for c in local_chunks] == [
        (c["chunk_id"], c["text"], c["element_ids"], c["breadcrumb"]) for c in cloud_chunks]
    return len(local_chunks)


def test_a_word_document_gives_the_same_chunks_locally_and_in_the_cloud(
    cloud: Any, tmp_path: Path
) -> None:
    """DOCX: LibreOffice (Normalise) renders it, the vision model converts the pages; both
    runtimes ask the model for the same page images and build the same chunks."""
    from shared_paths import VELVERA

    from drac.documents.intake.detect import DocumentFormat
    from drac.documents.intake.normalise import normalise

    deployed, cloud_bedrock, opensearch, _pdf = cloud
    source = VELVERA / "docx" / "purchasing.docx"
    data = source.read_bytes()
    normalised = normalise(data, DocumentFormat.DOCX).data
    cloud_bedrock.add_pdf(normalised)  # the model answers each page with its real text
    upload(deployed, data, "incoming/acme/purchasing.docx")
    assert [r["status"] for r in deployed.wait("ingest")] == ["SUCCEEDED"]

    local_bedrock = FakeBedrockRuntime(normalised, CONVERSION_MODEL)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / source.name).write_bytes(data)
    settings = IngestSettings(
        strategy=deployed.runtime.settings.conversion.strategy,
        conversion=ConversionOptions(batch_pages=deployed.runtime.settings.conversion.batch_size),
        tenant="acme",
    )
    workspace = Workspace(tmp_path / "ws")
    outcome = ingest_file(tmp_path / "in" / source.name, workspace, settings,
                          vision=BedrockFakeVision(local_bedrock))
    assert outcome.status == DocumentStatus.INDEXED.value, outcome.error
    document_id = document_id_for(data, "acme")
    assert outcome.document_id == document_id
    assert sorted(r["messages"][0]["content"][-1]["text"] for r in local_bedrock.converse_requests
                  ) == sorted(r["messages"][0]["content"][-1]["text"]
                              for r in cloud_bedrock.converse_requests)
    assert not any("has not seen" in c["text"] for c in opensearch.chunks(document_id))
    assert _same_chunks(deployed, opensearch, workspace, document_id) > 1


def test_an_llm_planned_markdown_document_gives_the_same_chunks_locally_and_in_the_cloud(
    cloud: Any, tmp_path: Path
) -> None:
    """Markdown planned by the LLM planner: the stack ingests it with its rules default, then
    an admin's re-plan event asks for the llm planner (the documented way to change a stored
    document's plan); locally the same ingest and re-plan go through Bedrock's client with
    the same scripted model. Both sides ask the same planning requests and keep the same
    chunks."""
    from shared_paths import VELVERA

    from drac.clients.bedrock import BedrockTextModel
    from drac.local.pipeline import replan_document
    from drac.strategies import strategy_from_request
    from tests.e2e.conftest import ADMIN_ROLE, put_events_as

    deployed, cloud_bedrock, opensearch, _pdf = cloud
    source = VELVERA / "md" / "phone_usage_guide.md"
    data = source.read_bytes()
    document_id = document_id_for(data, "acme")
    requested = {"name": "default", "planner": "llm"}
    upload(deployed, data, "incoming/acme/phone_usage_guide.md")
    deployed.settle()
    detail = {"tenant": "acme", "document_ids": [document_id], "strategy": requested}
    put_events_as(
        deployed,
        ADMIN_ROLE,
        [{"Source": "drac.admin", "DetailType": "Replan Requested", "Detail": json.dumps(detail)}],
    )
    assert [r["status"] for r in deployed.wait("replan")] == ["SUCCEEDED"]
    assert deployed.runtime.registry.get(document_id).active_version == 2
    assert cloud_bedrock.plan_requests and not cloud_bedrock.converse_requests

    settings = deployed.runtime.settings
    local_bedrock = FakeBedrockRuntime(None, CONVERSION_MODEL)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / source.name).write_bytes(data)
    workspace = Workspace(tmp_path / "ws")
    outcome = ingest_file(
        tmp_path / "in" / source.name,
        workspace,
        IngestSettings(strategy=settings.conversion.strategy, tenant="acme"),
    )
    assert outcome.status == DocumentStatus.INDEXED.value, outcome.error
    model = BedrockTextModel(
        settings.models.planning_model,
        client=local_bedrock,
        temperature=settings.models.temperature,
        max_answer_tokens=settings.models.planning_max_tokens,
    )
    record = workspace.get_document(document_id)
    assert record is not None
    replanned = replan_document(
        record, workspace, strategy_from_request(requested), text_model=model
    )
    assert replanned.status == DocumentStatus.INDEXED.value, replanned.error

    def asked(fake: FakeBedrockRuntime) -> list[str]:
        return sorted(json.dumps(r, sort_keys=True) for r in fake.plan_requests)

    assert asked(local_bedrock) == asked(cloud_bedrock)  # prompts, schema, caps, model
    assert _same_chunks(deployed, opensearch, workspace, document_id) > 1
    chunks = opensearch.chunks(document_id)
    assert {int(c["plan_version"]) for c in chunks} == {2}
    # the model's breaks made these chunks: each later chunk's first content element (after
    # the headings it carries) is a break the model answered
    headings = {e.id for e in deployed.runtime.elements.get_elements(document_id) if e.is_heading}
    starts = [next(i for i in c["element_ids"] if i not in headings) for c in chunks]
    breaks = {b for answer in cloud_bedrock.plan_answers for b in answer}
    assert len(set(starts) & breaks) == len(chunks) - 1 > 1, (starts, breaks)
