"""The length of a chunk's text, kept up to date as elements are appended.

Packing asks for the size of a chunk with one more element at every step; building the text
each time (`drac.assemble.chunk_text`) made packing quadratic in the chunk's length. This
follows `drac.assemble.layout` step by step and returns the same lengths without building any
text (tests/unit/planning/test_measure.py compares the two).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drac.assemble import join_titles
from drac.models import Element


class Breadcrumbs:
    """Lengths of the heading context of a document's chunks, each computed once."""

    def __init__(self, by_id: Mapping[str, Element]) -> None:
        self.by_id = by_id
        self._contexts: dict[tuple[str, ...], list[int | None]] = {}
        self._crumbs: dict[tuple[str, ...], int] = {}  # breadcrumb length by chain
        self._titles: dict[str, str] = {}

    def context(self, ancestors: tuple[str, ...], chain: int) -> int:
        """For a chunk whose first element has these ancestors and whose elements share the
        chain ancestors[:chain]: the length of that chain's breadcrumb line (with its blank
        line) plus that of the headings ancestors[chain:] written before the first element."""
        contexts = self._contexts.get(ancestors)
        if contexts is None:
            contexts = self._contexts[ancestors] = [None] * (len(ancestors) + 1)
        found = contexts[chain]
        if found is None:
            found = contexts[chain] = self._compute(ancestors, chain)
        return found

    def _compute(self, ancestors: tuple[str, ...], chain: int) -> int:
        prefix = ancestors[:chain]
        crumb = self._crumbs.get(prefix)
        if crumb is None:
            crumb = self._crumbs[prefix] = len(join_titles([self._title(h) for h in prefix]))
        below = sum(len(self.by_id[heading].text) + 2 for heading in ancestors[chain:])
        return (crumb + 2 if crumb else 0) + below

    def _title(self, heading: str) -> str:
        title = self._titles.get(heading)
        if title is None:
            title = self._titles[heading] = self.by_id[heading].title
        return title


class ChunkMeasure:
    """Length of `chunk_text` of a growing run of content elements (in document order).

    With A the first element's ancestors and c the length of the chain all elements share,
    the text is: breadcrumb of A[:c], the headings A[c:], the first element, and the rest;
    only the first two depend on c, so appending an element only adds its own parts.
    """

    __slots__ = (
        "_ancestors",
        "_blocks",
        "_chain",
        "_context",
        "_crumbs",
        "_emitted",
        "_last",
        "_pending",
        "_previous_table",
        "_rest",
        "by_id",
    )

    def __init__(self, first: Element, by_id: Mapping[str, Element], crumbs: Breadcrumbs) -> None:
        self.by_id = by_id
        self._ancestors = first.ancestors
        self._crumbs = crumbs
        self._chain = len(first.ancestors)
        self._context = crumbs.context(first.ancestors, self._chain)
        self._emitted = set(first.ancestors)
        self._rest = part_length(first)  # the first element's part has no separator before it
        self._previous_table = first.table_id  # None after a heading written into the body
        self._last = first
        self._blocks = 1
        self._pending: tuple[Element, int, int, list[str]] | None = None

    @property
    def size(self) -> int:
        """Length of the chunk's text as it stands."""
        return self._context + self._rest

    @property
    def blocks(self) -> int:
        """Blocks in the chunk, the consecutive rows of one table counting once."""
        return self._blocks

    def blocks_with(self, element: Element) -> int:
        """Blocks the chunk would hold with `element` appended."""
        same = element.table_id is not None and element.table_id == self._last.table_id
        return self._blocks if same else self._blocks + 1

    def size_with(self, element: Element) -> int:
        """Length of the chunk's text if `element` were appended."""
        chain, added, _ = self._growth(element)
        if chain == self._chain:
            return self._context + self._rest + added
        return self._crumbs.context(self._ancestors, chain) + self._rest + added

    def add(self, element: Element) -> None:
        """Append `element` to the chunk."""
        self._blocks = self.blocks_with(element)
        chain, added, headings = self._growth(element)
        if chain != self._chain:
            self._chain, self._context = chain, self._crumbs.context(self._ancestors, chain)
        self._rest += added
        if headings:
            self._emitted.update(headings)
        self._previous_table = element.table_id
        self._last = element
        self._pending = None

    def _growth(self, element: Element) -> tuple[int, int, list[str]]:
        """Shared chain length, added length and newly written headings with `element`."""
        pending = self._pending
        if pending is not None and pending[0] is element:
            return pending[1], pending[2], pending[3]
        ancestors = element.ancestors
        chain, added, headings = self._chain, 0, []
        if ancestors != self._last.ancestors:  # else: same headings as the element before
            chain = min(chain, len(ancestors))
            for position in range(chain):
                if ancestors[position] != self._ancestors[position]:
                    chain = position
                    break
            headings = [heading for heading in ancestors if heading not in self._emitted]
            for heading in headings:
                added += len(self.by_id[heading].text) + 2
        previous_table = None if headings else self._previous_table
        if element.table_id is not None and element.table_id == previous_table:
            added += 1 + len(element.text)  # a row of the same table, on the next line
        else:
            added += 2 + part_length(element)
        self._pending = (element, chain, added, headings)
        return chain, added, headings


def part_length(element: Element) -> int:
    """Length of an element as written in a chunk (a table row under its header)."""
    if element.table_header is not None:
        return len(element.table_header) + 1 + len(element.text)
    return len(element.text)


def measure_of(
    content: Sequence[Element], by_id: Mapping[str, Element], crumbs: Breadcrumbs
) -> ChunkMeasure:
    """The measure of a non-empty run of content elements."""
    measure = ChunkMeasure(content[0], by_id, crumbs)
    for element in content[1:]:
        measure.add(element)
    return measure
