"""Document identity in the cloud: a document is content, its sources are object keys; the
latest upload of a key wins by S3's sequencer, whatever order the executions finish in."""

from __future__ import annotations

from typing import Any

import boto3
from shared_paths import VELVERA

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import upload

KEY = "incoming/acme/guide"
MARKDOWN = (VELVERA / "md" / "contact_info.md").read_bytes()


def _status(deployed: Any, document_id: str) -> DocumentStatus:
    return deployed.runtime.registry.get(document_id).status


def _indexed(opensearch: Any) -> set[str]:
    return {doc["document_id"] for doc in opensearch.docs}


def test_a_key_updated_a_b_a_ends_with_a(cloud: Any) -> None:
    deployed, _bedrock, opensearch, pdf = cloud
    a, b = document_id_for(pdf, "acme"), document_id_for(MARKDOWN, "acme")
    upload(deployed, pdf, KEY)
    deployed.settle()
    upload(deployed, MARKDOWN, KEY)
    deployed.settle()
    assert (_status(deployed, a), _status(deployed, b)) == (
        DocumentStatus.DELETED, DocumentStatus.INDEXED)
    assert _indexed(opensearch) == {b}
    upload(deployed, pdf, KEY)
    deployed.settle()
    assert (_status(deployed, a), _status(deployed, b)) == (
        DocumentStatus.INDEXED, DocumentStatus.DELETED)
    assert _indexed(opensearch) == {a}
    assert deployed.runtime.registry.sources_of(a) == [KEY]


def test_the_later_upload_wins_even_when_the_earlier_finishes_last(cloud: Any) -> None:
    deployed, bedrock, opensearch, pdf = cloud
    bedrock.slow_s = 1.0  # the PDF (uploaded first) converts slowly; Markdown needs no model
    upload(deployed, pdf, KEY)
    upload(deployed, MARKDOWN, KEY)
    deployed.settle()
    older, newer = document_id_for(pdf, "acme"), document_id_for(MARKDOWN, "acme")
    runs = {run["name"].split("-")[0]: run for run in deployed.executions("ingest")}
    assert runs[older]["stopDate"] > runs[newer]["stopDate"], "the older one finished last"
    assert _status(deployed, newer) is DocumentStatus.INDEXED
    assert _status(deployed, older) is DocumentStatus.DELETED
    assert _indexed(opensearch) == {newer}


def test_an_old_version_deleted_keeps_the_document_of_the_current_one(cloud: Any) -> None:
    deployed, _bedrock, opensearch, pdf = cloud
    s3 = boto3.client("s3", region_name=deployed.region)
    upload(deployed, MARKDOWN, KEY)
    deployed.settle()
    upload(deployed, pdf, KEY)
    deployed.settle()
    versions = s3.list_object_versions(Bucket=deployed.documents_bucket, Prefix=KEY)["Versions"]
    (first,) = [v for v in versions if not v["IsLatest"]]
    s3.delete_object(Bucket=deployed.documents_bucket, Key=KEY, VersionId=first["VersionId"])
    deployed.settle()
    current = document_id_for(pdf, "acme")
    assert _status(deployed, current) is DocumentStatus.INDEXED
    assert _indexed(opensearch) == {current}
