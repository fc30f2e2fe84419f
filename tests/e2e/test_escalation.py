"""Escalation in the cloud (`-c escalateTo=bedrock:<model id>`): the convert machine's
EscalatePages map converts again, with the second model, exactly the pages the first model's
answers were flagged on; each page keeps the better-verified answer, its record says which
model and why, the ledger counts both models, and an honest first model escalates nothing
(the map runs no iteration). The Escalate function calls the second model under its own
role's statements, which name that model alone."""

from __future__ import annotations

import json
import re
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Key

from drac.aws import keys
from drac.costs.models import conversion_by_model
from drac.costs.prices import PriceTable
from drac.documents.offline.pages import offline_markdown
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.ids import document_id_for
from drac.models import LedgerEntry
from tests.e2e.conftest import CONVERSION_MODEL, DEPLOY_CONTEXT
from tests.e2e.harness import Cloud
from tests.e2e.synth import synthesise_stack
from tests.e2e.template import StackTemplate
from tests.fakes import _digest, client_error

STRONG = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
KEY = "incoming/acme/store_locations.pdf"
INVENTED = {2: ("500034", "500099"), 4: None}  # page -> (true number, invented); 4: found


@pytest.fixture(scope="module")
def escalating_template() -> StackTemplate:
    """The app synthesised with `-c escalateTo=bedrock:<Claude Haiku 4.5 profile>`."""
    return synthesise_stack({**DEPLOY_CONTEXT, "escalateTo": f"bedrock:{STRONG}"})


@pytest.fixture
def stack(escalating_template: StackTemplate) -> StackTemplate:
    return escalating_template


def _cheap_model_invents_numbers(bedrock: Any, pdf: bytes) -> dict[int, tuple[str, str]]:
    """The first model writes one number each of pages 2 and 4 do not hold; the second
    model answers those pages honestly. Returns page -> (true number, invented number)."""
    texts = {page.number: page.markdown.strip() for page in offline_markdown(pdf)}
    whole = "\n".join(texts.values())
    invented: dict[int, tuple[str, str]] = {}
    for number, pair in INVENTED.items():
        if pair is None:
            true = re.findall(r"\b\d{6}\b", texts[number])[0]
            pair = (true, "987123")
        assert pair[0] in texts[number] and pair[1] not in whole
        invented[number] = pair
    honest: dict[str, str] = {}
    for page in render_pages(pdf, RenderOptions()):
        if page.number in invented:
            true, fake = invented[page.number]
            bedrock.page_texts[_digest(page.png)] = texts[page.number].replace(true, fake)
            honest[_digest(page.png)] = texts[page.number]
    bedrock.model_texts[STRONG] = honest
    return invented


def _converted_pages(bedrock: Any, model: str) -> list[list[int]]:
    """The pages of each Converse call to `model`, in page order."""
    calls = [r for r in bedrock.converse_requests if r["modelId"] == model]
    pages = [
        sorted(
            int(n)
            for n in re.findall(r"image \d+ is page (\d+)", r["messages"][0]["content"][-1]["text"])
        )
        for r in calls
    ]
    return sorted(pages)


def _escalate_pages_lengths(deployed: Cloud) -> list[int]:
    """How many iterations each convert execution's EscalatePages map started with."""
    lengths: list[int] = []
    for run in deployed.executions("convert"):
        entered = None
        for event in deployed.history(run["executionArn"]):
            if event["type"] == "MapStateEntered":
                entered = event["stateEnteredEventDetails"]["name"]
            details = event.get("mapStateStartedEventDetails")
            if details is not None and entered == "EscalatePages":
                lengths.append(details["length"])
    return lengths


def _ledger(deployed: Cloud, document_id: str) -> list[LedgerEntry]:
    items = deployed.runtime.ledger.table.query(
        KeyConditionExpression=Key("document_id").eq(document_id)
    )["Items"]
    return [
        LedgerEntry.model_validate({k: v for k, v in item.items() if k in LedgerEntry.model_fields})
        for item in items
    ]


def _upload(deployed: Cloud, pdf: bytes) -> str:
    boto3.client("s3", region_name="us-east-1").put_object(
        Bucket=deployed.documents_bucket, Key=KEY, Body=pdf
    )
    assert [run["status"] for run in deployed.wait("ingest")] == ["SUCCEEDED"]
    return document_id_for(pdf, "acme")


