"""CachingEmbedder over the workspace's vector store: unchanged texts are not embedded again."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from drac.embedders.cache import CachingEmbedder
from drac.embedders.local import SentenceTransformerEmbedder
from drac.local.workspace import Workspace
from drac.ports import Embedder


class CountingEmbedder(Embedder):
    """A deterministic fake that records which texts it was asked to embed."""

    dimension = 3

    def __init__(self, name: str = "fake-model") -> None:
        self.name = name
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(t)), float(sum(map(ord, t)) % 97), 0.5] for t in texts]


def test_only_unseen_texts_reach_the_model_and_order_is_kept(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    inner = CountingEmbedder()
    cached = CachingEmbedder(inner, ws.vectors)
    first = cached.embed(["alpha", "beta"])
    second = cached.embed(["gamma", "beta", "alpha"])
    assert inner.calls == [["alpha", "beta"], ["gamma"]]
    assert second[1] == pytest.approx(first[1]) and second[2] == pytest.approx(first[0])
    assert second[0] == pytest.approx(inner.embed(["gamma"])[0])
    ws.close()


def test_vectors_survive_reopening_the_workspace_and_are_per_model(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    CachingEmbedder(CountingEmbedder(), ws.vectors).embed(["alpha"])
    ws.close()

    reopened = Workspace(tmp_path / "ws", create=False)
    same_model = CountingEmbedder()
    other_model = CountingEmbedder(name="other-model")
    CachingEmbedder(same_model, reopened.vectors).embed(["alpha"])
    CachingEmbedder(other_model, reopened.vectors).embed(["alpha"])
    assert same_model.calls == []
    assert other_model.calls == [["alpha"]]
    reopened.close()


def test_duplicate_texts_in_one_call_are_embedded_once(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    inner = CountingEmbedder()
    vectors = CachingEmbedder(inner, ws.vectors).embed(["same", "same", "other"])
    assert inner.calls == [["same", "other"]]
    assert vectors[0] == pytest.approx(vectors[1])
    ws.close()


class FolderEmbedder(SentenceTransformerEmbedder):
    """The real local-folder embedder (its name and identity), with a stand-in for the model:
    each vector depends on the folder's config.json, as a real model's depends on its
    weights."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        seed = float(len((self.path / "config.json").read_text()))
        return [[seed, float(len(t)), 1.0] for t in texts]


def _model_folder(root: Path, config: str) -> Path:
    folder = root / "all-MiniLM-L6-v2"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(config)
    (folder / "model.safetensors").write_bytes(config.encode() * 100)
    return folder


def test_two_model_folders_of_the_same_name_never_share_vectors(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    here = FolderEmbedder(_model_folder(tmp_path / "here", '{"hidden_size": 384}'))
    elsewhere = FolderEmbedder(_model_folder(tmp_path / "elsewhere", '{"hidden_size": 1024}'))
    assert here.name == elsewhere.name == "local:all-MiniLM-L6-v2"
    first = CachingEmbedder(here, ws.vectors).embed(["alpha"])
    second = CachingEmbedder(elsewhere, ws.vectors).embed(["alpha"])
    assert elsewhere.calls == [["alpha"]]  # not the other folder's vector
    assert first != second
    # the same files in a third place are the same model: its vectors are reused
    copy = FolderEmbedder(_model_folder(tmp_path / "copy", '{"hidden_size": 384}'))
    assert CachingEmbedder(copy, ws.vectors).embed(["alpha"]) == first and copy.calls == []
    ws.close()


def test_a_changed_weights_file_is_a_new_identity(tmp_path: Path) -> None:
    folder = _model_folder(tmp_path / "m", "{}")
    before = FolderEmbedder(folder).identity
    (folder / "model.safetensors").write_bytes(b"fine-tuned")
    assert FolderEmbedder(folder).identity != before
    assert before.startswith("local:all-MiniLM-L6-v2@")


class QuerySidedEmbedder(CountingEmbedder):
    """Embeds queries differently from passages, as E5 does."""

    identity = "sided-1.0"

    def __init__(self) -> None:
        super().__init__("sided")
        self.query_calls: list[list[str]] = []

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.query_calls.append(list(texts))
        return [[-1.0, float(len(t)), 0.0] for t in texts]


def test_query_vectors_are_cached_apart_from_passage_vectors(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    inner = QuerySidedEmbedder()
    cached = CachingEmbedder(inner, ws.vectors)
    passage = cached.embed(["same text"])
    query = cached.embed_queries(["same text"])
    assert passage != query and query[0][0] == -1.0
    assert cached.embed_queries(["same text"]) == query and inner.query_calls == [["same text"]]
    assert cached.embed(["same text"]) == passage and inner.calls == [["same text"]]
    plain = CachingEmbedder(CountingEmbedder(), ws.vectors)
    assert plain.embed_queries(["x"]) == plain.embed(["x"])  # one side only: one cache
    ws.close()


def test_fill_embeds_only_the_missing_texts_in_batches_and_tells_progress() -> None:
    from drac.embedders.cache import MemoryVectorStore

    inner = CountingEmbedder()
    cached = CachingEmbedder(inner, MemoryVectorStore())
    cached.embed(["b"])
    told: list[tuple[int, int]] = []
    texts = ["a", "b", "c", "d", "a", "e"]
    assert cached.fill(texts, lambda done, total: told.append((done, total)), batch=2) == 4
    assert inner.calls[1:] == [["a", "c"], ["d", "e"]]
    assert told == [(0, 4), (2, 4), (4, 4)]
    assert cached.fill(texts) == 0 and len(inner.calls) == 3
