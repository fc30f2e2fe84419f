"""The stages' pydantic models against the ASL: what the state machines send and read."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from drac.aws.stages.commit import (
    Abandoned,
    AbandonInput,
    ActivateInput,
    IndexedRange,
    IndexInput,
    PreparedPlan,
    PrepareInput,
    RangeItem,
)
from drac.aws.stages.conversion import (
    BatchDone,
    BatchFailedInput,
    BatchItem,
    ConvertInput,
    NormaliseInput,
    PdfLocation,
    Rendered,
    RenderInput,
    SliceInput,
    SliceRendered,
)
from drac.aws.stages.escalation import Escalated, EscalateInput, EscalationItem
from drac.aws.stages.lifecycle import FinaliseInput, FinalStatus
from drac.aws.stages.parse import ParseInput, ParseResult
from drac.aws.stages.planning import (
    PlannedSection,
    PlanSectionInput,
    Sectioning,
    SectionInput,
    SectionItem,
)
from drac.aws.stages.register import Registered, RegisterInput
from drac.aws.stages.replan import Manifest, ManifestInput
from drac.aws.stages.scans import ScansInput, ScansRead
from drac.aws.stages.spreadsheet import SpreadsheetInput, SpreadsheetRead
from drac.commit import Activation
from drac.models import Strategy

ROOT = Path(__file__).resolve().parents[3]
STRATEGY = Strategy().model_dump(mode="json")
INPUTS: dict[str, type[BaseModel]] = {
    "Register": RegisterInput, "Normalise": NormaliseInput, "Render": RenderInput,
    "ReadSpreadsheet": SpreadsheetInput, "ReadScans": ScansInput,
    "Convert": ConvertInput, "BatchFailed": BatchFailedInput, "Parse": ParseInput,
    "Section": SectionInput, "PlanSection": PlanSectionInput, "PreparePlan": PrepareInput,
    "IndexChunks": IndexInput, "ActivatePlan": ActivateInput, "AbandonPlan": AbandonInput,
    "Finalise": FinaliseInput, "Manifest": ManifestInput, "Escalate": EscalateInput,
}
OUTPUTS: dict[str, type[BaseModel]] = {
    "Register": Registered, "Normalise": PdfLocation, "Render": Rendered,
    "ReadSpreadsheet": SpreadsheetRead, "ReadScans": ScansRead,
    "Convert": BatchDone, "BatchFailed": BatchDone, "Parse": ParseResult,
    "Section": Sectioning, "PlanSection": PlannedSection, "PreparePlan": PreparedPlan,
    "IndexChunks": IndexedRange, "ActivatePlan": Activation, "AbandonPlan": Abandoned,
    "Finalise": FinalStatus, "Manifest": Manifest, "Escalate": Escalated,
}


BY_STATE: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "RenderSlice": (SliceInput, SliceRendered),
}
"""States whose function takes a second kind of payload (Render renders one slice)."""


def _models(state_name: str, function: str) -> tuple[type[BaseModel], type[BaseModel]]:
    return BY_STATE.get(state_name, (INPUTS[function], OUTPUTS[function]))


def _definitions() -> Iterator[dict[str, Any]]:
    for name in ("ingest", "convert", "plan", "replan", "escalate"):  # escalate: convert's
        yield json.loads((ROOT / "statemachine" / f"{name}.asl.json").read_text())


def _lambda_states(states: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, state in states.items():
        if state.get("Resource") == "arn:aws:states:::lambda:invoke":
            yield name, state
        processor = state.get("ItemProcessor")
        if processor:
            yield from _lambda_states(processor["States"])


def _states(states: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, state in states.items():
        yield name, state
        if "ItemProcessor" in state:
            yield from _states(state["ItemProcessor"]["States"])


def _function(state: dict[str, Any]) -> str:
    return re.fullmatch(r"\$\{(\w+)FunctionArn\}", state["Parameters"]["FunctionName"]).group(1)


def test_every_function_of_the_machines_has_an_input_and_output_model() -> None:
    used = {_function(s) for d in _definitions() for _, s in _lambda_states(d["States"])}
    assert used == set(INPUTS) == set(OUTPUTS)


def test_result_selectors_read_only_fields_the_output_models_have() -> None:
    for definition in _definitions():
        for state_name, state in _lambda_states(definition["States"]):
            name = _function(state)
            read = set(re.findall(r"\$\.Payload\.(\w+)", json.dumps(state["ResultSelector"])))
            assert read <= set(_models(state_name, name)[1].model_fields), state_name


def test_payloads_the_machines_send_are_what_the_input_models_take() -> None:
    for definition in _definitions():
        for state_name, state in _lambda_states(definition["States"]):
            model = _models(state_name, _function(state))[0]
            sent = {key.removesuffix(".$") for key in state["Parameters"]["Payload"]}
            fields = set(model.model_fields)
            if sent == {"input"}:  # a map item, passed whole
                continue
            assert sent <= fields, (state_name, sent - fields)
            required = {k for k, f in model.model_fields.items() if f.is_required()}
            assert required <= sent, (state_name, required - sent)


@pytest.mark.parametrize(
    ("machine", "inner_map", "model"),
    [("convert", "ConvertBatches", BatchItem), ("ingest", "RenderSlices", SliceInput),
     ("ingest", "ReadScans", ScansInput), ("plan", "PlanSections", SectionItem),
     ("plan", "IndexRanges", RangeItem)],
)
def test_map_items_are_what_the_item_models_take(
    machine: str, inner_map: str, model: type[BaseModel]
) -> None:
    asl = json.loads((ROOT / "statemachine" / f"{machine}.asl.json").read_text())
    (state,) = [s for name, s in _states(asl["States"]) if name == inner_map]
    assert {k.removesuffix(".$") for k in state["ItemSelector"]} == set(model.model_fields)


def test_convert_batch_outputs_are_escalate_pages_items() -> None:
    """ConvertBatches' iterations output the stage's `doubtful` flag and `escalate` list,
    whose items EscalatePages hands to the Escalate function whole (its `input`)."""
    convert = json.loads((ROOT / "statemachine" / "convert.asl.json").read_text())
    escalate = json.loads((ROOT / "statemachine" / "escalate.asl.json").read_text())
    for name in ("ConvertBatch", "MarkBatchFailed"):
        (state,) = [s for n, s in _states(convert["States"]) if n == name]
        assert state["OutputPath"] == "$.converted"
        assert state["ResultSelector"]["escalate.$"] == "$.Payload.escalate"
        assert state["ResultSelector"]["doubtful.$"] == "$.Payload.doubtful"
    assert BatchDone.model_fields["escalate"].annotation == list[EscalationItem]
    patch = escalate["Patch"]["ConvertBatches"]
    assert patch["ResultSelector"]["flags.$"] == "$[*].doubtful"
    listed = escalate["States"]["ListDoubtful"]["Parameters"]["items.$"]
    assert listed == f"{patch['ResultPath']}.batches[*].escalate[*]"
    assert escalate["States"]["EscalatePages"]["ItemsPath"] == "$.escalated.items"
    (keep,) = [s for n, s in _states(escalate["States"]) if n == "KeepFirstAnswers"]
    sent = {key.removesuffix(".$") for key in keep["Parameters"]["Payload"]["input"]}
    assert sent == set(EscalationItem.model_fields)


def _error_locations(error: ValidationError) -> list[str]:
    return [".".join(str(part) for part in e["loc"]) for e in error.errors()]


@pytest.mark.parametrize(
    ("model", "event", "field"),
    [
        (PrepareInput, {"document_id": "d", "strategy": STRATEGY, "run_id": "r"},
         "section_count"),
        (ParseInput, {"document_id": "d", "execution": "e", "strategy": STRATEGY,
                      "batch_count": "two"}, "batch_count"),
        (PlanSectionInput, {"input": {"document_id": "d", "strategy": STRATEGY,
                                      "run_id": "r"}}, "input.index"),
        (ConvertInput, {"input": {"document_id": "d", "batch": 0}}, "input.page_count"),
        (RegisterInput, {"document_id": "d", "bucket": "b"}, "key"),
        (FinaliseInput, {"document_id": "d", "execution": "e", "outcome": "MAYBE"}, "outcome"),
        (ActivateInput, {"document_id": "d", "version": 1, "mode": "sometimes"}, "mode"),
        (SectionInput, {"document_id": "d", "strategy": {"target_chars": "many"},
                        "run_id": "r"}, "strategy.target_chars"),
        (ScansInput, {"document_id": "d", "pdf_bucket": "b", "pdf_key": "k", "pages": []},
         "pages"),
        (ManifestInput, {"source": "drac.admin", "request": {"all": True, "colour": "red"},
                         "run_id": "r"},
         "request.colour"),
    ],
)
def test_a_malformed_event_names_the_field(
    model: type[BaseModel], event: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(event)
    assert field in _error_locations(caught.value)
