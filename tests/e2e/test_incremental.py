"""A new version of an S3 key re-converts only the batches with a changed page, through the
real state machines on moto (batches of 2 pages in the test deployment; 5 where pages are put
in front of whole batches)."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Key
from page_model import document_pdf, labels

from drac.aws import keys
from drac.documents.offline.pages import offline_markdown
from drac.documents.vision.check import MARKER, page_texts
from drac.documents.vision.incremental import REUSED, StoredBatch
from drac.ids import document_id_for
from drac.models import DocumentStatus
from drac.settings import Settings
from tests.e2e.conftest import upload
from tests.e2e.harness import Cloud

KEY = "incoming/acme/report.pdf"
PAGES = 40
BATCH = 2


def _converted_pages(bedrock: Any, since: int) -> list[list[int]]:
    """The pages of every Converse call after the first `since`."""
    import re

    calls = bedrock.converse_requests[since:]
    prompts = [call["messages"][0]["content"][-1]["text"] for call in calls]
    return sorted([int(n) for n in re.findall(r"image \d+ is page (\d+)", p)] for p in prompts)


def _ingested(deployed: Cloud, bedrock: Any, pdf: bytes) -> str:
    bedrock.add_pdf(pdf)
    upload(deployed, pdf, KEY)
    runs = deployed.wait("ingest")
    assert all(run["status"] == "SUCCEEDED" for run in runs)
    document_id = document_id_for(pdf, "acme")
    record = deployed.runtime.registry.get(document_id)
    assert record is not None and record.status is DocumentStatus.INDEXED
    return document_id


def _expected_pages(pdf: bytes) -> dict[int, str]:
    """What the fake model answers for every page of `pdf` (its text layer's Markdown)."""
    return page_texts("\n\n".join(page.markdown for page in offline_markdown(pdf)))


def _stored_pages(deployed: Cloud, document_id: str) -> dict[int, str]:
    return page_texts(deployed.runtime.artifacts.get_text(keys.markdown_key(document_id)))


def test_one_edited_page_of_forty_converts_one_batch_in_the_cloud(cloud: Any) -> None:
    deployed, bedrock, _, _ = cloud
    before = labels(PAGES)
    after = [*before[:16], "Page 17 rewritten", *before[17:]]
    first = _ingested(deployed, bedrock, document_pdf(before))
    calls = len(bedrock.converse_requests)
    assert calls == PAGES // BATCH
    second = _ingested(deployed, bedrock, document_pdf(after))

    assert _converted_pages(bedrock, calls) == [[17, 18]]
    assert _stored_pages(deployed, second) == _expected_pages(document_pdf(after))
    old = deployed.runtime.elements.get_elements(first)
    new = deployed.runtime.elements.get_elements(second)
    assert [(e.id, e.text) for e in new if e.page != 17] == [
        (e.id, e.text) for e in old if e.page != 17
    ]
    assert [e.text for e in new if e.page == 17] != [e.text for e in old if e.page == 17]
    ledger = deployed.runtime.ledger.table.query(
        KeyConditionExpression=Key("document_id").eq(second)
    )
    outcomes = [item["outcome"] for item in ledger["Items"] if item["stage"] == "conversion"]
    assert sum(o.startswith(REUSED + ":") for o in outcomes) == PAGES // BATCH - 1
    assert f"{REUSED}: pages 1-2 unchanged since {first}" in outcomes
    assert sum(o == "ok" for o in outcomes) == 1


def test_swapped_pages_are_converted_again_in_the_cloud(cloud: Any) -> None:
    deployed, bedrock, _, _ = cloud
    before = labels(PAGES)
    after = list(before)
    after[2], after[32] = after[32], after[2]  # pages 3 and 33 trade places
    _ingested(deployed, bedrock, document_pdf(before))
    calls = len(bedrock.converse_requests)
    second = _ingested(deployed, bedrock, document_pdf(after))
    assert _converted_pages(bedrock, calls) == [[3, 4], [33, 34]]
    assert _stored_pages(deployed, second) == _expected_pages(document_pdf(after))


def _kept_by_number(deployed: Cloud, document_id: str) -> int:
    """Move a document's kept batches to the layout before they were kept by digest
    (`documents/<id>/batches/<number>.reuse.json`, as a document ingested then has them)."""
    artifacts = deployed.runtime.artifacts
    s3 = artifacts.client
    prefix = f"documents/{document_id}/reuse/"
    listed = s3.list_objects_v2(Bucket=artifacts.bucket, Prefix=prefix).get("Contents", [])
    for item in listed:
        kept = StoredBatch.model_validate_json(artifacts.get_text(item["Key"]))
        number = (kept.pages[0] - 1) // BATCH
        artifacts.put_text(
            f"documents/{document_id}/batches/{number:05d}.reuse.json", kept.model_dump_json()
        )
        s3.delete_object(Bucket=artifacts.bucket, Key=item["Key"])
    return len(listed)


def test_a_removed_page_converts_every_batch_after_it_in_the_cloud(cloud: Any) -> None:
    """The earlier version was kept in the layout before digests (by batch number): the
    batch of the same number is lent only where its pages are unchanged."""
    deployed, bedrock, _, _ = cloud
    before = labels(10)
    after = [*before[:3], *before[4:]]  # page 4 removed: 9 pages
    first = _ingested(deployed, bedrock, document_pdf(before))
    assert _kept_by_number(deployed, first) == 5
    calls = len(bedrock.converse_requests)
    second = _ingested(deployed, bedrock, document_pdf(after))
    # batch 0 (pages 1-2) reused from its numbered object; batches 1-3 hold other pages than
    # the earlier batches of their numbers did, so they are converted, never lent
    assert _converted_pages(bedrock, calls) == [[3, 4], [5, 6], [7, 8], [9]]
    assert [o for o in _outcomes(deployed, second) if o.startswith(REUSED + ":")] == [
        f"{REUSED}: pages 1-2 unchanged since {first}"
    ]
    assert _stored_pages(deployed, second) == _expected_pages(document_pdf(after))
    assert deployed.runtime.registry.get(second).pages == 9  # type: ignore[union-attr]


def _outcomes(deployed: Cloud, document_id: str) -> list[str]:
    ledger = deployed.runtime.ledger.table.query(
        KeyConditionExpression=Key("document_id").eq(document_id)
    )
    return [item["outcome"] for item in ledger["Items"] if item["stage"] == "conversion"]


def test_pages_put_in_front_of_whole_batches_reuse_every_batch_after_them(
    cloud: Any, monkeypatch: Any
) -> None:
    """Five new pages in front of a 40-page document in batches of 5: the 8 old batches
    are found where they now are (one batch later), only the new pages are converted."""
    deployed, bedrock, opensearch, _ = cloud
    environment = deployed.environment

    def in_batches_of_five(function: Any) -> tuple[Any, Settings]:
        resources, settings = environment(function)
        return resources, settings.changed(batch_size=5)

    monkeypatch.setattr(deployed, "environment", in_batches_of_five)
    knows = bedrock.add_pdf

    def answers_as_a_model_does(pdf: bytes) -> None:
        """One marker a page, as the prompt asks (the fake's page text is offline Markdown,
        which carries its own marker: a batch with a repeated marker is not moved)."""
        knows(pdf)
        for digest, text in bedrock.page_texts.items():
            bedrock.page_texts[digest] = MARKER.sub("", text).strip()

    monkeypatch.setattr(bedrock, "add_pdf", answers_as_a_model_does)
    before = labels(PAGES)
    after = [f"Inserted page {n}" for n in range(1, 6)] + before
    first = _ingested(deployed, bedrock, document_pdf(before))
    calls = len(bedrock.converse_requests)
    assert calls == PAGES // 5
    edited = document_pdf(after)  # one PDF: its bytes name the document
    second = _ingested(deployed, bedrock, edited)

    assert _converted_pages(bedrock, calls) == [[1, 2, 3, 4, 5]]
    outcomes = _outcomes(deployed, second)
    assert sum(o.startswith(REUSED + ":") for o in outcomes) == 8
    assert sum(o == "ok" for o in outcomes) == 1
    assert f"{REUSED}: pages 6-10 unchanged since {first}" in outcomes
    assert f"{REUSED}: pages 41-45 unchanged since {first}" in outcomes
    assert _stored_pages(deployed, second) == _expected_pages(edited)
    # the chunks are a full conversion's: the same bytes under another tenant (no earlier
    # version) convert all 9 batches and give the same chunk texts
    full = document_id_for(edited, "beta")
    calls = len(bedrock.converse_requests)
    upload(deployed, edited, "incoming/beta/report.pdf")
    assert all(run["status"] == "SUCCEEDED" for run in deployed.wait("ingest"))
    assert len(bedrock.converse_requests) - calls == 9
    chunks = [c["text"] for c in opensearch.chunks(second)]
    assert chunks and chunks == [c["text"] for c in opensearch.chunks(full)]
