"""A folder of ground-truth Markdown and its renditions, scored for conversion fidelity.

Two layouts are read (both may appear under one folder):

- the corpus layout: a folder holding `md/NAME.md` and, beside it, one folder per format with
  `pdf/NAME.pdf`, `docx/NAME.docx`, ... (RAG-Multi-Corpus); the group is that folder's name;
- one folder per document holding `source.md` and its renditions (`source.pdf`,
  `report.docx`, ...: every other file of the folder); the group is the parent folder's name.

Symbolic links are not followed. `score_folder` converts each rendition with the function it
is given (the product's offline conversion, or a cached one in the benchmark) and scores it
with `drac.evaluation.fidelity.score_conversion`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from drac.evaluation.fidelity import Fidelity, score_conversion

__all__ = [
    "Rendition",
    "ScoredRendition",
    "SourceDocument",
    "fidelity_table",
    "find_documents",
    "score_folder",
]

SOURCE_NAME = "source.md"
_MARKDOWN = frozenset({".md", ".markdown"})


@dataclass(frozen=True)
class SourceDocument:
    """A ground-truth Markdown file and the renditions of the same content."""

    name: str
    group: str
    source: Path
    renditions: tuple[Path, ...]


@dataclass(frozen=True)
class Rendition:
    """What a conversion of one rendition gave: its Markdown and warnings."""

    markdown: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoredRendition:
    """One rendition's fidelity against its document's source."""

    document: SourceDocument
    path: Path
    format: str
    fidelity: Fidelity
    warnings: tuple[str, ...] = ()


def find_documents(folder: Path) -> list[SourceDocument]:
    """Every document under `folder` with a ground-truth Markdown, sorted by group and name."""
    found: list[SourceDocument] = []
    for directory in _directories(folder):
        markdown = directory / "md"
        if markdown.is_dir() and not markdown.is_symlink():
            found.extend(_corpus_layout(directory))
        source = directory / SOURCE_NAME
        if source.is_file() and not source.is_symlink():
            others = tuple(
                sorted(
                    path
                    for path in directory.iterdir()
                    if path.is_file()
                    and not path.is_symlink()
                    and path.name != SOURCE_NAME
                    and path.suffix.lower() not in _MARKDOWN
                )
            )
            group = directory.parent.name if directory != folder else folder.name
            found.append(SourceDocument(directory.name, group, source, others))
    return sorted(found, key=lambda d: (d.group, d.name))


def _directories(folder: Path) -> Iterable[Path]:
    pending = [folder]
    while pending:
        directory = pending.pop()
        yield directory
        pending.extend(
            sorted(
                child
                for child in directory.iterdir()
                if child.is_dir() and not child.is_symlink() and child.name != "md"
            )
        )


def _corpus_layout(directory: Path) -> list[SourceDocument]:
    formats = sorted(
        child
        for child in directory.iterdir()
        if child.is_dir() and not child.is_symlink() and child.name != "md"
    )
    documents = []
    for source in sorted((directory / "md").iterdir()):
        if source.suffix.lower() not in _MARKDOWN or not source.is_file() or source.is_symlink():
            continue
        renditions = tuple(
            path
            for fmt in formats
            for path in sorted(fmt.iterdir())
            if path.stem == source.stem and path.is_file() and not path.is_symlink()
        )
        documents.append(SourceDocument(source.stem, directory.name, source, renditions))
    return documents


def score_folder(
    documents: Iterable[SourceDocument],
    convert: Callable[[Path], Rendition],
    formats: frozenset[str] | None = None,
) -> list[ScoredRendition]:
    """Convert and score every rendition (of `formats`, by file extension, when given)."""
    scored = []
    for document in documents:
        source = document.source.read_text(encoding="utf-8")
        for path in document.renditions:
            fmt = rendition_format(path)
            if formats is not None and fmt not in formats:
                continue
            converted = convert(path)
            fidelity = score_conversion(source, converted.markdown)
            scored.append(ScoredRendition(document, path, fmt, fidelity, converted.warnings))
    return scored


def rendition_format(path: Path) -> str:
    """The format a rendition is reported under: its extension, lower case (`htm` is html)."""
    suffix = path.suffix.lower().lstrip(".")
    return "html" if suffix == "htm" else suffix


def fidelity_table(rows: dict[str, Fidelity], first: str) -> str:
    """A Markdown table of the fidelity of each named group of conversions."""
    header = (
        f"| {first} | docs | word recall | word precision | reading order | headings "
        "(text+level) | headings (text) | table cells | list items | split mid-sentence "
        "| unprintable chars |"
    )
    lines = [header, "|---|" + "---:|" * 10]
    for name, score in rows.items():
        lines.append(
            f"| {name} | {score.documents} | {score.word_recall:.4f} | "
            f"{score.word_precision:.4f} | {score.reading_order:.4f} | "
            f"{score.heading_recall:.3f} ({score.headings_found}/{score.headings}) | "
            f"{score.heading_text_recall:.3f} | "
            f"{score.table_fidelity:.3f} ({score.table_cells_found}/{score.table_cells}) | "
            f"{score.list_fidelity:.3f} ({score.list_items_kept}/{score.list_items}) | "
            f"{score.paragraphs_split} of {score.paragraphs} | {score.unprintable} |"
        )
    return "\n".join(lines)


def totals(
    scored: Iterable[ScoredRendition], key: Callable[[ScoredRendition], str]
) -> dict[str, Fidelity]:
    """The summed fidelity of the scored renditions grouped by `key`, in first-seen order."""
    groups: dict[str, Fidelity] = {}
    for item in scored:
        name = key(item)
        groups[name] = groups[name] + item.fidelity if name in groups else item.fidelity
    return groups
