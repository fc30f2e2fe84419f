"""Chunk sets under evaluation: any JSON Lines file of chunks, and the agentic reference.

The JSON Lines contract is the one `drac export` writes; evaluation needs only `text` and
`source` (the source file's name), the other fields are kept when present.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from drac.evaluation.queries import document_key


class EvalChunk(BaseModel):
    """One chunk as evaluation sees it."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    source: str
    text: str

    @property
    def document(self) -> str:
        """Format-free document key of the chunk's source."""
        return document_key(self.source)


class ChunkSet(BaseModel):
    """A named list of chunks (one system under evaluation)."""

    model_config = ConfigDict(frozen=True)

    name: str
    chunks: tuple[EvalChunk, ...]

    @property
    def documents(self) -> frozenset[str]:
        """Document keys present in the set."""
        return frozenset(c.document for c in self.chunks)


def chunks_from_jsonl_lines(lines: Iterable[str], origin: str = "<jsonl>") -> list[EvalChunk]:
    """Parse chunk objects (at least "text" and "source") from JSON Lines; blank lines skipped.

    Raises ValueError naming the line when an object lacks "text" or "source".
    """
    chunks: list[EvalChunk] = []
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        obj = json.loads(line)
        if not isinstance(obj, dict) or "text" not in obj or "source" not in obj:
            raise ValueError(f"{origin} line {line_no}: a chunk needs 'text' and 'source'")
        chunk_id = str(obj.get("chunk_id") or f"{obj['source']}#{len(chunks)}")
        chunks.append(
            EvalChunk(chunk_id=chunk_id, source=str(obj["source"]), text=str(obj["text"]))
        )
    return chunks


def load_chunk_set(path: Path, name: str | None = None) -> ChunkSet:
    """Read a JSON Lines chunk file into a ChunkSet named after the file unless `name` given."""
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        chunks = chunks_from_jsonl_lines(handle, origin=str(path))
    return ChunkSet(name=name or path.stem, chunks=tuple(chunks))


def agentic_reference_to_chunks(lines: Iterable[str]) -> Iterator[dict[str, object]]:
    """Convert the corpus' agentic reference lines to chunk objects of the export contract.

    Input: one `{"file_name", "title", "chunks": [str, ...]}` per line. Output: one
    `{"document_id", "source", "chunk_id", "plan_version", "text", "breadcrumb",
    "element_ids", "pages"}` per chunk, `text` kept exactly as the reference has it.
    """
    for line in lines:
        if not line.strip():
            continue
        record = json.loads(line)
        source = str(record["file_name"])
        for index, text in enumerate(record["chunks"]):
            yield {
                "document_id": document_key(source),
                "source": source,
                "chunk_id": f"{document_key(source)}#agentic-{index}",
                "plan_version": 1,
                "text": text,
                "breadcrumb": "",
                "element_ids": [],
                "pages": [],
            }


def write_jsonl(objects: Iterable[dict[str, object]], path: Path) -> int:
    """Write objects as JSON Lines (UTF-8, non-ASCII kept); return how many."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as handle:
        for obj in objects:
            handle.write(json.dumps(obj, ensure_ascii=False) + "\n")
            count += 1
    return count
