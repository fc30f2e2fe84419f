"""The LangChain loader and retriever with the real langchain-core on corpus documents."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from frameworks import require_module

require_module("langchain_core", "langchain")

from langchain_core.documents import Document  # noqa: E402
from shared_paths import CLOUDWAY, require  # noqa: E402

from drac.api import Workspace  # noqa: E402
from drac.cli import _register_commands, cli  # noqa: E402
from drac.integrations.errors import DracIngestError  # noqa: E402
from drac.integrations.langchain import DracLoader, DracRetriever  # noqa: E402

_register_commands()
NAMES = ("Delayed Baggage.md", "Cancel Your Booking.md")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in NAMES:
        shutil.copy(require(CLOUDWAY / "md") / name, folder / name)
    sidecar = {"metadataAttributes": {"dept": "baggage", "year": 2024}}
    (folder / "Delayed Baggage.md.metadata.json").write_text(json.dumps(sidecar))
    return folder


def export(workspace: Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(cli, ["export", "--workspace", str(workspace)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_loader_yields_one_document_per_chunk_with_exports_text(tmp_path: Path, docs: Path) -> None:
    loader = DracLoader(docs, workspace=tmp_path / "kb")
    documents = list(loader.lazy_load())
    lines = {str(line["chunk_id"]): line for line in export(tmp_path / "kb")}
    assert all(isinstance(d, Document) for d in documents)
    assert sorted(str(d.id) for d in documents) == sorted(lines)  # one per exported chunk
    exported = [lines[str(d.id)] for d in documents]  # (documents in the order given)
    assert [d.page_content for d in documents] == [line["text"] for line in exported]
    for document, line in zip(documents, exported, strict=True):
        meta = document.metadata
        assert meta["source"] == str((docs / str(line["source"])).resolve())
        for key in ("document_id", "chunk_id", "plan_version", "breadcrumb", "element_ids"):
            assert meta[key] == line[key]
        assert meta["pages"] == line["pages"] and meta["boxes"] == line["boxes"]
        assert meta["file_name"] == line["source"]
    baggage = [d for d in documents if d.metadata["file_name"] == "Delayed Baggage.md"]
    assert baggage and all(d.metadata["dept"] == "baggage" for d in baggage)
    assert all(d.metadata["year"] == 2024 for d in baggage)
    # load() and the async variant give the same (ingest again: UNCHANGED, nothing converted)
    assert loader.load() == documents
    assert asyncio.run(_collect(loader)) == documents


async def _collect(loader: DracLoader) -> list[Document]:
    return [document async for document in loader.alazy_load()]


def test_loader_raises_for_a_failed_file_unless_asked_to_skip(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"no pdf here\x00\x01")
    with pytest.raises(DracIngestError, match=r"bad\.pdf"):
        DracLoader([bad], workspace=tmp_path / "kb").load()
    assert DracLoader([bad], workspace=tmp_path / "kb", skip_failed=True).load() == []


def test_retriever_searches_with_mode_k_and_filters(tmp_path: Path, docs: Path) -> None:
    with Workspace.open(tmp_path / "kb") as ws:
        ws.ingest(docs)
        retriever = DracRetriever(workspace=ws, k=2, mode="bm25")
        found = retriever.invoke("cancel my booking refund")
        assert 0 < len(found) <= 2
        assert found[0].metadata["file_name"] == "Cancel Your Booking.md"
        assert found[0].metadata["rank"] == 1 and found[0].metadata["mode"] == "bm25"
        texts = {v.chunk_id: v.text for v in ws.chunks()}
        assert all(d.page_content == texts[d.id] for d in found)

        filtered = DracRetriever(workspace=ws, k=5, filters="dept=baggage")
        hits = filtered.invoke("CloudWay 24 refund")
        assert hits and {d.metadata["file_name"] for d in hits} == {"Delayed Baggage.md"}
        assert asyncio.run(filtered.ainvoke("CloudWay 24 refund")) == hits
    by_path = DracRetriever(workspace=tmp_path / "kb", k=1)
    assert by_path.invoke("delayed baggage")[0].metadata["file_name"] == "Delayed Baggage.md"
