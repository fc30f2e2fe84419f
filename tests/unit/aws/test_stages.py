"""Stages of the Lambda handlers: their payload models and their behaviour on moto."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from drac.aws.conversion import RenderResult, record_failed_batch, store_text_document
from drac.aws.runtime import AwsEnvironment, Runtime
from drac.aws.stages.commit import CommitPlanInput, CommitResult, commit_plan
from drac.aws.stages.conversion import (
    BatchFailedInput,
    BatchInput,
    BatchResult,
    ConvertInput,
    NormaliseInput,
    RenderInput,
)
from drac.aws.stages.lifecycle import FinaliseInput, FinalStatus
from drac.aws.stages.parse import ParseInput, ParseResult, parse_document
from drac.aws.stages.planning import (
    PlannedSection,
    PlanSectionInput,
    Sectioning,
    SectionInput,
    SectionItem,
    plan_one_section,
    section_document,
)
from drac.aws.stages.register import DocumentLocation, RegisterInput
from drac.aws.stages.replan import Manifest, ManifestInput
from drac.errors import DocumentError
from drac.models import DocumentRecord, DocumentStatus, Element, ElementKind, Strategy
from tests.e2e.fakes import FakeOpenSearch
from tests.unit.aws.conftest import make_table

ROOT = Path(__file__).resolve().parents[3]
STRATEGY = Strategy().model_dump(mode="json")


# --- payload models ------------------------------------------------------------------------


def _error_locations(error: ValidationError) -> list[str]:
    return [".".join(str(part) for part in e["loc"]) for e in error.errors()]


@pytest.mark.parametrize(
    ("model", "event", "field"),
    [
        (CommitPlanInput, {"document_id": "d", "strategy": STRATEGY, "run_id": "r",
                           "sectioning": {"sections_key": "k"}}, "sectioning.section_count"),
        (ParseInput, {"document_id": "d", "strategy": STRATEGY, "batch_count": "two"},
         "batch_count"),
        (PlanSectionInput, {"input": {"document_id": "d", "strategy": STRATEGY,
                                      "sections_key": "k", "run_id": "r"}}, "input.index"),
        (ConvertInput, {"input": {"document_id": "d", "batch": 0}}, "input.page_count"),
        (RegisterInput, {"document_id": "d", "bucket": "b"}, "key"),
        (FinaliseInput, {"document_id": "d", "outcome": "MAYBE"}, "outcome"),
        (SectionInput, {"document_id": "d", "strategy": {"target_chars": "many"}, "run_id": "r"},
         "strategy.target_chars"),
        (ManifestInput, {"request": {"all": True, "colour": "red"}}, "request.colour"),
    ],
)
def test_a_malformed_event_names_the_field(model: type[BaseModel], event: dict[str, Any],
                                           field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(event)
    assert field in _error_locations(caught.value)


def test_fields_the_state_machines_send_but_the_stage_does_not_need_are_accepted() -> None:
    final = FinaliseInput.model_validate({"document_id": "d", "outcome": "SUCCEEDED",
                                          "failed_batches": 1, "plan_version": 2, "chunks": 9})
    assert (final.failed_batches, final.plan_version) == (1, 2)
    commit = CommitPlanInput.model_validate({
        "document_id": "d", "tenant": "acme", "strategy": STRATEGY, "run_id": "r",
        "sectioning": {"sections_key": "k", "section_count": 3}})
    assert commit.sectioning.section_count == 3 and commit.strategy == Strategy()


def _definitions() -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted((ROOT / "statemachine").glob("*.json"))]


def _lambda_states(states: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for state in states.values():
        if state.get("Resource") == "arn:aws:states:::lambda:invoke":
            yield state
        if "ItemProcessor" in state:
            yield from _lambda_states(state["ItemProcessor"]["States"])


OUTPUTS: dict[str, type[BaseModel]] = {
    "Register": DocumentLocation, "Normalise": DocumentLocation, "Render": RenderResult,
    "ConvertBatch": BatchResult, "BatchFailed": BatchResult, "Parse": ParseResult,
    "Section": Sectioning, "PlanSection": PlannedSection, "CommitPlan": CommitResult,
    "Finalise": FinalStatus, "Manifest": Manifest,
}
INPUTS: dict[str, type[BaseModel]] = {
    "Register": RegisterInput, "Normalise": NormaliseInput, "Render": RenderInput,
    "BatchFailed": BatchFailedInput, "Parse": ParseInput, "Section": SectionInput,
    "CommitPlan": CommitPlanInput, "Finalise": FinaliseInput, "Manifest": ManifestInput,
    "ConvertBatch": ConvertInput, "PlanSection": PlanSectionInput,
}


def _function(state: dict[str, Any]) -> str:
    name = re.fullmatch(r"\$\{(\w+)FunctionArn\}", state["Parameters"]["FunctionName"]).group(1)
    return "ConvertBatch" if name == "Convert" else name


def test_output_models_are_exactly_what_the_result_selectors_read() -> None:
    seen = set()
    for definition in _definitions():
        for state in _lambda_states(definition["States"]):
            name = _function(state)
            read = set(re.findall(r"\$\.Payload\.(\w+)", json.dumps(state["ResultSelector"])))
            assert set(OUTPUTS[name].model_fields) == read, name
            seen.add(name)
    assert seen == set(OUTPUTS)


def test_input_models_take_the_payloads_the_state_machines_send() -> None:
    for definition in _definitions():
        for state in _lambda_states(definition["States"]):
            name = _function(state)
            sent = {key.removesuffix(".$") for key in state["Parameters"]["Payload"]}
            assert sent <= set(INPUTS[name].model_fields), name
    plan = json.loads((ROOT / "statemachine" / "plan.asl.json").read_text())
    selected = {k.removesuffix(".$") for k in plan["States"]["PlanSections"]["ItemSelector"]}
    assert selected == set(SectionItem.model_fields)
    ingest = json.loads((ROOT / "statemachine" / "ingest.asl.json").read_text())
    selected = {k.removesuffix(".$") for k in ingest["States"]["ConvertBatches"]["ItemSelector"]}
    assert selected == set(BatchInput.model_fields)


# --- stages on moto ------------------------------------------------------------------------


class FakeEmbedder:
    """Titan-sized vectors; records what it was asked to embed."""

    name = "fake-embedder"
    dimension = 1024
    usage = None

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[0.0] * self.dimension for _ in texts]


class StageRuntime(Runtime):
    """The moto-backed runtime with a fake embedder."""

    fake_embedder = FakeEmbedder()

    def embedder(self) -> FakeEmbedder:  # type: ignore[override]
        return self.fake_embedder


@pytest.fixture
def rt(aws: Any) -> Iterator[StageRuntime]:
    aws.client("s3").create_bucket(Bucket="art")
    make_table(aws, "documents", "document_id", None, gsi="source_path")
    make_table(aws, "elements", "document_id", "seq")
    make_table(aws, "plans", "document_id", "version")
    make_table(aws, "ledger", "document_id", "entry", sk_type="S")
    env = AwsEnvironment(artifacts_bucket="art", documents_table="documents",
                         elements_table="elements", plans_table="plans", ledger_table="ledger",
                         region="us-east-1")
    runtime = StageRuntime(env, aws, opensearch_client=FakeOpenSearch())
    runtime.fake_embedder = FakeEmbedder()
    yield runtime


def _register(rt: Runtime, document_id: str = "doc", fmt: str = "markdown") -> None:
    rt.registry.put(DocumentRecord(document_id=document_id, source="guide.md",
                                   source_path=f"incoming/{document_id}.md", sha256="0" * 64,
                                   format=fmt))


def _elements(*texts: str) -> list[Element]:
    heading = Element(id="h1", kind=ElementKind.HEADING, text="# Guide", page=1, level=1)
    return [heading, *(Element(id=f"p{i}", kind=ElementKind.PARAGRAPH, text=text, page=1,
                               ancestors=("h1",)) for i, text in enumerate(texts, 1))]


def _plan_run(rt: Runtime, run_id: str, strategy: Strategy) -> CommitPlanInput:
    """Section and plan the stored elements like the planning machine does."""
    strategy_json = strategy.model_dump(mode="json")
    sectioning = section_document(rt, SectionInput.model_validate(
        {"document_id": "doc", "strategy": strategy_json, "run_id": run_id}))
    for index in range(sectioning.section_count):
        plan_one_section(rt, PlanSectionInput.model_validate({"input": {
            "document_id": "doc", "strategy": strategy_json, "run_id": run_id, "index": index,
            "sections_key": sectioning.sections_key}}))
    return CommitPlanInput.model_validate({
        "document_id": "doc", "tenant": None, "strategy": strategy_json, "run_id": run_id,
        "sectioning": sectioning.model_dump()})


def _indexed(rt: Runtime) -> list[dict[str, Any]]:
    return rt.index().client.chunks("doc")


def test_commit_numbers_versions_and_retires_the_previous_versions_chunks(
        rt: StageRuntime) -> None:
    _register(rt)
    rt.elements.put_elements("doc", _elements(*(f"Paragraph {i}. " * 30 for i in range(6))))

    first = commit_plan(rt, _plan_run(rt, "run-1", Strategy()))
    assert (first.plan_version, first.retired_version, first.retired_chunks) == (1, 0, 0)
    assert first.chunks == len(_indexed(rt)) > 1
    assert rt.registry.get("doc").active_version == 1

    fine = Strategy(name="fine", target_chars=400, min_chars=200)
    second = commit_plan(rt, _plan_run(rt, "run-2", fine))
    assert second.document_id == "doc"
    assert (second.plan_version, second.retired_version) == (2, 1)
    assert second.retired_chunks == first.chunks
    assert {c["plan_version"] for c in _indexed(rt)} == {"2"}
    assert len(_indexed(rt)) == second.chunks > first.chunks
    assert rt.plans.latest_version("doc") == 2
    assert rt.plans.get_plan("doc", 2).strategy.name == "fine"
    assert rt.registry.get("doc").active_version == 2
    assert [len(call) for call in rt.fake_embedder.calls] == [first.chunks, second.chunks]


def test_commit_refuses_a_chunk_over_the_hard_limit_before_storing_anything(
        rt: StageRuntime) -> None:
    _register(rt)
    rt.elements.put_elements("doc", _elements("Short one.", "x" * 2500))
    event = _plan_run(rt, "run-1", Strategy())
    with pytest.raises(DocumentError, match="hard limit 2000"):
        commit_plan(rt, event)
    assert rt.fake_embedder.calls == []
    assert _indexed(rt) == []
    assert rt.plans.latest_version("doc") == 0
    assert rt.registry.get("doc").active_version is None


def test_commit_of_an_unregistered_document_fails(rt: StageRuntime) -> None:
    rt.elements.put_elements("doc", _elements("Alone."))
    event = _plan_run(rt, "run-1", Strategy())
    with pytest.raises(KeyError, match="not registered"):
        commit_plan(rt, event)


def _parse(rt: Runtime, batch_count: int = 1) -> ParseResult:
    return parse_document(rt, ParseInput.model_validate(
        {"document_id": "doc", "strategy": STRATEGY, "batch_count": batch_count}))


def test_parse_stores_markdown_elements_and_sections(rt: StageRuntime) -> None:
    _register(rt)
    markdown = "# Guide\r\n\r\nFirst paragraph.\r\n\r\n## Part\r\n\r\nSecond paragraph.\r\n"
    store_text_document(rt.artifacts, "doc", markdown)
    result = _parse(rt)
    assert result == ParseResult(elements=4, sections_key="runs/doc/ingest/sections.json",
                                 section_count=1, failed_batches=0)
    assert "\r" not in rt.artifacts.get_text("documents/doc/document.md")
    assert [e.id for e in rt.elements.get_elements("doc")] == ["h1", "p1", "h2", "p2"]
    sections = json.loads(rt.artifacts.get_text(result.sections_key))
    assert len(sections) == 1
    assert rt.registry.get("doc").status is DocumentStatus.CONVERTED


def test_parse_counts_failed_batches_and_keeps_their_warnings(rt: StageRuntime) -> None:
    _register(rt, fmt="pdf")
    rt.artifacts.put_text("documents/doc/batches/00000.md", "<!-- Page 1 -->\n\nHello there.")
    rt.artifacts.put_text("documents/doc/batches/00000.json",
                          json.dumps({"batch": 0, "pages": [1], "ok": True}))
    record_failed_batch(rt.artifacts, "doc", 1, 2, 1, "ModelCallError: bad image")
    result = _parse(rt, batch_count=2)
    assert result.failed_batches == 1
    record = rt.registry.get("doc")
    assert record.warnings == ["pages 2: conversion failed: ModelCallError: bad image"]
    assert "<!-- Page 2: conversion failed" in rt.artifacts.get_text("documents/doc/document.md")


def test_parse_refuses_a_document_without_text_and_stores_no_elements(
        rt: StageRuntime) -> None:
    _register(rt)
    store_text_document(rt.artifacts, "doc", "# Only\n\n## Headings\n")
    with pytest.raises(DocumentError, match="no text content"):
        _parse(rt)
    assert rt.elements.get_elements("doc") == []
    assert rt.registry.get("doc").status is DocumentStatus.REGISTERED
