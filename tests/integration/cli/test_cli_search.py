"""`drac search` from the command line: BM25 without an embedder (with a hint), hybrid by
default with one (an OpenAI-compatible embeddings server on 127.0.0.1), vectors cached."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli
from drac.retrieval.text import bm25_terms

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"
_register_commands()


class EmbeddingServer(ThreadingHTTPServer):
    """Answers /v1/embeddings with 16-d hashed bags of words; counts the texts it embedded."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.texts: list[str] = []


def _vector(text: str) -> list[float]:
    vector = [0.0] * 16
    for term in bm25_terms(text):
        vector[sum(term.encode()) % 16] += 1.0
    return vector


class _Handler(BaseHTTPRequestHandler):
    server: EmbeddingServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.texts.extend(body["input"])
        data = [{"index": i, "embedding": _vector(t)} for i, t in enumerate(body["input"])]
        payload = json.dumps({"data": data, "usage": {"prompt_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[EmbeddingServer]:
    embedding_server = EmbeddingServer()
    thread = threading.Thread(target=embedding_server.serve_forever, daemon=True)
    thread.start()
    yield embedding_server
    embedding_server.shutdown()
    embedding_server.server_close()


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(EXAMPLES / "purchasing.md", docs)
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", docs)
    ws = tmp_path / "ws"
    result = CliRunner().invoke(cli, ["ingest", str(docs), "-w", str(ws)], env={"DRAC_MODEL": ""})
    assert result.exit_code == 0, result.output
    return ws


def search(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["search", *args], env=env or {"DRAC_EMBEDDER": ""})
    return result.exit_code, result.stdout, result.stderr


def test_bm25_without_an_embedder_with_a_hint(workspace: Path) -> None:
    code, out, err = search("how do I claim warranty", "-w", str(workspace), "-k", "2")
    assert code == 0
    assert out.startswith("1. warranty_and_service.pdf p.") and "bm25" in out
    assert "BM25 only" in err and "DRAC_EMBEDDER" in err
    code, out, err = search("warranty", "-w", str(workspace), "--mode", "dense")
    assert code == 2 and "needs an embedder" in err
    code, out, err = search("warranty", "-w", str(workspace), "--embedder", "magic")
    assert code == 2 and "unknown embedder" in err


def test_hybrid_by_default_with_an_embedder_and_vectors_cached(
    workspace: Path, server: EmbeddingServer
) -> None:
    env = {
        "DRAC_EMBEDDER": "openai",
        "DRAC_EMBED_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
        "DRAC_EMBED_MODEL": "hashed",
    }
    exported = CliRunner().invoke(cli, ["export", "-w", str(workspace)]).stdout.splitlines()
    chunks = len(exported)
    code, out, err = search("warranty claim receipt", "-w", str(workspace), "--json", env=env)
    assert code == 0, err
    hits = json.loads(out)
    assert {h["mode"] for h in hits} == {"hybrid"} and [h["rank"] for h in hits] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ][: len(hits)]
    assert hits[0]["source"] == "warranty_and_service.pdf" and hits[0]["pages"]
    assert len(server.texts) == chunks + 1
    assert f"embedding {chunks} text(s)" in err

    code, out, _ = search(
        "warranty claim receipt", "-w", str(workspace), "--mode", "dense", env=env
    )
    assert code == 0 and "dense" in out and len(server.texts) == chunks + 1  # all cached
    code, out, _ = search("purchase order approval", "-w", str(workspace), "-k", "1", env=env)
    assert (
        code == 0
        and out.startswith("1. purchasing.md p.1  hybrid")
        and len(server.texts) == chunks + 2
    )

    env["DRAC_EMBED_BASE_URL"] = "http://127.0.0.1:9/v1"  # nothing listens there
    code, _, err = search("a query never embedded", "-w", str(workspace), env=env)
    assert code == 1 and "search failed" in err
