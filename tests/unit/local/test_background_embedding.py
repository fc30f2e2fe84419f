"""The embedding consumer of an ingest: it gathers the texts of the documents committed so
far into calls sized by the threads it is granted, never past the thread budget, and keeps an
embedder's failure for `finish` to raise."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from drac.embedders.cache import CachingEmbedder
from drac.local import Workspace
from drac.local.background_embedding import BackgroundEmbedding
from drac.local.cores import ThreadBudget
from drac.local.inputs import collect_inputs
from drac.local.pipeline import IngestSettings, ingest_file
from drac.ports import Embedder

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "markdown"


class Recording(Embedder):
    """Vectors of text lengths; records each call's texts and the threads it was given."""

    name = "recording"
    dimension = 2

    def __init__(self, budget: ThreadBudget | None = None, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.threads: list[int] = []
        self.in_use: list[int] = []
        self.budget = budget
        self.fail = fail

    def use_threads(self, count: int) -> None:
        self.threads.append(count)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.fail:
            raise RuntimeError("no model here")
        if self.budget is not None:
            self.in_use.append(self.budget.in_use)
        self.calls.append(list(texts))
        return [[float(len(text)), 1.0] for text in texts]


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[tuple[Workspace, list[str]]]:
    folder = tmp_path / "docs"
    shutil.copytree(FIXTURES, folder)
    ws = Workspace(tmp_path / "ws")
    files, _ = collect_inputs([folder])
    ids = [ingest_file(path, ws, IngestSettings()).document_id for path in files]
    yield ws, [i for i in ids if i]
    ws.close()


def test_texts_of_documents_committed_meanwhile_share_one_call(
    workspace: tuple[Workspace, list[str]],
) -> None:
    ws, ids = workspace
    budget = ThreadBudget(2)
    embedder = Recording(budget)
    told: list[tuple[int, int]] = []
    consumer = BackgroundEmbedding(
        ws, embedder, budget, threads=2, progress=lambda d, t: told.append((d, t)), per_thread=64
    )
    for document_id in ids:  # committed before the consumer looks: one call for them all
        consumer.add(document_id)
    report = consumer.start().finish()
    texts = {chunk.text for chunk in ws.active_chunks()}
    assert len(embedder.calls) == 1 and set(embedder.calls[0]) == texts
    assert report.embedded == len(texts) and told[-1] == (len(texts), len(texts))
    assert embedder.threads == [2] and embedder.in_use == [2]
    assert not CachingEmbedder(embedder, ws.vectors).missing(list(texts))


def test_while_a_document_converts_the_embedder_runs_on_the_free_cores_only(
    workspace: tuple[Workspace, list[str]],
) -> None:
    ws, ids = workspace
    budget = ThreadBudget(2)
    embedder = Recording(budget)
    consumer = BackgroundEmbedding(ws, embedder, budget, threads=4, per_thread=1).start()
    with budget.job():  # a conversion job holds one core
        consumer.add(ids[0])
        while not embedder.calls:
            time.sleep(0.001)
        granted_while_converting = list(embedder.threads)
    consumer.finish()
    assert granted_while_converting and set(granted_while_converting) == {1}
    assert max(embedder.in_use) <= 2 and embedder.threads[-1] == 2  # then both cores


def test_a_failing_embedder_is_kept_for_finish_and_stores_nothing(
    workspace: tuple[Workspace, list[str]],
) -> None:
    ws, ids = workspace
    embedder = Recording(fail=True)
    consumer = BackgroundEmbedding(ws, embedder, ThreadBudget(2), threads=2).start()
    for document_id in ids:
        consumer.add(document_id)
    with pytest.raises(RuntimeError, match="no model here"):
        consumer.finish()
    texts = [chunk.text for chunk in ws.active_chunks()]
    assert CachingEmbedder(embedder, ws.vectors).missing(texts) == list(dict.fromkeys(texts))
