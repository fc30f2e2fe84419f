"""Spreadsheets through the deployed pipeline: read as tables by the ReadSpreadsheet function
(no rendering, no model), with the same Markdown, element ids and chunks as a local ingest of
the same file under the same strategy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sheet_workbooks import sales_rows, xlsx

from drac.aws import keys
from drac.ids import document_id_for
from drac.local import Workspace
from drac.local.pipeline import IngestSettings, ingest_file
from drac.models import DocumentStatus
from tests.e2e.conftest import upload


def _csv(rows: list[list[Any]]) -> bytes:
    return "".join(",".join(str(cell) for cell in row) + "\n" for row in rows).encode()


def _local(tmp_path: Path, name: str, data: bytes, deployed: Any) -> tuple[Workspace, str]:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(data)
    workspace = Workspace(tmp_path / f"ws-{name}")
    settings = IngestSettings(strategy=deployed.runtime.settings.conversion.strategy, tenant="acme")
    outcome = ingest_file(folder / name, workspace, settings, vision=None)
    assert outcome.status == DocumentStatus.INDEXED.value, outcome.error
    return workspace, outcome.document_id


def _assert_same_as_local(deployed: Any, opensearch: Any, workspace: Workspace,
                          document_id: str) -> None:
    markdown = deployed.runtime.artifacts.get_text(keys.markdown_key(document_id))
    assert markdown == workspace.get_markdown(document_id)
    cloud_elements = deployed.runtime.elements.get_elements(document_id)
    assert list(cloud_elements) == list(workspace.get_elements(document_id))  # ids, text, pages
    cloud_chunks = sorted(opensearch.chunks(document_id), key=lambda c: c["chunk_id"])
    local_chunks = sorted(workspace.active_chunks(document_id), key=lambda c: c.chunk_id)
    assert [(c.chunk_id, c.text) for c in local_chunks] == [
        (c["chunk_id"], c["text"]) for c in cloud_chunks]


def test_a_workbook_and_a_csv_are_read_as_tables_like_a_local_ingest(
    cloud: Any, tmp_path: Path
) -> None:
    deployed, bedrock, opensearch, _pdf = cloud
    rows = sales_rows(120)
    workbook = xlsx({"Sales": rows, "Notes": [["topic", "note"], ["returns", "30 days"]]})
    table = _csv(rows)
    upload(deployed, workbook, "incoming/acme/fares 2026.xlsx")
    upload(deployed, table, "incoming/acme/fares.csv")
    runs = deployed.wait("ingest")
    assert [r["status"] for r in runs] == ["SUCCEEDED", "SUCCEEDED"]
    assert bedrock.converse_requests == []  # no page was rendered or converted
    assert "normalise" not in deployed.invocations and "render" not in deployed.invocations
    assert deployed.invocations.count("read_spreadsheet") == 2

    for name, data, fmt, sheets in (("fares 2026.xlsx", workbook, "xlsx", 2),
                                    ("fares.csv", table, "csv", 1)):
        document_id = document_id_for(data, "acme")
        record = deployed.runtime.registry.get(document_id)
        assert record.status is DocumentStatus.INDEXED
        assert (record.format, record.pages) == (fmt, sheets)
        workspace, local_id = _local(tmp_path, name, data, deployed)
        assert local_id == document_id
        _assert_same_as_local(deployed, opensearch, workspace, document_id)
        # every chunk of the sales table carries its header row
        header = "| " + " | ".join(str(cell) for cell in rows[0]) + " |"
        row_chunks = [c for c in opensearch.chunks(document_id) if "| Widget-" in c["text"]]
        assert row_chunks and all(header in c["text"] for c in row_chunks)


def test_a_damaged_workbook_fails_alone_naming_the_file(cloud: Any) -> None:
    deployed, _bedrock, _opensearch, _pdf = cloud
    good = _csv([["city", "fare"], ["Oslo", "42"]])
    upload(deployed, b"PK\x03\x04" + bytes(200), "incoming/acme/broken.xlsx")
    upload(deployed, good, "incoming/acme/good.csv")
    runs = deployed.wait("ingest")
    assert sorted(r["status"] for r in runs) == ["FAILED", "SUCCEEDED"]
    assert deployed.runtime.registry.get(document_id_for(good, "acme")).status is (
        DocumentStatus.INDEXED)
    failed = deployed.runtime.registry.get(document_id_for(b"PK\x03\x04" + bytes(200), "acme"))
    assert failed.status is DocumentStatus.FAILED
    assert "broken.xlsx" in (failed.error or "")


@pytest.mark.libreoffice
def test_an_ods_goes_through_libreoffice_in_the_spreadsheet_function(
    cloud: Any, tmp_path: Path
) -> None:
    from drac.documents.intake.normalise import libreoffice_convert

    deployed, _bedrock, opensearch, _pdf = cloud
    ods = libreoffice_convert(xlsx({"Fares": sales_rows(12)}), ".xlsx", "ods")
    upload(deployed, ods, "incoming/acme/fares.ods")
    (run,) = deployed.wait("ingest")
    assert run["status"] == "SUCCEEDED"
    document_id = document_id_for(ods, "acme")
    assert deployed.runtime.registry.get(document_id).format == "ods"
    workspace, _ = _local(tmp_path, "fares.ods", ods, deployed)
    _assert_same_as_local(deployed, opensearch, workspace, document_id)
