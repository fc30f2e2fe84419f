"""`drac mcp` driven by the MCP SDK's own stdio client: search with filters, a chunk with its
pages and boxes, the document list, ingest only inside the allowed folder, every string
escaped as the CLI escapes it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from frameworks import require_module

require_module("mcp", "mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from shared_paths import CLOUDWAY, require  # noqa: E402

from drac.api import Workspace  # noqa: E402
from drac.integrations.errors import OutsideAllowedFolder  # noqa: E402
from drac.integrations.mcp_server import allowed_path  # noqa: E402

HOSTILE = "# Refunds\u202e\n\nRefund policy\u200b text with a bidi override \u202egnp.exe\n"


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    shutil.copy(require(CLOUDWAY / "md") / "Delayed Baggage.md", allowed / "baggage.md")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "canary.md").write_text("# Canary\n\ncanary words that must never be ingested\n")
    (allowed / "escape").symlink_to(outside)
    (allowed / "canary-link.md").symlink_to(outside / "canary.md")
    hostile = tmp_path / "hostile.md"
    hostile.write_text(HOSTILE)
    sidecar = {"metadataAttributes": {"dept": "finance"}}
    (tmp_path / "hostile.md.metadata.json").write_text(json.dumps(sidecar))
    workspace = tmp_path / "kb"
    with Workspace.open(workspace) as ws:
        assert ws.ingest(hostile).ok
    return {"allowed": allowed, "outside": outside, "workspace": workspace}


def _server(workspace: Path, *extra: str) -> StdioServerParameters:
    env = {**os.environ, "DRAC_EMBEDDER": "none", "DRAC_EMBED_AT_INGEST": "0"}
    drac = Path(sys.executable).parent / "drac"  # the console script beside this Python
    args = ["mcp", "--workspace", str(workspace), *extra]
    return StdioServerParameters(command=str(drac), args=args, env=env)


async def _session_calls(
    params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[str], list[Any]]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def _failed(result: Any) -> bool:
    """Whether a tool call failed (mcp 2 names the field `is_error`, mcp 1 `isError`)."""
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def _payload(result: Any) -> Any:
    assert not _failed(result), result.content
    texts = [item.text for item in result.content if item.type == "text"]
    if len(texts) == 1:
        return json.loads(texts[0])
    return [json.loads(text) for text in texts]


def test_search_show_and_list_over_stdio_escape_every_string(setup: dict[str, Path]) -> None:
    calls = [
        ("search", {"query": "refund policy", "k": 3, "filters": ["dept=finance"]}),
        ("search", {"query": "refund policy", "filters": ["dept=legal"]}),
        ("list_documents", {}),
        ("ingest", {"path": "baggage.md"}),
    ]
    tools, results = asyncio.run(_session_calls(_server(setup["workspace"]), calls))
    assert sorted(tools) == ["list_documents", "search", "show_chunk"]  # no ingest by default
    found = _payload(results[0])
    assert found["mode"] == "bm25" and len(found["hits"]) == 1
    hit = found["hits"][0]
    assert hit["metadata"] == {"dept": "finance"} and hit["pages"] == [1]
    shown = json.dumps(hit, ensure_ascii=False)
    assert "\u202e" not in shown and "\u200b" not in shown
    assert "\\u202egnp.exe" in hit["text"] and "policy\\u200b text" in hit["text"]
    assert "Refunds\\u202e" in hit["breadcrumb"]
    assert "\n\n" in hit["text"]  # lines kept: the chunk reads as the CLI prints it
    assert _payload(results[1])["hits"] == []
    documents = _payload(results[2])
    documents = documents if isinstance(documents, list) else [documents]
    assert [d["source"] for d in documents] == ["hostile.md"] and documents[0]["chunks"] == 1
    assert _failed(results[3])  # the tool does not exist

    calls = [
        ("show_chunk", {"chunk_id": hit["chunk_id"]}),
        ("show_chunk", {"chunk_id": "nope\u202e"}),
        ("search", {"query": "refund", "filters": ["year>>"]}),
    ]
    _, shown = asyncio.run(_session_calls(_server(setup["workspace"]), calls))
    for refused, reason in ((shown[1], "no active chunk nope\\u202e"), (shown[2], "year")):
        assert _failed(refused) and reason in refused.content[0].text
    chunk = _payload(shown[0])
    assert chunk["chunk_id"] == hit["chunk_id"] and chunk["pages"] == [1]
    assert chunk["boxes"] == [] and chunk["element_ids"]
    assert chunk["text"] == hit["text"]


def test_ingest_only_inside_the_allowed_folder(setup: dict[str, Path]) -> None:
    allowed = setup["allowed"]
    calls = [
        ("ingest", {"path": "baggage.md"}),
        ("ingest", {"path": "escape/canary.md"}),
        ("ingest", {"path": "canary-link.md"}),
        ("ingest", {"path": str(setup["outside"] / "canary.md")}),
        ("ingest", {"path": "../secret/canary.md"}),
        ("ingest", {"path": "."}),
        ("search", {"query": "canary words never ingested"}),
    ]
    tools, results = asyncio.run(
        _session_calls(_server(setup["workspace"], "--allow-ingest", str(allowed)), calls)
    )
    assert "ingest" in tools
    first = _payload(results[0])
    assert [o["status"] for o in first["outcomes"]] == ["INDEXED"]
    for refused in results[1:5]:
        assert _failed(refused)
        assert "outside the folder allowed" in refused.content[0].text
    walked = _payload(results[5])  # the folder itself: its links are not followed
    assert [o["status"] for o in walked["outcomes"]] == ["UNCHANGED"]
    assert {Path(s["path"]).name for s in walked["skipped_entries"]} == {
        "escape",
        "canary-link.md",
    }
    assert all("canary" not in h["source"] for h in _payload(results[6])["hits"])


def test_allowed_path_resolves_before_it_compares(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    (allowed / "sub" / "a.md").write_text("# A\n\ntext\n")
    assert allowed_path("sub/a.md", allowed) == (allowed / "sub" / "a.md").resolve()
    (tmp_path / "allowed-twin").mkdir()
    (tmp_path / "allowed-twin" / "b.md").write_text("x")
    with pytest.raises(OutsideAllowedFolder):  # a prefix of the name is not the folder
        allowed_path(str(tmp_path / "allowed-twin" / "b.md"), allowed)
    with pytest.raises(OutsideAllowedFolder, match="not found"):
        allowed_path("sub/missing.md", allowed)
