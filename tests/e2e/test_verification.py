"""The cloud checks a vision model's pages against their text layer (issue 21): the summary is
stored beside the conversion, counted on the record (and returned with the retrieval API's
hits), published as CloudWatch metrics, and the strategy's hold-back option leaves the
flagged page out of the index (PARTIAL)."""

from __future__ import annotations

import json
import re
from typing import Any

import boto3

from drac.aws import keys
from drac.documents.offline.pages import offline_markdown
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.ids import document_id_for
from drac.models import DocumentStatus, Strategy, VerificationCounts
from drac.settings import Settings
from tests.e2e.conftest import ACME_ROLE
from tests.e2e.harness import Cloud
from tests.fakes import _digest

KEY = "incoming/acme/store_locations.pdf"
INVENTED = "500099"  # the model writes this postcode for page 2's 500034


def _invent_a_number_on_page_two(bedrock: Any, pdf: bytes) -> None:
    """Make the fake model answer page 2 with one number the page does not hold."""
    texts = {page.number: page.markdown for page in offline_markdown(pdf)}
    assert "500034" in texts[2] and INVENTED not in texts[2]
    for page in render_pages(pdf, RenderOptions()):
        if page.number == 2:
            bedrock.page_texts[_digest(page.png)] = texts[2].strip().replace("500034", INVENTED)


def _upload(deployed: Any, pdf: bytes) -> None:
    boto3.client("s3", region_name="us-east-1").put_object(
        Bucket=deployed.documents_bucket, Key=KEY, Body=pdf
    )


def _retrieved_verification(deployed: Cloud, query: str) -> list[Any]:
    """The `verification` of every hit the retrieval API returns to acme's application."""
    answer = deployed.invoke_url(
        deployed.model.function_for("retrieve"), deployed.caller(ACME_ROLE), {"query": query}
    )
    assert answer["statusCode"] == 200, answer
    chunks = json.loads(answer["body"])["chunks"]
    assert chunks
    return [chunk["verification"] for chunk in chunks]


def test_the_record_counts_an_invented_number_and_the_api_returns_the_counts(
    cloud: Any,
) -> None:
    deployed, bedrock, _, pdf = cloud
    document_id = document_id_for(pdf, "acme")
    _invent_a_number_on_page_two(bedrock, pdf)
    _upload(deployed, pdf)
    assert [run["status"] for run in deployed.wait("ingest")] == ["SUCCEEDED"]
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.verification == VerificationCounts(
        pages_checked=4, flagged_pages=1, unsupported=1, missing=1, suspect_rows=0, held_back=0
    )
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(
        deployed.runtime.resources.documents_table
    )
    item = table.get_item(Key={"document_id": document_id})["Item"]
    assert set(item["verification"]) == set(VerificationCounts.model_fields)  # counts only
    assert INVENTED not in json.dumps(item, default=str)  # the tokens stay in S3
    expected = record.verification.model_dump(mode="json")
    found = _retrieved_verification(deployed, INVENTED)
    assert found == [expected] * len(found)


def test_an_honest_conversion_counts_zeros_on_the_record(cloud: Any) -> None:
    deployed, _, _, pdf = cloud
    document_id = document_id_for(pdf, "acme")
    _upload(deployed, pdf)
    assert [run["status"] for run in deployed.wait("ingest")] == ["SUCCEEDED"]
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.verification == VerificationCounts(
        pages_checked=4, flagged_pages=0, unsupported=0, missing=0, suspect_rows=0, held_back=0
    )
    assert not any(w.startswith("verification:") for w in record.warnings)
    expected = record.verification.model_dump(mode="json")
    found = _retrieved_verification(deployed, "500034")
    assert found == [expected] * len(found)


def test_the_summary_is_on_the_record_in_the_artifacts_and_in_the_metrics(
    cloud: Any, capsys: Any
) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    document_id = document_id_for(pdf, "acme")
    _invent_a_number_on_page_two(bedrock, pdf)

    _upload(deployed, pdf)
    runs = deployed.wait("ingest")
    assert [run["status"] for run in runs] == ["SUCCEEDED"]
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.INDEXED  # flagged only: nothing held back
    assert record.warnings[0] == (
        "verification: 1 unsupported; 1 missing; 0 suspect merged rows on pages 2"
    )
    summary = json.loads(deployed.runtime.artifacts.get_text(keys.verification_key(document_id)))
    pages = {page["page"]: page for page in summary["pages"]}
    assert set(pages) == {1, 2, 3, 4}  # every page was compared with its stored text layer
    assert pages[2]["unsupported"] == [INVENTED] and pages[2]["missing"] == ["500034"]
    assert all(pages[n]["counts"] == dict.fromkeys(pages[n]["counts"], 0) for n in (1, 3, 4))
    out = capsys.readouterr().out
    assert '"VerificationUnsupported":[1.0]' in out
    assert '"VerificationFlaggedPages":[1.0]' in out and '"VerifiedPages":[4.0]' in out
    assert any(INVENTED in chunk["text"] for chunk in opensearch.chunks(document_id))


def test_the_hold_back_option_leaves_the_flagged_page_out(
    cloud: Any, capsys: Any, monkeypatch: Any
) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    document_id = document_id_for(pdf, "acme")
    _invent_a_number_on_page_two(bedrock, pdf)
    strict = Strategy(name="strict", hold_back_flags=0)
    environment = deployed.environment

    def with_strict_strategy(function: Any) -> tuple[Any, Settings]:
        """The stack deployed with a default strategy that holds flagged pages back."""
        resources, settings = environment(function)
        return resources, settings.changed(strategy=strict)

    monkeypatch.setattr(deployed, "environment", with_strict_strategy)

    _upload(deployed, pdf)
    assert [run["status"] for run in deployed.wait("ingest")] == ["SUCCEEDED"]
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.PARTIAL and record.conversion_failures == 1
    markdown = deployed.runtime.artifacts.get_text(keys.markdown_key(document_id))
    assert re.search(r"<!-- Page 2: conversion failed: held back: 2 verification flags", markdown)
    chunks = opensearch.chunks(document_id)
    assert chunks and all(INVENTED not in chunk["text"] for chunk in chunks)
    assert '"PagesHeldBack":[1.0]' in capsys.readouterr().out
    assert record.verification is not None and record.verification.held_back == 1
