"""Object keys arrive URL-encoded in S3's notifications, and AWS documents no encoding for
EventBridge (published events show `:` raw): uploads and deletes find the object either way."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from shared_paths import VELVERA

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e import moto_patches
from tests.e2e.moto_patches import s3_event_key

MARKDOWN = VELVERA / "md"
# key -> (tenant, file of the corpus whose bytes are uploaded there)
KEYS = {
    "incoming/acme/red flower.md": ("acme", "contact_info.md"),
    "incoming/acme/a+b=c.md": ("acme", "audio_catalog.md"),
    "incoming/acme/100% sure.md": ("acme", "tablet_catalog.md"),
    "incoming/acme/Café – 東京.md": ("acme", "promotional_offers.md"),
    "incoming/big corp/report 1.md": ("big corp", "corporate_booking_faqs.md"),
}


def test_s3_writes_keys_into_events_url_encoded() -> None:
    """As S3's notification documentation shows ("red flower.jpg" -> "red+flower.jpg")."""
    assert s3_event_key("incoming/acme/red flower.jpg") == "incoming/acme/red+flower.jpg"
    assert s3_event_key("incoming/a+b.md") == "incoming/a%2Bb.md"
    assert s3_event_key("incoming/100%.md") == "incoming/100%25.md"
    assert s3_event_key("incoming/Café.md") == "incoming/Caf%C3%A9.md"


def test_keys_with_spaces_plus_percent_and_unicode_are_ingested_and_deleted(
        cloud: Any) -> None:
    deployed, _bedrock, opensearch, _pdf = cloud
    s3 = boto3.client("s3", region_name=deployed.region)
    bucket = deployed.documents_bucket
    documents = {}
    for key, (tenant, name) in KEYS.items():
        data = (MARKDOWN / name).read_bytes()
        documents[key] = document_id_for(data, tenant)
    with ThreadPoolExecutor(len(KEYS)) as pool:  # uploaded at once
        list(pool.map(lambda key: s3.put_object(
            Bucket=bucket, Key=key, Body=(MARKDOWN / KEYS[key][1]).read_bytes()), KEYS))
    runs = deployed.wait("ingest")
    assert sorted(r["name"].split("-")[0] for r in runs) == sorted(documents.values())
    assert {r["status"] for r in runs} == {"SUCCEEDED"}
    for key, document_id in documents.items():
        record = deployed.runtime.registry.get(document_id)
        assert record.status is DocumentStatus.INDEXED, (key, record.error)
        assert (record.source_path, record.source) == (key, key.rsplit("/", 1)[1])
        assert record.tenant == KEYS[key][0]
        chunks = opensearch.chunks(document_id)
        assert chunks and {c["source"] for c in chunks} == {record.source}
        assert {c["tenant"] for c in chunks} == {KEYS[key][0]}

    for key in KEYS:  # a delete marker each: "Object Deleted" with the encoded key
        s3.delete_object(Bucket=bucket, Key=key)
    deployed.settle()
    for key, document_id in documents.items():
        assert deployed.runtime.registry.get(document_id).status is DocumentStatus.DELETED, key
        assert opensearch.chunks(document_id) == [], key


RAW_KEYS = {
    "incoming/acme/C++ guide 100%.md": "contact_info.md",  # decodes to "C   guide 100%.md"
    "incoming/acme/10:47:07 report+final.md": "audio_catalog.md",
}


def test_keys_delivered_raw_are_found_as_delivered_and_deleted(
        cloud: Any, monkeypatch: Any) -> None:
    deployed, _bedrock, opensearch, _pdf = cloud
    monkeypatch.setattr(moto_patches, "s3_event_key", lambda key: key)  # no encoding at all
    s3 = boto3.client("s3", region_name=deployed.region)
    documents = {}
    for key, name in RAW_KEYS.items():
        data = (MARKDOWN / name).read_bytes()
        documents[key] = document_id_for(data, "acme")
        s3.put_object(Bucket=deployed.documents_bucket, Key=key, Body=data)
    runs = deployed.wait("ingest")
    assert {r["status"] for r in runs} == {"SUCCEEDED"} and len(runs) == len(RAW_KEYS)
    for key, document_id in documents.items():
        record = deployed.runtime.registry.get(document_id)
        assert record.status is DocumentStatus.INDEXED and record.source_path == key
        assert opensearch.chunks(document_id)
    for key in RAW_KEYS:
        s3.delete_object(Bucket=deployed.documents_bucket, Key=key)
    deployed.settle()
    for key, document_id in documents.items():
        assert deployed.runtime.registry.get(document_id).status is DocumentStatus.DELETED, key


def test_an_upload_found_under_no_form_of_its_key_is_counted_not_dropped(
        cloud: Any, monkeypatch: Any, capsys: Any, caplog: Any) -> None:
    deployed, _bedrock, _opensearch, _pdf = cloud
    # the event names a key no object has (as a wrongly encoded key would)
    monkeypatch.setattr(moto_patches, "s3_event_key", lambda key: key + "-elsewhere")
    s3 = boto3.client("s3", region_name=deployed.region)
    s3.put_object(Bucket=deployed.documents_bucket, Key="incoming/acme/guide.md",
                  Body=(MARKDOWN / "contact_info.md").read_bytes())
    deployed.settle()
    assert deployed.executions("ingest") == []
    captured = capsys.readouterr()
    assert '"UploadsNotFound":[1.0]' in captured.out  # the metric the alarm watches
    assert "no object under any form of the key" in captured.out + captured.err + caplog.text
