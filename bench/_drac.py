"""Build drac chunks in process from Markdown files (bench only): parse, section, plan, assemble."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from drac.assemble import assemble_chunks
from drac.ids import document_id_for
from drac.models import Chunk, DocumentRecord, Strategy
from drac.parsing import parse_markdown
from drac.planning import plan_document
from drac.sectioning import make_sections


def markdown_chunks(paths: Iterable[Path], strategy: Strategy) -> list[Chunk]:
    """Chunks of every Markdown file under one strategy (rules planner unless told)."""
    chunks: list[Chunk] = []
    for path in paths:
        data = path.read_bytes()
        record = DocumentRecord(
            document_id=document_id_for(data), source=path.name, sha256="", format="markdown"
        )
        elements = parse_markdown(data.decode("utf-8"))
        sections = make_sections(elements, strategy.section_budget)
        plan = plan_document(record.document_id, elements, sections, strategy, 1)
        chunks.extend(assemble_chunks(record, elements, plan))
    return chunks
