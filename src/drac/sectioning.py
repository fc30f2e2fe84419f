"""Split a document's elements into planner-sized sections at heading boundaries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from drac.ids import digest_of
from drac.models import Element, Section

Run = tuple[int, int]  # elements[start:end]


def make_sections(elements: Sequence[Element], budget: int = 60) -> list[Section]:
    """Group elements into sections of at most `budget` content elements each.

    A document within budget is one section. A larger one is split at its shallowest heading
    level that divides it, recursively; small neighbours are merged back up to the budget; a
    long run without headings is cut in order (never inside a table while it fits).
    """
    if budget < 1:
        raise ValueError("budget must be positive")
    if not elements:
        return []
    document = _Document(elements, budget)
    runs = document.merge_small(document.split((0, len(elements))))
    return [document.section(index, run) for index, run in enumerate(runs, start=1)]


class _Document:
    """The elements with what sectioning asks of them often: content counts, positions."""

    def __init__(self, elements: Sequence[Element], budget: int) -> None:
        self.elements = elements
        self.budget = budget
        # where each heading is (ancestors are headings), and how much content precedes each
        self.position: dict[str, int] = {}
        self.content_before = [0] * (len(elements) + 1)
        count = 0
        for index, element in enumerate(elements):
            if element.is_heading:
                self.position[element.id] = index
            else:
                count += 1
            self.content_before[index + 1] = count

    def content_count(self, run: Run) -> int:
        return self.content_before[run[1]] - self.content_before[run[0]]

    def split(self, run: Run) -> list[Run]:
        """Cut an over-budget run before its shallowest headings (after its first element),
        recursively; a run without such headings is cut in order."""
        if self.content_count(run) <= self.budget:
            return [run]
        start, end = run
        levels = [
            e.level for e in self.elements[start + 1 : end] if e.is_heading and e.level is not None
        ]
        if not levels:
            return self.cut_in_order(run)
        level = min(levels)
        cuts = [start]
        cuts += [
            index
            for index in range(start + 1, end)
            if self.elements[index].is_heading and (self.elements[index].level or 0) == level
        ]
        cuts.append(end)
        return [part for piece in pairwise(cuts) for part in self.split(piece)]

    def cut_in_order(self, run: Run) -> list[Run]:
        """Cut a run with no usable headings into budget-sized pieces, preferring table edges."""
        start, end = run
        table_sizes = Counter(
            e.table_id for e in self.elements[start:end] if e.table_id is not None
        )
        pieces: list[Run] = []
        first, count = start, 0
        previous_table: str | None = None
        for index in range(start, end):
            element = self.elements[index]
            if count >= self.budget:
                pieces.append((first, index))
                first, count = index, 0
            elif (
                index > first
                and element.table_id is not None
                and element.table_id != previous_table
            ):
                size = table_sizes[element.table_id]
                if size <= self.budget and count + size > self.budget:
                    # close early rather than split a table that fits a section of its own
                    pieces.append((first, index))
                    first, count = index, 0
            count += 0 if element.is_heading else 1
            previous_table = element.table_id
        pieces.append((first, end))
        return pieces

    def merge_small(self, runs: list[Run]) -> list[Run]:
        """Merge neighbouring runs while they stay within the budget, to save planner calls."""
        merged: list[Run] = []
        for run in runs:
            if merged and self.content_count(merged[-1]) + self.content_count(run) <= self.budget:
                merged[-1] = (merged[-1][0], run[1])
            else:
                merged.append(run)
        return merged

    def section(self, number: int, run: Run) -> Section:
        start, end = run
        elements = self.elements[start:end]
        # the ancestor headings of the run's first element that lie outside the run
        chain = tuple(
            heading
            for heading in elements[0].ancestors
            if not start <= self.position[heading] < end
        )
        texts = [self.elements[self.position[heading]].text for heading in chain]
        texts += [element.id + "\x00" + element.text for element in elements]
        return Section(
            id=f"s{number}",
            element_ids=tuple(element.id for element in elements),
            heading_chain=chain,
            content_hash=digest_of(texts, 24),
        )
