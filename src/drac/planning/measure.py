"""The length of a chunk's text, kept up to date as elements are appended.

Packing asks for the size of a chunk with one more element at every step; building the text
each time (`drac.assemble.chunk_text`) made packing quadratic in the chunk's length. This
follows `drac.assemble.layout` step by step and returns the same lengths without building any
text (tests/unit/planning/test_measure.py compares the two).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drac.assemble import BREADCRUMB_MAX_CHARS, BREADCRUMB_SEPARATOR, join_titles
from drac.models import Element


class Breadcrumbs:
    """Lengths of the heading context of a document's chunks, each computed once."""

    def __init__(self, by_id: Mapping[str, Element]) -> None:
        self.by_id = by_id
        self._contexts: dict[tuple[str, ...], list[int | None]] = {}
        self._full: dict[tuple[str, ...], int] = {}  # contexts of whole chains
        self._crumbs: dict[tuple[str, ...], int] = {}  # elided breadcrumb length by chain
        self._joined: dict[tuple[str, ...], int] = {}  # joined titles' length by chain
        self._titles: dict[str, str] = {}

    def context(self, ancestors: tuple[str, ...], chain: int) -> int:
        """For a chunk whose first element has these ancestors and whose elements share the
        chain ancestors[:chain]: the length of that chain's breadcrumb line (with its blank
        line) plus that of the headings ancestors[chain:] written before the first element."""
        if chain == len(ancestors):  # the chunk's elements share all the first one's headings
            found = self._full.get(ancestors)
            if found is None:
                crumb = self._crumb_length(ancestors)
                found = self._full[ancestors] = crumb + 2 if crumb else 0
            return found
        contexts = self._contexts.get(ancestors)
        if contexts is None:
            contexts = self._contexts[ancestors] = [None] * (len(ancestors) + 1)
        found = contexts[chain]
        if found is None:
            found = contexts[chain] = self._compute(ancestors, chain)
        return found

    def _compute(self, ancestors: tuple[str, ...], chain: int) -> int:
        crumb = self._crumb_length(ancestors[:chain])
        below = sum(len(self.by_id[heading].text) + 2 for heading in ancestors[chain:])
        return (crumb + 2 if crumb else 0) + below

    def _crumb_length(self, chain: tuple[str, ...]) -> int:
        """Length of breadcrumb_for(chain): the titles joined, unless that is too long and
        the breadcrumb elides some of them."""
        raw = self._joined_length(chain)
        if raw <= BREADCRUMB_MAX_CHARS:
            return raw
        found = self._crumbs.get(chain)
        if found is None:
            titles = [self._title(heading) for heading in chain]
            found = self._crumbs[chain] = len(join_titles(titles))
        return found

    def _joined_length(self, chain: tuple[str, ...]) -> int:
        """Length of the chain's non-empty titles joined by the separator, from its parent's."""
        if not chain:
            return 0
        found = self._joined.get(chain)
        if found is None:
            parent = self._joined_length(chain[:-1])
            title = len(self._title(chain[-1]))
            found = parent + (len(BREADCRUMB_SEPARATOR) if parent and title else 0) + title
            self._joined[chain] = found
        return found

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
    `probe` sizes the chunk with one more element; `commit` then appends that element.
    """

    __slots__ = (
        "_ancestors",
        "_chain",
        "_context",
        "_crumbs",
        "_emitted",
        "_last",
        "_probe",
        "_rest",
        "blocks",
        "by_id",
        "probed_blocks",
        "size",
    )

    def __init__(self, first: Element, by_id: Mapping[str, Element], crumbs: Breadcrumbs) -> None:
        self.by_id = by_id
        self._ancestors = first.ancestors
        self._crumbs = crumbs
        self._chain = len(first.ancestors)
        self._context = crumbs.context(first.ancestors, self._chain)
        self._emitted = set(first.ancestors)
        self._rest = part_length(first)  # the first element's part has no separator before it
        self._last = first
        self._probe: tuple[Element, int, int, int, list[str]] | None = None
        self.size = self._context + self._rest  # length of the chunk's text as it stands
        self.blocks = 1  # blocks in the chunk, the consecutive rows of one table counting once
        self.probed_blocks = 1  # blocks with the element last probed

    def probe(self, element: Element) -> int:
        """Length of the chunk's text if `element` were appended (also sets probed_blocks)."""
        last = self._last
        table_id = element.table_id
        same_table = table_id is not None and table_id == last.table_id
        self.probed_blocks = self.blocks if same_table else self.blocks + 1
        ancestors = element.ancestors
        chain, context, added, headings = self._chain, self._context, 0, []
        if ancestors != last.ancestors:  # else: same headings as the element before
            chain = min(chain, len(ancestors))
            for position in range(chain):
                if ancestors[position] != self._ancestors[position]:
                    chain = position
                    break
            if chain != self._chain:
                context = self._crumbs.context(self._ancestors, chain)
            headings = [heading for heading in ancestors if heading not in self._emitted]
            for heading in headings:
                added += len(self.by_id[heading].text) + 2
        if same_table and not headings:
            added += 1 + len(element.text)  # a row of the same table, on the next line
        elif element.table_header is None:
            added += 2 + len(element.text)
        else:
            added += 3 + len(element.table_header) + len(element.text)
        self._probe = (element, chain, context, added, headings)
        return context + self._rest + added

    def commit(self) -> None:
        """Append the element last probed."""
        if self._probe is None:
            raise RuntimeError("commit() needs a probe() first")
        element, self._chain, self._context, added, headings = self._probe
        self._rest += added
        if headings:
            self._emitted.update(headings)
        self._last = element
        self.blocks = self.probed_blocks
        self.size = self._context + self._rest
        self._probe = None

    def add(self, element: Element) -> None:
        """Append `element` to the chunk."""
        self.probe(element)
        self.commit()


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
