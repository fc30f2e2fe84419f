"""The LlamaIndex reader with the real llama-index-core on corpus documents."""

from __future__ import annotations

import asyncio
import json
import shutil
from itertools import pairwise
from pathlib import Path

import pytest
from click.testing import CliRunner
from frameworks import require_module

require_module("llama_index.core", "llamaindex")

from llama_index.core.schema import MetadataMode, NodeRelationship, TextNode  # noqa: E402
from shared_paths import CLOUDWAY, require  # noqa: E402

from drac.api import Workspace  # noqa: E402
from drac.cli import _register_commands, cli  # noqa: E402
from drac.integrations.llamaindex import DracReader  # noqa: E402

_register_commands()
NAMES = ("Delayed Baggage.md", "Web Check-In Guide.md")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in NAMES:
        shutil.copy(require(CLOUDWAY / "md") / name, folder / name)
    sidecar = {"metadataAttributes": {"dept": "baggage"}}
    (folder / "Delayed Baggage.md.metadata.json").write_text(json.dumps(sidecar))
    return folder


def test_reader_yields_nodes_with_exports_text_metadata_and_links(
    tmp_path: Path, docs: Path
) -> None:
    reader = DracReader(workspace=tmp_path / "kb", strategy="fine")
    nodes = reader.load_data(docs)
    result = CliRunner().invoke(cli, ["export", "--workspace", str(tmp_path / "kb")])
    lines = {json.loads(line)["chunk_id"]: json.loads(line) for line in result.stdout.splitlines()}
    assert all(isinstance(node, TextNode) for node in nodes)
    assert sorted(n.node_id for n in nodes) == sorted(lines)  # one node per exported chunk
    exported = [lines[n.node_id] for n in nodes]  # (documents in the order they were given)
    assert [n.text for n in nodes] == [line["text"] for line in exported]
    # what an index embeds is the chunk text alone (the breadcrumb is in it already)
    assert [n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes] == [
        line["text"] for line in exported
    ]
    llm_view = nodes[0].get_content(metadata_mode=MetadataMode.LLM)
    assert "boxes" not in llm_view and "breadcrumb" in llm_view
    for node, line in zip(nodes, exported, strict=True):
        for key in ("document_id", "plan_version", "breadcrumb", "pages", "boxes"):
            assert node.metadata[key] == line[key]
        assert node.metadata["file_name"] == line["source"]
        assert node.relationships[NodeRelationship.SOURCE].node_id == line["document_id"]
    assert all(n.metadata["dept"] == "baggage" for n in nodes if "Baggage" in n.metadata["source"])

    for document in {n.metadata["document_id"] for n in nodes}:
        chain = [n for n in nodes if n.metadata["document_id"] == document]
        assert len(chain) > 2
        assert NodeRelationship.PREVIOUS not in chain[0].relationships
        assert NodeRelationship.NEXT not in chain[-1].relationships
        for before, after in pairwise(chain):
            assert before.relationships[NodeRelationship.NEXT].node_id == after.node_id
            assert after.relationships[NodeRelationship.PREVIOUS].node_id == before.node_id
    parented = [n for n in nodes if NodeRelationship.PARENT in n.relationships]
    assert parented
    for node in parented:  # the parent is the heading the breadcrumb ends with
        parent = node.relationships[NodeRelationship.PARENT]
        assert parent.node_id.startswith(node.metadata["document_id"] + "#h")
        assert node.metadata["breadcrumb"].endswith(parent.metadata["title"])

    again = asyncio.run(reader.aload_data(docs))
    assert [n.node_id for n in again] == [n.node_id for n in nodes]
    with Workspace.open(tmp_path / "kb") as ws:
        assert DracReader(workspace=ws).load_data(docs / "Web Check-In Guide.md")[0].text == next(
            v.text for v in ws.chunks("Web Check-In Guide.md")
        )
