"""Query file names that differ from the corpus' only in spacing, case or Unicode form match
(issue 20: 8 queries naming "Aventro  Connectivity.md" were dropped without a word), and every
query that still cannot be matched is named."""

from __future__ import annotations

import pytest

from drac.evaluation.chunksets import ChunkSet, EvalChunk
from drac.evaluation.queries import Query, SupportingFact, document_key
from drac.evaluation.runner import select_queries


@pytest.mark.parametrize(
    "variant",
    [
        "Aventro  Connectivity.md",  # two spaces
        "aventro connectivity.pdf",
        " Aventro\tConnectivity .docx",
        "Ａventro Connectivity.md",  # a full-width capital A (NFKC folds it)
        "Aventro\u00a0Connectivity.md",  # a no-break space
    ],
)
def test_names_match_normalised(variant: str) -> None:
    assert document_key(variant) == document_key("Aventro Connectivity.md")


def test_names_that_differ_in_words_do_not_match() -> None:
    assert document_key("Aventro Connectivity 2.md") != document_key("Aventro Connectivity.md")


def _query(text: str, *files: str) -> Query:
    facts = tuple(SupportingFact(filename=name, text="fact") for name in files)
    return Query(company="Aventro", query_type="Boolean", text=text, facts=facts)


def test_every_query_left_out_is_named_with_its_missing_file() -> None:
    chunks = ChunkSet(name="rules", chunks=(
        EvalChunk(chunk_id="c1", source="Aventro Connectivity.md", text="x"),
        EvalChunk(chunk_id="c2", source="Pricing.md", text="y"),
    ))  # fmt: skip
    queries = [
        _query("Does Aventro connect?", "Aventro  Connectivity.md"),
        _query("What does it cost?", "pricing.MD", "Aventro Connectivity.md"),
        _query("Who founded Aventro, and in which year was the company set up?", "History.md"),
    ]
    selection = select_queries(queries, [chunks])
    assert [q.text for q in selection.queries] == ["Does Aventro connect?", "What does it cost?"]
    assert selection.dropped == (
        "'Who founded Aventro, and in which year was the company set…' (Aventro): no 'History.md'",
    )
    assert selection.note.endswith(
        "Left out: 'Who founded Aventro, and in which year was the company set…' "
        "(Aventro): no 'History.md'."
    )


def test_a_company_with_no_usable_query_is_counted_not_listed() -> None:
    # a chunk set of one company's documents: the other company's queries are one phrase
    chunks = ChunkSet(name="rules", chunks=(
        EvalChunk(chunk_id="c1", source="Aventro Connectivity.md", text="x"),
    ))  # fmt: skip
    fact = SupportingFact(filename="Catalog.md", text="fact")
    other = [
        Query(company="Velvera", query_type="Boolean", text=f"Question {n}?", facts=(fact,))
        for n in range(3)
    ]
    queries = [_query("Does Aventro connect?", "Aventro Connectivity.md"), *other,
               _query("Who founded Aventro?", "History.md")]  # fmt: skip
    selection = select_queries(queries, [chunks])
    assert selection.dropped == ("'Who founded Aventro?' (Aventro): no 'History.md'",)
    assert selection.other_companies == (("Velvera", 3),)
    assert selection.note.endswith(
        "Left out: 'Who founded Aventro?' (Aventro): no 'History.md'."
        " No query of Velvera (3) could be used."
    )
    assert "Question" not in selection.note
