"""Golden digests of the sections, chunks and repaired plans made from the corpus Markdown.

One digest per document and strategy preset covers every chunk's text, element ids and pages
(another every section's ids, heading chain and content hash), so a sectioning, planning or
assembly change that alters any of them shows up naming the document. Taken from the code
before planning was made incremental; regenerate (only for an intended change) with:

    .venv/bin/python tests/unit/planning/chunk_snapshot.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from drac.assemble import assemble_chunks
from drac.models import DocumentRecord
from drac.parsing import normalise_newlines, parse_markdown
from drac.planning import Proposal, plan_document, section_view, validate
from drac.sectioning import make_sections
from drac.strategies import resolve_strategy

REPO = Path(__file__).resolve().parents[3]
SNAPSHOT = Path(__file__).with_name("data") / "chunk_snapshot.json"
PRESETS = ("default", "fine", "coarse")
# Planner answers the validator must repair: everything in one array (split at the hard
# limit), and every other element only (the rest packed into fallback chunks).
REPAIRS = {
    "repair-split": lambda ids: [ids],
    "repair-missing": lambda ids: [ids[::2]],
}


def chunk_digest(markdown: str, preset: str) -> str:
    """Digest of the chunks of one document under one preset (rules planner)."""
    strategy = resolve_strategy(preset)
    elements = parse_markdown(markdown)
    sections = make_sections(elements, strategy.section_budget)
    plan = plan_document("d1", elements, sections, strategy, version=1)
    record = DocumentRecord(document_id="d1", source="doc.md", sha256="0" * 64)
    chunks = assemble_chunks(record, elements, plan)
    payload = [[c.text, list(c.element_ids), list(c.pages), c.breadcrumb] for c in chunks]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


def repair_digest(markdown: str, repair: str) -> str:
    """Digest of the validated chunks of a document's sections for one kind of bad answer."""
    strategy = resolve_strategy("default")
    elements = parse_markdown(markdown)
    arrays = []
    for section in make_sections(elements, strategy.section_budget):
        view = section_view(section, elements)
        ids = [element.id for element in view.content]
        proposal = Proposal(groups=REPAIRS[repair](ids), planner="test")
        chunks, issues = validate(proposal, view, strategy)
        arrays.append([chunks, list(issues.missing_ids), issues.split_chunks])
    return hashlib.sha256(json.dumps(arrays).encode()).hexdigest()[:16]


def section_digest(markdown: str, budget: int) -> str:
    """Digest of a document's sections for one section budget."""
    sections = make_sections(parse_markdown(markdown), budget)
    payload = [[s.id, list(s.element_ids), list(s.heading_chain), s.content_hash] for s in sections]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


def digests(markdown: str) -> dict[str, str]:
    """Every digest of one document."""
    found = {f"sections-{budget}": section_digest(markdown, budget) for budget in (5, 60)}
    found.update({preset: chunk_digest(markdown, preset) for preset in PRESETS})
    found.update({repair: repair_digest(markdown, repair) for repair in REPAIRS})
    return found


def build(corpus: Path) -> dict[str, dict[str, str]]:
    """Digests of every corpus document."""
    return {
        path.relative_to(corpus).as_posix(): digests(normalise_newlines(path.read_text("utf-8")))
        for path in sorted(corpus.glob("*/md/*.md"))
    }


def main() -> int:
    """Write the snapshot file from the current code."""
    sys.path.insert(0, str(REPO / "tests"))
    from shared_paths import CORPUS

    data = build(CORPUS)
    SNAPSHOT.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"{SNAPSHOT}: {len(data)} documents")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
