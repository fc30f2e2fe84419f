"""Words the text layer broke apart, put back whole as the file has them (DOCX, HTML).

LibreOffice breaks a word anywhere when it is wider than its table column, and the PDF's
text layer then reads each line of the cell as a piece: "M u m b ai – M a h a r a s ht r a"
for "Mumbai – Maharashtra". Where the file's own table or paragraph is placed on the page
(`drac.documents.office.table_pages`, `drac.documents.office.structure_pages`) its words come back
whole; this pass mends what is left (a table the placement did not find, a layout table, a cell
of prose). Every word of such a page comes from the file, so a run of pieces separated by single
spaces, at least one of them no word of the file, whose letters together are a word of the
file (`file_vocabulary`: its paragraphs, table cells and headers) was one word: its spaces are
taken out, its characters kept. Words the file holds as they stand are never joined.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from drac.documents.office.file_structure import FileBlock
from drac.documents.office.file_tables import FileTable

__all__ = ["file_vocabulary", "respell"]

_WORD = re.compile(r"[^\W_]+")
_MAX_PIECES = 24
"""Pieces one word may have been broken into (a column one letter wide breaks "Maharashtra"
into 11); longer runs are not tried, so a line costs time linear in its words."""


def file_vocabulary(tables: Iterable[FileTable], blocks: Iterable[FileBlock]) -> frozenset[str]:
    """The words (letters and digits, case-folded) of the file's tables and paragraphs."""
    words: set[str] = set()
    for table in tables:
        for row in (table.header, *table.rows):
            for cell in row:
                words.update(_key(word) for word in _WORD.findall(cell))
    for block in blocks:
        words.update(_key(word) for word in _WORD.findall(block.text))
    return frozenset(words)


def respell(pages: Sequence[str], vocabulary: frozenset[str]) -> list[str]:
    """The pages with each run of word pieces that spells one word of `vocabulary` joined
    (module docstring); page markers and comments are left as they are."""
    if not vocabulary:
        return list(pages)
    # a run goes on only while it spells the start of a word of the file, so a line of
    # ordinary words costs a step or two per word
    starts = frozenset(word[:end] for word in vocabulary for end in range(1, len(word)))
    return [
        "\n".join(_line(line, vocabulary, starts) for line in page.split("\n")) for page in pages
    ]


def _key(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


def _line(line: str, vocabulary: frozenset[str], starts: frozenset[str]) -> str:
    if line.lstrip().startswith("<!--"):
        return line
    words = [(match.start(), match.end(), _key(match.group())) for match in _WORD.finditer(line)]
    out: list[str] = []
    position = 0
    index = 0
    while index < len(words):
        end = _joined_run(line, words, index, vocabulary, starts)
        if end is None:
            index += 1
            continue
        start = words[index][0]
        out.append(line[position:start])
        out.append("".join(line[s:e] for s, e, _ in words[index : end + 1]))
        position = words[end][1]
        index = end + 1
    out.append(line[position:])
    return "".join(out)


def _joined_run(
    line: str,
    words: list[tuple[int, int, str]],
    index: int,
    vocabulary: frozenset[str],
    starts: frozenset[str],
) -> int | None:
    """The last piece of the longest run from `index` that spells a word of the file and
    holds a piece that is not one (a run is followed only while it spells the start of a
    word of the file: `starts`); None when there is none."""
    found = None
    spelled = words[index][2]
    broken = spelled not in vocabulary
    for end in range(index + 1, min(len(words), index + _MAX_PIECES)):
        if spelled not in starts or line[words[end - 1][1] : words[end][0]] != " ":
            break
        spelled += words[end][2]
        broken = broken or words[end][2] not in vocabulary
        if broken and spelled in vocabulary:
            found = end
    return found
