"""A new plan version keeps the stored vector of every chunk whose text its document's index
holds from the same model, and embeds only the rest (exact requests at the fake Bedrock and
OpenSearch clients)."""

from __future__ import annotations

from drac.aws.opensearch import OpenSearchChunkIndex
from drac.aws.vectors import ReusingEmbedder, embedder_for_version
from drac.commit import index_chunks
from drac.embedders.bedrock import TitanEmbedder
from drac.models import Chunk, LedgerEntry
from drac.ports import Embedder, Ledger
from tests.fakes import FakeBedrockRuntime, FakeOpenSearch

TITAN = "amazon.titan-embed-text-v2:0"


class ListLedger(Ledger):
    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []

    def record(self, entry: LedgerEntry) -> None:
        self.entries.append(entry)


def chunk(document_id: str, version: int, n: int, text: str) -> Chunk:
    return Chunk(
        document_id=document_id,
        source="a.pdf",
        chunk_id=f"{document_id}-v{version}-{n}",
        plan_version=version,
        text=text,
        breadcrumb="",
        element_ids=(f"p{n}",),
        pages=(1,),
    )


def index_version(
    opensearch: FakeOpenSearch,
    bedrock: FakeBedrockRuntime,
    chunks: list[Chunk],
    dimensions: int = 256,
    model: str = TITAN,
) -> tuple[Embedder, ListLedger]:
    """Index one plan version's chunks as IndexChunks does; return its embedder and ledger."""
    index = OpenSearchChunkIndex(opensearch, "chunks")
    titan = TitanEmbedder(bedrock, model_id=model, dimensions=dimensions)
    first = chunks[0]
    embedder = embedder_for_version(titan, index, first.document_id, first.plan_version)
    ledger = ListLedger()
    index_chunks(index, chunks, embedder=embedder, ledger=ledger)
    return embedder, ledger


def vectors_of(opensearch: FakeOpenSearch, document_id: str, version: str) -> dict[str, list]:
    return {
        d["text"]: d["embedding"]
        for d in opensearch.chunks(document_id)
        if d["plan_version"] == version
    }


def test_a_new_version_embeds_only_the_texts_its_document_does_not_hold() -> None:
    opensearch, bedrock = FakeOpenSearch(), FakeBedrockRuntime(None, "m", TITAN)
    _, ledger = index_version(
        opensearch, bedrock, [chunk("d", 1, 0, "alpha"), chunk("d", 1, 1, "beta")]
    )
    assert [r["inputText"] for r in bedrock.embed_requests] == ["alpha", "beta"]
    assert [e.model for e in ledger.entries] == [TITAN]
    # no vector lookup: the delete by chunk_id, the write and its verification
    assert [kind for kind, _ in opensearch.requests] == ["search", "bulk", "search"]
    first = vectors_of(opensearch, "d", "1")
    assert {d["embedding_model"] for d in opensearch.docs} == {TITAN}
    # version 2: "beta" kept, "gamma" new (twice: embedded once)
    embedder, ledger = index_version(
        opensearch,
        bedrock,
        [chunk("d", 2, 0, "beta"), chunk("d", 2, 1, "gamma"), chunk("d", 2, 2, "gamma")],
    )
    assert [r["inputText"] for r in bedrock.embed_requests] == ["alpha", "beta", "gamma"]
    assert isinstance(embedder, ReusingEmbedder) and embedder.vectors.found == 1
    assert len(ledger.entries) == 1
    second = vectors_of(opensearch, "d", "2")
    assert second["beta"] == first["beta"] and second["gamma"] != first["beta"]
    # a version of the same texts embeds nothing and records no ledger entry
    embedder, ledger = index_version(
        opensearch, bedrock, [chunk("d", 3, 0, "gamma"), chunk("d", 3, 1, "alpha")]
    )
    assert len(bedrock.embed_requests) == 3 and embedder.usage is None and ledger.entries == []
    assert vectors_of(opensearch, "d", "3") == {"gamma": second["gamma"], "alpha": first["alpha"]}


def test_vectors_of_another_document_model_or_dimension_are_not_reused() -> None:
    opensearch, bedrock = FakeOpenSearch(), FakeBedrockRuntime(None, "m", TITAN)
    index_version(opensearch, bedrock, [chunk("d", 1, 0, "alpha")])
    index_version(opensearch, bedrock, [chunk("other", 2, 0, "alpha")])  # another document
    opensearch.docs = [d for d in opensearch.docs if d["document_id"] == "d"]
    index_version(opensearch, bedrock, [chunk("d", 2, 0, "alpha")], dimensions=512)
    assert [r["dimensions"] for r in bedrock.embed_requests] == [256, 256, 512]
    for doc in opensearch.docs:
        doc["embedding_model"] = "another-model"  # as if indexed by an earlier model
    bedrock.embedding_model = "another-model"
    index_version(
        opensearch, bedrock, [chunk("d", 3, 0, "alpha")], model="another-model", dimensions=512
    )
    assert len(bedrock.embed_requests) == 3  # same model, same dimension: reused
    bedrock.embedding_model = TITAN
    index_version(opensearch, bedrock, [chunk("d", 4, 0, "alpha")], dimensions=512)
    assert len(bedrock.embed_requests) == 4  # Titan's own 512-d vector was relabelled away
