"""Evaluation queries: the RAG-Multi-Corpus CSV format.

Columns: `Enterprise Name, Query Type, Query, Supporting Facts`, where Supporting Facts is a
JSON list of `{"filename": ..., "text": ...}` objects.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from pathlib import Path, PurePath

from pydantic import BaseModel, ConfigDict, Field

REQUIRED_COLUMNS = ("Enterprise Name", "Query Type", "Query", "Supporting Facts")


class SupportingFact(BaseModel):
    """One passage of a source document that answers (part of) a query."""

    model_config = ConfigDict(frozen=True)

    filename: str
    text: str


class Query(BaseModel):
    """One annotated evaluation query."""

    model_config = ConfigDict(frozen=True)

    company: str
    query_type: str
    text: str
    facts: tuple[SupportingFact, ...] = Field(min_length=1)

    @property
    def document_keys(self) -> frozenset[str]:
        """Keys (see `document_key`) of the documents the supporting facts come from."""
        return frozenset(document_key(fact.filename) for fact in self.facts)


def document_key(name: str) -> str:
    """Return the format-free key of a document name: file stem, Unicode-normalised (NFKC),
    case-folded, whitespace runs as one space, trimmed.

    `environmental_policy.md`, `environmental_policy.pdf` and `Environmental_Policy.docx`
    share one key, so chunks from any format of a document match its supporting facts; so do
    `Aventro  Connectivity.md` (two spaces) and `Aventro Connectivity.md`.
    """
    stem = PurePath(unicodedata.normalize("NFKC", name).strip()).stem
    return " ".join(stem.casefold().split())


def parse_queries(text: str) -> list[Query]:
    """Parse queries from CSV text in the RAG-Multi-Corpus format.

    Raises ValueError naming the row when a column is missing or Supporting Facts is not a
    non-empty JSON list of {"filename", "text"} objects.
    """
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"queries CSV lacks column(s): {', '.join(missing)}")
    queries: list[Query] = []
    for line_no, row in enumerate(reader, start=2):
        try:
            raw_facts = json.loads(row["Supporting Facts"] or "[]")
            facts = tuple(SupportingFact(filename=f["filename"], text=f["text"]) for f in raw_facts)
            queries.append(
                Query(
                    company=(row["Enterprise Name"] or "").strip(),
                    query_type=(row["Query Type"] or "").strip(),
                    text=(row["Query"] or "").strip(),
                    facts=facts,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"queries CSV row {line_no}: bad Supporting Facts ({exc})") from exc
    return queries


def load_queries(path: Path) -> list[Query]:
    """Read and parse a queries CSV file (UTF-8, optional BOM)."""
    return parse_queries(Path(path).read_text(encoding="utf-8-sig"))
