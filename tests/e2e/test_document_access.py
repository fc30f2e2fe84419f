"""A converter holds nothing it does not need: its own role may only assume its access role,
and each invocation does so with a session policy naming exactly its document's upload (or
PDF) and its document's artefacts. The harness evaluates every call of such a session as AWS
does: the access role's statements (with the bucket policies) AND the session policy
(tests/e2e/sessions.py)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from shared_paths import VELVERA

from drac.aws import keys
from drac.aws.document_access import DocumentScope
from drac.aws.runtime import Runtime
from drac.aws.stages.conversion import PdfLocation, page_scope
from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import PDF, upload
from tests.e2e.harness import Cloud

DOCX = (VELVERA / "docx" / "contact_info.docx").read_bytes()
CSV = b"route,fare\nLyon,12\nParis,15\n"
ACME_PDF = "incoming/acme/store_locations.pdf"
BETA_PDF = "incoming/beta/store_locations_copy.pdf"


def _denied(call: Any) -> None:
    with pytest.raises(ClientError) as raised:
        call()
    assert raised.value.response["Error"]["Code"] in {"AccessDenied", "AccessDeniedException"}


def test_an_ingest_through_per_document_sessions_ends_indexed(cloud: Any) -> None:
    """A DOCX (Normalise, Render) and a CSV (ReadSpreadsheet) end INDEXED; every session
    policy the converters passed names only its own document's objects; the spreadsheet's
    sheet count reached the record through Parse."""
    deployed: Cloud = cloud[0]
    upload(deployed, DOCX, "incoming/acme/contact_info.docx")
    upload(deployed, CSV, "incoming/acme/fares.csv")
    deployed.settle()
    docx_id, csv_id = document_id_for(DOCX, "acme"), document_id_for(CSV, "acme")
    for document_id in (docx_id, csv_id):
        record = deployed.runtime.registry.get(document_id)
        assert record is not None and record.status is DocumentStatus.INDEXED, record
    assert deployed.runtime.registry.get(csv_id).pages == 1  # type: ignore[union-attr]
    policies = deployed.sessions.policies
    assert len(policies) >= 4  # Normalise, CountPages, a slice, ReadSpreadsheet
    for policy in policies:
        resources = [r for s in policy["Statement"] for r in s["Resource"]]
        assert resources
        for resource in resources:
            key = resource.split(":::", 1)[1].split("/", 1)[1]
            assert key in {"incoming/acme/contact_info.docx", "incoming/acme/fares.csv"} or (
                docx_id in key or csv_id in key
            ), resource
            assert "*" not in key.removesuffix("/*"), resource
    assert deployed.log.take_denials() == []


def _converter(deployed: Cloud, handler: str) -> Runtime:
    """A fresh container of a converter: its own role, as in Lambda."""
    return deployed.runtime_for(deployed.model.function_for(handler))


def test_a_converter_session_cannot_reach_another_document(cloud: Any) -> None:
    deployed: Cloud = cloud[0]
    pdf = PDF.read_bytes()
    upload(deployed, pdf, ACME_PDF)
    upload(deployed, pdf + b"\n%another tenant's copy\n", BETA_PDF)
    upload(deployed, DOCX, "incoming/beta/contact_info.docx")
    deployed.settle()
    acme = document_id_for(pdf, "acme")
    beta = document_id_for(pdf + b"\n%another tenant's copy\n", "beta")
    beta_docx = document_id_for(DOCX, "beta")
    docs, artifacts = deployed.documents_bucket, deployed.runtime.resources.artifacts_bucket
    assert deployed.log.take_denials() == []

    render = _converter(deployed, "render")
    # the function's own credentials reach no document at all
    _denied(lambda: render.bucket(docs).get_bytes(ACME_PDF))
    _denied(lambda: render.artifacts.put_text(keys.page_key(acme, 1), "x"))

    session = render.for_document(
        acme, page_scope(render, acme, PdfLocation(pdf_bucket=docs, pdf_key=ACME_PDF))
    )
    assert session.bucket(docs).get_bytes(ACME_PDF) == pdf  # its own document
    session.artifacts.put_text(f"pages/{acme}/probe.txt", "its own pages")
    _denied(lambda: session.bucket(docs).get_bytes(BETA_PDF))  # another tenant's upload
    _denied(lambda: session.bucket(docs).get_bytes("incoming/beta/contact_info.docx"))
    _denied(lambda: session.artifacts.get_bytes(keys.pdf_key(beta_docx)))  # another's PDF
    _denied(lambda: session.artifacts.put_text(keys.page_key(beta, 1), "forged"))
    _denied(lambda: session.artifacts.put_text(keys.page_text_key(beta, 1), "forged"))
    _denied(lambda: session.artifacts.get_bytes(keys.page_key(acme, 1)))  # no read it needs
    _denied(lambda: session.artifacts.put_text(keys.markdown_key(acme), "forged"))  # not its kind

    normalise = _converter(deployed, "normalise")
    own = keys.pdf_key(beta_docx)
    session = normalise.for_document(
        beta_docx,
        DocumentScope(reads=((docs, "incoming/beta/contact_info.docx"),),
                      writes=((artifacts, own),)),
    )
    assert session.bucket(docs).get_bytes("incoming/beta/contact_info.docx") == DOCX
    _denied(lambda: session.bucket(docs).get_bytes(ACME_PDF))
    _denied(lambda: session.artifacts.put_bytes(keys.pdf_key(acme), b"%PDF-forged"))

    # a converter cannot take another converter's access role (its trust names one role)
    spreadsheet_role = deployed.model.function_for("read_spreadsheet").environment[
        "CONVERTER_ACCESS_ROLE_ARN"]
    render.resources = render.resources.model_copy(
        update={"converter_access_role_arn": spreadsheet_role})
    _denied(lambda: render.for_document(acme, DocumentScope(reads=(), writes=(
        (artifacts, keys.markdown_key(beta)),))))

    denials = deployed.log.take_denials()
    assert len(denials) == 12, "\n".join(map(str, denials))
    assert {d.resource.rsplit(":", 1)[-1] for d in denials if d.action == "sts:AssumeRole"} == {
        spreadsheet_role.rsplit(":", 1)[-1]}
    narrowed = [d for d in denials if "session policy" in d.reason]
    assert len(narrowed) == 7, "\n".join(map(str, narrowed))  # its access role alone allows them


def test_the_converter_process_chooses_its_session_policy(cloud: Any) -> None:
    """The residual SECURITY.md states: no condition requires a session policy, so code
    running in a converter's own process (not its contained parser, which holds no
    credentials) may assume the access role without one and reach that role's whole grant
    (another tenant's upload), never another kind of object or a table."""
    deployed: Cloud = cloud[0]
    pdf = PDF.read_bytes()
    beta_pdf = pdf + b"\n%another tenant's copy\n"
    upload(deployed, beta_pdf, BETA_PDF)
    deployed.settle()
    beta = document_id_for(beta_pdf, "beta")
    render = _converter(deployed, "render")
    answer = render.client("sts").assume_role(
        RoleArn=render.resources.converter_access_role_arn, RoleSessionName="drac-unnarrowed"
    )
    wide = Runtime(render.resources, render.settings,
                   deployed.sessions.session_for(answer["Credentials"]))
    assert wide.bucket(deployed.documents_bucket).get_bytes(BETA_PDF) == beta_pdf
    wide.artifacts.put_text(keys.page_key(beta, 1), "forged")  # any document's pages
    _denied(lambda: wide.artifacts.put_text(keys.markdown_key(beta), "forged"))
    _denied(lambda: wide.registry.get(beta))
    assert len(deployed.log.take_denials()) == 2
