"""Element ids and contents match the golden snapshot taken before the parser changed."""

from __future__ import annotations

import json
from pathlib import Path

from element_snapshot import SNAPSHOT, corpus_documents, repository_documents, snapshot_of
from shared_paths import CORPUS, require

EXPECTED: dict[str, list[str]] = json.loads(SNAPSHOT.read_text("utf-8"))


def first_difference(name: str, expected: list[str], actual: list[str]) -> str:
    """Where two element listings first differ, for a readable failure."""
    for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if want != got:
            return f"{name}: element {index}: expected {want!r}, got {got!r}"
    return f"{name}: {len(expected)} elements expected, {len(actual)} parsed"


def check(documents: dict[str, Path]) -> None:
    differences = []
    for name, path in documents.items():
        actual = snapshot_of(path)
        if actual != EXPECTED[name]:
            differences.append(first_difference(name, EXPECTED[name], actual))
    assert not differences, "\n".join(differences)


def test_repository_markdown_matches_the_snapshot() -> None:
    documents = repository_documents()
    assert set(documents) == {name for name in EXPECTED if not name.startswith("corpus/")}
    check(documents)


def test_corpus_markdown_matches_the_snapshot() -> None:
    documents = {f"corpus/{n}": p for n, p in corpus_documents(require(CORPUS)).items()}
    assert len(documents) == 75
    assert set(documents) == {name for name in EXPECTED if name.startswith("corpus/")}
    check(documents)
