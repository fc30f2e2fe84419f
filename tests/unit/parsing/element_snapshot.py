"""Golden snapshot of parse_markdown over the corpus and the repository's Markdown.

Each element is recorded as one line "id kind page level table_id digest" (absent values as
"-"), the digest covering its text, table header and ancestors, so any change to element ids
or their content shows up as a difference naming the document and the element. Regenerate
(only for an intended change) with:

    .venv/bin/python tests/unit/parsing/element_snapshot.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from drac.models import Element
from drac.parsing import normalise_newlines, parse_markdown

REPO = Path(__file__).resolve().parents[3]
SNAPSHOT = Path(__file__).with_name("data") / "element_snapshot.json"


def repository_documents() -> dict[str, Path]:
    """The repository's Markdown fixtures and examples, by path relative to the repository."""
    paths = sorted((REPO / "tests" / "fixtures" / "markdown").glob("*.md"))
    paths += sorted((REPO / "examples" / "documents").glob("*.md"))
    return {path.relative_to(REPO).as_posix(): path for path in paths}


def corpus_documents(corpus: Path) -> dict[str, Path]:
    """The corpus' Markdown documents, by path relative to the corpus."""
    return {p.relative_to(corpus).as_posix(): p for p in sorted(corpus.glob("*/md/*.md"))}


def element_row(element: Element) -> str:
    """One element as recorded in the snapshot."""
    payload = json.dumps([element.text, element.table_header, list(element.ancestors)])
    digest = hashlib.sha256(payload.encode()).hexdigest()[:12]
    fields = (element.id, element.kind.value, element.page, element.level, element.table_id)
    return " ".join("-" if value is None else str(value) for value in (*fields, digest))


def snapshot_of(path: Path) -> list[str]:
    """The rows of a document's elements with the default parser settings."""
    markdown = normalise_newlines(path.read_text("utf-8"))
    return [element_row(element) for element in parse_markdown(markdown)]


def build(corpus: Path) -> dict[str, list[str]]:
    """The snapshot of every repository document and every corpus document."""
    documents = {**repository_documents(), **{
        f"corpus/{name}": path for name, path in corpus_documents(corpus).items()
    }}
    return {name: snapshot_of(path) for name, path in documents.items()}


def main() -> int:
    """Write the snapshot file from the current parser."""
    sys.path.insert(0, str(REPO / "tests"))
    from shared_paths import CORPUS

    if not CORPUS.exists():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 1
    data = build(CORPUS)
    SNAPSHOT.write_text(json.dumps(data, indent=0, sort_keys=True, ensure_ascii=False) + "\n")
    count = sum(len(rows) for rows in data.values())
    print(f"{SNAPSHOT}: {len(data)} documents, {count} element rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
