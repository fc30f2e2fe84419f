"""5,000-page documents through the real state machines on moto, within the service limits:
no state input or output over 256 KiB, no DynamoDB item over 400 KB (the harness checks both
on every call), no inline Map over 1,000 items, execution histories under 25,000 events."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import pytest
from pdfs import Text, make_pdf

from drac.aws import keys
from drac.aws.stages.fanout import MAX_SLICES
from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import DEPLOY_CONTEXT, upload
from tests.e2e.synth import synthesise_stack
from tests.e2e.template import StackTemplate
from tests.fakes import client_error

PAGES = 5000
HISTORY_LIMIT = 25_000
INLINE_MAP_LIMIT = 1000
STATE_LIMIT = 256 * 1024

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stack_template() -> StackTemplate:
    """`cdk deploy -c batchSize=4`: 1,250 batches, 13 groups of the conversion fan-out."""
    return synthesise_stack({**DEPLOY_CONTEXT, "batchSize": 4})


def _history(deployed: Any, arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    paginator = deployed.sfn.get_paginator("get_execution_history")
    for page in paginator.paginate(executionArn=arn, maxResults=1000):
        events.extend(page["events"])
    return events


def _assert_within_limits(deployed: Any) -> dict[str, int]:
    """Check every execution's history; return the event count of each machine's run."""
    counts = {}
    for machine in ("ingest", "convert", "plan"):
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


def _throttle_every_batch_once(bedrock: Any) -> set[str]:
    """Bedrock throttles the first try of every conversion call (each batch is retried)."""
    seen: set[str] = set()
    converse = bedrock.converse

    def throttled_first(**request: Any) -> Any:
        key = hashlib.sha1(repr(request.get("messages")).encode()).hexdigest()
        with bedrock.lock:
            first = key not in seen
            seen.add(key)
        if first:
            raise client_error("ThrottlingException", 429, "Converse")
        return converse(**request)

    bedrock.converse = throttled_first
    return seen


def _pages_stored(deployed: Any) -> Counter[str]:
    """How often the Render function stored each page image."""
    # Render writes through the per-document session it assumes, named after the function
    render = deployed.principal(deployed.model.function_for("render"))
    sessions = {c.principal for c in deployed.log.calls
                if c.principal.startswith(f"{render.logical_id} as ")}
    return Counter(
        c.parameters["Key"] for label in sessions | {render.label}
        for c in deployed.log.calls_of(label)
        if c.operation == "PutObject" and c.parameters["Key"].endswith(".png"))


def test_a_5000_page_pdf_is_indexed_with_every_batch_throttled(
    cloud: Any, sleeps: list[float]
) -> None:
    deployed, bedrock, opensearch, _pdf = cloud
    throttled = _throttle_every_batch_once(bedrock)
    slices = -(-PAGES // (4 * 13))  # 1,250 batches of 4 pages, 13 batches (52 pages) a slice
    deployed.throttle_first_tries.add("render")  # Lambda refuses each Render task's first try
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
    assert len(throttled) == PAGES // 4 and len(sleeps) >= PAGES // 4  # each batch retried
    # the pages were rendered in 97 slices, each its own Render invocation (one counted the
    # pages first; every throttled invocation was tried again), each page exactly once
    assert slices == 97 <= MAX_SLICES
    assert deployed.invocations.count("render") == 2 * (1 + slices)
    stored = _pages_stored(deployed)
    assert len(stored) == PAGES and set(stored.values()) == {1}
    counts = _assert_within_limits(deployed)
    # 13 child executions of at most 100 batches hold the batches and their retries; the
    # ingest's own history holds the slices (about 10 events each with a retry) and a few
    # events per group, far under the 25,000-event limit
    assert len(deployed.executions("convert")) == 13
    assert counts["convert"] > 1000 and 700 < counts["ingest"] < 2000 < HISTORY_LIMIT


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
