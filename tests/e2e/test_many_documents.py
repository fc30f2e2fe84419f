"""Many documents, formats and tenants in one deployment, uploaded, re-planned and deleted at
once: the pipeline's concurrency limits, deferrals and child executions hold up."""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pypdfium2
import pytest
from shared_paths import CLOUDWAY, VELVERA

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import ADMIN_ROLE, put_events_as

VELVERA_FILES = [
    "pdf/productivity_tools_usage_guide.pdf", "pdf/audio_catalog.pdf", "pdf/contact_info.pdf",
    "pdf/corporate_booking_faqs.pdf", "pdf/servicing_details.pdf",
    "pdf/terms_and_conditions.pdf",
    "md/velvera_one.md", "md/promotional_offers.md", "md/tablet_catalog.md",
]
CLOUDWAY_FILES = [
    "pdf/Cancel Your Booking.pdf", "pdf/Co-brand Credit Cards.pdf",
    "pdf/Employee Free Tickets & Discounts Policy.pdf", "pdf/Modify Trip Dates.pdf",
    "pdf/Staff Accommodation Policy.pdf", "pdf/Airbus A350.pdf",
    "md/Change Your Seat.md", "md/Trainee Pilot Programme.md", "md/Awards & Recognitions.md",
    "docx/Awards & Recognitions.docx",  # office formats go through LibreOffice (Normalise)
    "html/Trainee Pilot Programme.html",
]


@dataclass(frozen=True)
class Upload:
    """One object uploaded into a tenant's folder."""

    tenant: str
    path: Path

    @property
    def key(self) -> str:
        """The object key: the corpus file name under the tenant's folder."""
        return f"incoming/{self.tenant}/{self.path.suffix[1:]}/{self.path.name}"

    @property
    def document_id(self) -> str:
        """The content-hash document id."""
        return document_id_for(self.path.read_bytes(), self.tenant)


UPLOADS = ([Upload("velvera", VELVERA / f) for f in VELVERA_FILES]
           + [Upload("cloudway", CLOUDWAY / f) for f in CLOUDWAY_FILES])


def converted_batches(upload: Upload, batch_size: int) -> int:
    """Conversion calls a PDF needs (office documents are counted after normalising)."""
    return math.ceil(len(pypdfium2.PdfDocument(upload.path.read_bytes())) / batch_size)


@pytest.mark.slow
@pytest.mark.libreoffice
def test_many_documents_of_two_tenants_ingest_replan_and_delete_concurrently(
        cloud: Any) -> None:
    deployed, bedrock, opensearch, _pdf = cloud
    assert len(UPLOADS) >= 20 and len({u.document_id for u in UPLOADS}) == len(UPLOADS)
    for upload in UPLOADS:
        if upload.path.suffix == ".pdf":
            bedrock.add_pdf(upload.path.read_bytes())
    s3 = boto3.client("s3", region_name=deployed.region)
    bucket = deployed.documents_bucket
    env = deployed.runtime.settings

    with ThreadPoolExecutor(8) as pool:  # all uploads at once
        list(pool.map(lambda u: s3.put_object(Bucket=bucket, Key=u.key,
                                              Body=u.path.read_bytes()), UPLOADS))
    runs = deployed.wait("ingest", timeout=900)
    assert sorted(r["name"].split("-")[0] for r in runs) == sorted(u.document_id for u in UPLOADS)
    assert {r["status"] for r in runs} == {"SUCCEEDED"}
    # At most MAX_RUNNING_DOCUMENTS at once: the starter deferred uploads (the message went
    # back to the queue) and started them on a later delivery.
    starter = deployed.principal(deployed.model.function_for("starter")).label
    operations = [c.operation for c in deployed.log.calls_of(starter)]
    assert env.cloud.max_running_documents < len(UPLOADS)
    assert operations.count("StartExecution") == len(UPLOADS)
    assert operations.count("ListExecutions") > len(UPLOADS), "no upload was deferred"
    for upload in UPLOADS:
        record = deployed.runtime.registry.get(upload.document_id)
        assert record.status is DocumentStatus.INDEXED, (upload.key, record.error)
        assert (record.tenant, record.source_path, record.active_version) == (
            upload.tenant, upload.key, 1)
        chunks = opensearch.chunks(upload.document_id)
        assert chunks and {(c["tenant"], c["plan_version"]) for c in chunks} == {
            (upload.tenant, "1")}
    pdf_batches = sum(converted_batches(u, env.conversion.batch_size) for u in UPLOADS
                      if u.path.suffix == ".pdf")
    conversions = len(bedrock.converse_requests)
    assert conversions >= pdf_batches + 2  # plus the two normalised office documents
    # every child planning execution has its own name (moto called them all "None")
    assert len({p["name"] for p in deployed.executions("plan")}) == len(UPLOADS)

    put_events_as(deployed, ADMIN_ROLE, [
        {"Source": "drac.admin", "DetailType": "Replan Requested",
         "Detail": json.dumps({"all": True, "tenant": tenant, "strategy": strategy})}
        for tenant, strategy in (("velvera", "fine"), ("cloudway", "coarse"))])
    replans = deployed.wait("replan", timeout=900)
    assert [r["status"] for r in replans] == ["SUCCEEDED", "SUCCEEDED"]
    assert len(deployed.executions("plan")) == 2 * len(UPLOADS)
    for upload in UPLOADS:
        assert deployed.runtime.registry.get(upload.document_id).active_version == 2
        plan = deployed.runtime.plans.get_plan(upload.document_id, 2)
        assert plan.strategy.name == {"velvera": "fine", "cloudway": "coarse"}[upload.tenant]
        chunks = opensearch.chunks(upload.document_id)
        assert chunks and {c["plan_version"] for c in chunks} == {"2"}
    assert len(bedrock.converse_requests) == conversions  # never converted again

    with ThreadPoolExecutor(8) as pool:  # delete markers, all at once
        list(pool.map(lambda u: s3.delete_object(Bucket=bucket, Key=u.key), UPLOADS))
    deployed.settle(timeout=600)
    for upload in UPLOADS:
        record = deployed.runtime.registry.get(upload.document_id)
        assert record.status is DocumentStatus.DELETED, upload.key
    assert opensearch.docs == []
