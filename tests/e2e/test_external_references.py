"""A document pointing outside itself, through the deployed pipeline: the Normalise function
removes the reference before LibreOffice, nothing is read or fetched, and the document's
record carries the warning saying what was removed."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import pytest
from reliability.hostile_links import (
    canary_images,
    listening,
    pdf_text,
    pptx_ole_link,
    write_canary,
)

from drac.aws import keys
from drac.documents.sandbox import references
from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import upload

pytestmark = pytest.mark.libreoffice


def test_a_linked_object_is_removed_and_named_on_the_record(cloud: Any, tmp_path: Path) -> None:
    deployed, _bedrock, _opensearch, _pdf = cloud
    canary = write_canary(tmp_path)
    with listening(canary.token) as listener:
        deck = pptx_ole_link(canary.text_file.as_uri())
        web = pptx_ole_link(listener.url("/ole"), "Package")
        upload(deployed, deck, "incoming/acme/linked.pptx")
        upload(deployed, web, "incoming/acme/fetching.pptx")
        runs = deployed.wait("ingest")
        assert [run["status"] for run in runs] == ["SUCCEEDED", "SUCCEEDED"]
        assert listener.requests == []
    for data in (deck, web):
        document_id = document_id_for(data, "acme")
        record = deployed.runtime.registry.get(document_id)
        assert record.status is DocumentStatus.INDEXED
        assert any(
            warning.startswith("removed 1 external reference (1 linked object)")
            for warning in record.warnings
        ), record.warnings
        pdf = deployed.runtime.artifacts.get_bytes(keys.pdf_key(document_id))
        assert canary_images(pdf) == 0
        assert canary.token not in pdf_text(pdf) and "Slide text" in pdf_text(pdf)


def test_a_page_past_the_sanitizers_limit_fails_alone_in_the_normalise_function(
    cloud: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sanitizer runs contained in the Normalise function too: with its CPU limit lowered
    to 1 s, a page that takes it longer fails with the limit named and leaves no work folder,
    and the page uploaded beside it is indexed."""
    deployed, _bedrock, _opensearch, _pdf = cloud
    work = tmp_path / "tmp"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    monkeypatch.setenv("TMPDIR", str(work))
    low = dataclasses.replace(references.SANITIZER_LIMITS, cpu_s=1.0, step_cpu_s=1.0)
    monkeypatch.setattr(references, "SANITIZER_LIMITS", low)
    heavy = ("<html><body><p>Heavy page.</p>" + "</a" * 5_000_000 + "</body></html>").encode()
    good = b"<html><body><h1>Store hours</h1><p>Honest page text.</p></body></html>"
    upload(deployed, heavy, "incoming/acme/heavy.html")
    upload(deployed, good, "incoming/acme/good.html")
    runs = deployed.wait("ingest")
    assert sorted(run["status"] for run in runs) == ["FAILED", "SUCCEEDED"]
    failed = deployed.runtime.registry.get(document_id_for(heavy, "acme"))
    assert failed.status is DocumentStatus.FAILED
    assert "used more than 1 s of CPU while removing external references" in (failed.error or "")
    indexed = deployed.runtime.registry.get(document_id_for(good, "acme"))
    assert indexed.status is DocumentStatus.INDEXED
    assert [path.name for path in work.iterdir() if path.name.startswith("drac-lo-")] == []