def test_exactly_the_pages_with_invented_numbers_are_escalated_and_the_honest_answers_kept(
    cloud: Any,
) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    invented = _cheap_model_invents_numbers(bedrock, pdf)
    document_id = _upload(deployed, pdf)

    # batches of 2 pages: [1, 2] and [3, 4]; each converted again for its one doubtful page
    assert _converted_pages(bedrock, CONVERSION_MODEL) == [[1, 2], [3, 4]]
    assert _converted_pages(bedrock, STRONG) == [[2], [4]]
    assert sorted(_escalate_pages_lengths(deployed)) == [2]  # one group, two batches

    markdown = deployed.runtime.artifacts.get_text(keys.markdown_key(document_id))
    chunks = json.dumps(opensearch.chunks(document_id))
    for true, fake in invented.values():
        assert fake not in markdown and fake not in chunks
        assert true in markdown and true in chunks

    summary = json.loads(deployed.runtime.artifacts.get_text(keys.verification_key(document_id)))
    records = summary["escalations"]
    assert [r["page"] for r in records] == [2, 4]
    for record in records:
        assert record["first_model"] == f"bedrock:{CONVERSION_MODEL}"
        assert record["second_model"] == record["model"] == f"bedrock:{STRONG}"
        assert record["flags_before"] == 2 and record["flags_after"] == 0
        assert record["reason"].startswith("2 verification flags (1 unsupported, 1 missing")
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.verification is not None
    assert record.verification.flagged_pages == 0  # the kept answers are the honest ones
    assert any(w.startswith("escalation: 2 page(s) converted again by") for w in record.warnings)

    by_model = conversion_by_model(_ledger(deployed, document_id), PriceTable())
    assert {m: c.calls for m, c in by_model.items()} == {CONVERSION_MODEL: 2, STRONG: 2}
    assert by_model[STRONG].input_tokens == 2 * 1000  # the fake: 1,000 a page, one page a call
    assert by_model[CONVERSION_MODEL].input_tokens == 4 * 1000
    assert all(cost.dollars > 0 for cost in by_model.values())  # both priced (Haiku 4.5)


def test_an_honest_first_model_escalates_nothing_and_the_map_runs_no_iteration(
    cloud: Any,
) -> None:
    deployed, bedrock, _, pdf = cloud
    bedrock.model_texts[STRONG] = {}
    document_id = _upload(deployed, pdf)
    assert _converted_pages(bedrock, STRONG) == []
    assert _escalate_pages_lengths(deployed) == [0]
    (run,) = deployed.executions("convert")
    entered = [
        e["stateEnteredEventDetails"]["name"]
        for e in deployed.history(run["executionArn"])
        if "stateEnteredEventDetails" in e
    ]
    after = entered[entered.index("FindDoubtful") :]
    # what escalation costs a document no page of which is doubtful: four state transitions
    assert after == ["FindDoubtful", "AnyDoubtful", "NoneDoubtful", "EscalatePages"]
    summary = json.loads(deployed.runtime.artifacts.get_text(keys.verification_key(document_id)))
    assert summary["escalations"] == []
    record = deployed.runtime.registry.get(document_id)
    assert record is not None
    assert not any(w.startswith("escalation:") for w in record.warnings)


def test_a_second_model_throttled_for_good_leaves_the_first_answers_recorded_as_kept(
    cloud: Any,
) -> None:
    deployed, bedrock, _, pdf = cloud
    invented = _cheap_model_invents_numbers(bedrock, pdf)
    converse = bedrock.converse
    throttled: list[str] = []

    def strong_throttled(**request: Any) -> Any:
        if request["modelId"] == STRONG:
            throttled.append(request["modelId"])
            raise client_error("ThrottlingException", 429)
        return converse(**request)

    bedrock.converse = strong_throttled
    document_id = _upload(deployed, pdf)  # the document is not failed by its escalation
    assert len(throttled) > 2 * 10  # EscalateBatch's own retries, for each doubtful batch
    summary = json.loads(deployed.runtime.artifacts.get_text(keys.verification_key(document_id)))
    records = summary["escalations"]
    assert [r["page"] for r in records] == [2, 4]
    for record in records:  # KeepFirstAnswers: no second answer, the first one kept
        assert record["model"] == f"bedrock:{CONVERSION_MODEL}"
        assert record["flags_before"] == 2 and record["flags_after"] is None
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.verification is not None
    assert record.verification.flagged_pages == 2
    markdown = deployed.runtime.artifacts.get_text(keys.markdown_key(document_id))
    assert all(fake in markdown for _, fake in invented.values())  # flagged, not replaced
