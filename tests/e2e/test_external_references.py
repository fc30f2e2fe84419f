"""A document pointing outside itself, through the deployed pipeline: the Normalise function
removes the reference before LibreOffice, nothing is read or fetched, and the document's
record carries the warning saying what was removed."""

from __future__ import annotations

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
