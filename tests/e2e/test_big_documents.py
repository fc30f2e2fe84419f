"""5,000-page documents through the real state machines on moto, within the service limits:
no state input or output over 256 KiB, no DynamoDB item over 400 KB (the harness checks both
on every call), no inline Map over 1,000 items, execution histories under 25,000 events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pdfs import Text, make_pdf

from drac.aws import keys
from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import upload
from tests.e2e.template import StackTemplate, synthesise_stack

PAGES = 5000
HISTORY_LIMIT = 25_000
INLINE_MAP_LIMIT = 1000
STATE_LIMIT = 256 * 1024

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stack_template() -> StackTemplate:
    """`cdk deploy -c batchSize=4`: 1,250 batches, two groups of the conversion fan-out."""
    return synthesise_stack({"batchSize": 4})


def _history(deployed: Any, arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    paginator = deployed.sfn.get_paginator("get_execution_history")
    for page in paginator.paginate(executionArn=arn, maxResults=1000):
        events.extend(page["events"])
    return events


def _assert_within_limits(deployed: Any) -> dict[str, int]:
    """Check every execution's history; return the event count of each machine's run."""
    counts = {}
    for machine in ("ingest", "plan"):
        for run in deployed.executions(machine):
            events = _history(deployed, run["executionArn"])
            assert len(events) < HISTORY_LIMIT, (machine, len(events))
            counts[machine] = max(counts.get(machine, 0), len(events))
            for event in events:
                started = event.get("mapStateStartedEventDetails")
                if started:
                    assert started["length"] <= INLINE_MAP_LIMIT, started
                for details in event.values():
                    if isinstance(details, dict):
                        for field in ("input", "output"):
                            text = details.get(field)
                            if isinstance(text, str):
                                assert len(text.encode()) <= STATE_LIMIT, (event["type"], field)
    return counts


def test_a_5000_page_pdf_is_indexed(cloud: Any) -> None:
    deployed, bedrock, opensearch, _pdf = cloud
    pdf = make_pdf([(72, 72, [Text(f"Leaf {n}", 8, 30, size=9)]) for n in range(1, PAGES + 1)])
    key = "incoming/acme/manual.pdf"
    upload(deployed, pdf, key)
    (run,) = deployed.wait("ingest", timeout=1800)
    assert run["status"] == "SUCCEEDED"
    document_id = document_id_for(pdf, "acme")
    record = deployed.runtime.registry.get(document_id)
    assert record.status in (DocumentStatus.INDEXED, DocumentStatus.PARTIAL)
    assert record.pages == PAGES
    assert len(bedrock.converse_requests) == PAGES // 4
    plan = deployed.runtime.plans.get_plan(document_id, 1)
    assert len(opensearch.chunks(document_id)) == len(plan.chunk_ids_arrays)
    counts = _assert_within_limits(deployed)
    assert counts["ingest"] > 8000  # the conversion fan-out really ran in the ingest history


def test_a_5000_page_markdown_file_with_65000_paragraphs_is_indexed(cloud: Any) -> None:
    deployed, _bedrock, opensearch, _pdf = cloud
    pages = []
    for page in range(1, PAGES + 1):
        paragraphs = "\n\n".join(
            f"Clause {page}.{n}: the party shall keep record {page * 13 + n} for audit."
            for n in range(1, 14))
        pages.append(f"<!-- Page {page} -->\n\n## Article {page}\n\n{paragraphs}")
    markdown = ("# Master agreement\n\n" + "\n\n".join(pages) + "\n").encode()
    upload(deployed, markdown, "incoming/acme/agreement.md")
    (run,) = deployed.wait("ingest", timeout=1800)
    assert run["status"] == "SUCCEEDED"
    document_id = document_id_for(markdown, "acme")
    record = deployed.runtime.registry.get(document_id)
    assert record.status is DocumentStatus.INDEXED
    plan = deployed.runtime.plans.get_plan(document_id, 1)
    assert len(plan.sections) > INLINE_MAP_LIMIT  # the planning fan-out needed two groups
    chunks = opensearch.chunks(document_id)
    assert len(chunks) == len(plan.chunk_ids_arrays) > 5000
    # the plan's body is far past DynamoDB's item limit: it lives in S3, a pointer in the table
    body = deployed.runtime.artifacts.get_text(keys.plan_body_key(document_id, 1))
    assert len(body.encode()) > 400 * 1024
    item = deployed.runtime.plans.table.get_item(
        Key={"document_id": document_id, "version": 1})["Item"]
    assert len(json.dumps(item, default=str)) < 1024
    _assert_within_limits(deployed)
