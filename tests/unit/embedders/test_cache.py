"""CachingEmbedder over the workspace's vector store: unchanged texts are not embedded again."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from drac.embedders.cache import CachingEmbedder
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
