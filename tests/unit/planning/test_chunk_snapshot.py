"""Chunks planned and assembled from the corpus match the golden digests."""

from __future__ import annotations

import json

from chunk_snapshot import SNAPSHOT, build
from shared_paths import CORPUS, require


def test_corpus_chunks_match_the_snapshot() -> None:
    expected: dict[str, dict[str, str]] = json.loads(SNAPSHOT.read_text("utf-8"))
    actual = build(require(CORPUS))
    assert set(actual) == set(expected)
    changed = [
        f"{name}: {kind}"
        for name, kinds in expected.items()
        for kind, digest in kinds.items()
        if actual[name].get(kind) != digest
    ]
    assert not changed, "chunks changed:\n" + "\n".join(changed)
