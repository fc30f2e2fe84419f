"""The cloud's escalation stage on moto: which batches ConvertBatch hands to EscalatePages,
and what EscalateBatch stores (the better-verified answer, the records, once)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pdfs import Text, make_pdf, text_page

from drac.aws import keys
from drac.aws.errors import ModelThrottled
from drac.aws.runtime import Runtime
from drac.aws.stages.conversion import (
    BatchFailedInput,
    BatchItem,
    ConvertInput,
    RenderInput,
    convert_pages,
    record_batch_failure,
    render_document,
    render_slice,
)
from drac.aws.stages.escalation import (
    EscalateInput,
    EscalationItem,
    convert_group_size,
    escalate_batch,
    escalation_model_id,
)
from drac.aws.stages.fanout import CONVERT_GROUP_SIZE
from drac.models import DocumentRecord
from drac.settings import Settings, SettingsError
from tests.fakes import FakeBedrockRuntime, _digest, client_error

FIRST = "google.gemma-3-27b-it"
SECOND = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def _escalating(rt: Runtime, escalate: bool = True) -> FakeBedrockRuntime:
    """Render a 3-page PDF (batches of 2) whose page 2 the first model answers with a number
    the page does not hold and the second honestly; return the fake."""
    if escalate:
        rt.settings = rt.settings.changed(escalate_to=f"bedrock:{SECOND}")
    pdf = make_pdf([text_page([Text(_line(n), 72, 700), Text(_line(n + 10), 72, 680)])
                    for n in range(1, 4)])
    rt.artifacts.put_bytes("in.pdf", pdf)
    rt.registry.put(DocumentRecord(document_id="d1", source="in.pdf", sha256="0" * 64,
                                   owner="run-1"))
    rendered = render_document(rt, RenderInput(document_id="d1", execution="run-1",
                                               pdf_bucket="art", pdf_key="in.pdf"))
    for piece in rendered.slices:
        render_slice(rt, _slice(piece))
    fake = FakeBedrockRuntime(None, FIRST)
    for n in range(1, 4):
        page = _digest(rt.artifacts.get_bytes(keys.page_key("d1", n)))
        fake.page_texts[page] = f"{_line(n)}\n\n{_line(n + 10)}"
    page_two = _digest(rt.artifacts.get_bytes(keys.page_key("d1", 2)))
    fake.model_texts[SECOND] = {page_two: fake.page_texts[page_two]}
    fake.page_texts[page_two] = fake.page_texts[page_two].replace("500032", "904711")
    rt._clients["bedrock-runtime"] = fake
    return fake


def _line(n: int) -> str:
    return f"Store {n} opens at nine and closes at six; its postcode is 5000{30 + n}."


def _slice(piece: Any) -> Any:
    from drac.aws.stages.conversion import SliceInput

    return SliceInput(document_id="d1", page_count=3, pdf_bucket="art", pdf_key="in.pdf",
                      slice=piece)


def _convert(rt: Runtime, batch: int) -> Any:
    return convert_pages(rt, ConvertInput(input=BatchItem(document_id="d1", page_count=3,
                                                          batch=batch)))


def _stored(rt: Runtime, batch: int = 0) -> dict[str, Any]:
    return json.loads(rt.artifacts.get_text(keys.batch_key("d1", batch)))


def _second_calls(fake: FakeBedrockRuntime) -> int:
    return sum(1 for r in fake.converse_requests if r["modelId"] == SECOND)


def test_only_a_batch_with_a_doubtful_page_is_an_item_and_only_with_escalation(
    cloud: Any,
) -> None:
    rt, _ = cloud
    _escalating(rt, escalate=False)
    plain = _convert(rt, 0)
    assert plain.escalate == [] and not plain.doubtful  # no escalateTo: never an item
    rt.settings = rt.settings.changed(escalate_to=f"bedrock:{SECOND}")
    done = _convert(rt, 0)
    assert done.doubtful
    assert done.escalate == [EscalationItem(document_id="d1", page_count=3, batch=0, pages=[2])]
    honest = _convert(rt, 1)  # page 3 answered faithfully
    assert honest.escalate == [] and not honest.doubtful


def test_a_failed_batch_is_escalated_whole(cloud: Any) -> None:
    rt, _ = cloud
    _escalating(rt)
    done = record_batch_failure(rt, BatchFailedInput(document_id="d1", page_count=3, batch=0,
                                                     error="ModelThrottled", cause="{}"))
    assert done.doubtful and done.escalate[0].pages == [1, 2]


def test_the_second_answer_is_kept_with_its_record_and_a_retry_changes_nothing(
    cloud: Any,
) -> None:
    rt, _ = cloud
    fake = _escalating(rt)
    item = _convert(rt, 0).escalate[0]
    fake.failures = [client_error("ThrottlingException", 400)]
    with pytest.raises(ModelThrottled):  # Step Functions backs off and retries
        escalate_batch(rt, EscalateInput(input=item))
    assert "escalations" not in _stored(rt) or not _stored(rt)["escalations"]
    done = escalate_batch(rt, EscalateInput(input=item))
    assert (done.escalated, done.kept) == (1, 1)
    stored = _stored(rt)
    assert "904711" not in stored["markdown"] and "500032" in stored["markdown"]
    assert "<!-- Page 1 -->" in stored["markdown"] and stored["pages"] == [1, 2]
    (record,) = stored["escalations"]
    assert record["page"] == 2 and record["model"] == f"bedrock:{SECOND}"
    assert record["first_model"] == f"bedrock:{FIRST}"
    assert record["flags_before"] > 0 and record["flags_after"] == 0
    assert [p["page"] for p in stored["verification"]] == [1, 2]
    calls = _second_calls(fake)
    assert calls == 2  # the throttled call and the answered one, page 2 alone
    again = escalate_batch(rt, EscalateInput(input=item))  # a retried invocation
    assert again == done and _second_calls(fake) == calls and _stored(rt) == stored
    models = {i["model"] for i in rt.ledger.table.scan()["Items"]}
    assert {FIRST, SECOND} <= models  # the answered calls, under each model's id


def test_retries_run_out_the_first_answer_is_kept_and_recorded(cloud: Any) -> None:
    rt, _ = cloud
    fake = _escalating(rt)
    item = _convert(rt, 0).escalate[0]
    done = escalate_batch(rt, EscalateInput(input=item, error="ModelThrottled", cause="{}"))
    assert (done.escalated, done.kept) == (1, 0)
    assert _second_calls(fake) == 0
    stored = _stored(rt)
    assert "904711" in stored["markdown"]
    (record,) = stored["escalations"]
    assert record["model"] == f"bedrock:{FIRST}" and record["flags_after"] is None


def test_the_cloud_escalates_to_bedrock_only_and_halves_its_convert_groups() -> None:
    assert escalation_model_id(Settings()) is None
    assert escalation_model_id(Settings(escalate_to=f"bedrock:{SECOND}")) == SECOND
    with pytest.raises(SettingsError, match="Bedrock only"):
        escalation_model_id(Settings(escalate_to="openai:qwen2.5-vl"))
    assert convert_group_size(Settings()) == CONVERT_GROUP_SIZE
    assert convert_group_size(Settings(escalate_to=f"bedrock:{SECOND}")) == CONVERT_GROUP_SIZE // 2
