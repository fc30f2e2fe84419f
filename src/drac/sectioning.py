"""Split a document's elements into planner-sized sections at heading boundaries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from drac.ids import digest_of
from drac.models import Element, Section


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
    runs = _split(list(elements), budget)
    by_id = {element.id: element for element in elements}
    sections: list[Section] = []
    for index, run in enumerate(_merge_small(runs, budget), start=1):
        ids = tuple(element.id for element in run)
        chain = _outer_chain(run, set(ids))
        texts = [by_id[heading].text for heading in chain] + [e.id + "\x00" + e.text for e in run]
        sections.append(
            Section(
                id=f"s{index}",
                element_ids=ids,
                heading_chain=chain,
                content_hash=digest_of(texts, 24),
            )
        )
    return sections


def _content_count(run: Sequence[Element]) -> int:
    return sum(1 for element in run if not element.is_heading)


def _split(run: list[Element], budget: int) -> list[list[Element]]:
    if _content_count(run) <= budget:
        return [run]
    levels = sorted({e.level for e in run[1:] if e.is_heading and e.level is not None})
    for level in levels:
        pieces = _cut_before_headings(run, level)
        if len(pieces) > 1:
            return [part for piece in pieces for part in _split(piece, budget)]
    return _cut_in_order(run, budget)


def _cut_before_headings(run: list[Element], level: int) -> list[list[Element]]:
    pieces: list[list[Element]] = []
    current: list[Element] = []
    for element in run:
        if element.is_heading and element.level is not None and element.level <= level and current:
            pieces.append(current)
            current = []
        current.append(element)
    if current:
        pieces.append(current)
    return pieces


def _cut_in_order(run: list[Element], budget: int) -> list[list[Element]]:
    """Cut a run with no usable headings into budget-sized pieces, preferring table edges."""
    table_sizes = Counter(e.table_id for e in run if e.table_id is not None)
    pieces: list[list[Element]] = []
    current: list[Element] = []
    count = 0
    for element in run:
        if count >= budget:
            pieces.append(current)
            current, count = [], 0
        elif _starts_new_block(current, element):
            size = table_sizes[element.table_id]
            if size <= budget and count + size > budget:
                # close early rather than split a table that fits a section of its own
                pieces.append(current)
                current, count = [], 0
        current.append(element)
        count += 0 if element.is_heading else 1
    if current:
        pieces.append(current)
    return pieces


def _starts_new_block(current: list[Element], element: Element) -> bool:
    if not current or element.table_id is None:
        return False
    return current[-1].table_id != element.table_id


def _merge_small(runs: list[list[Element]], budget: int) -> list[list[Element]]:
    """Merge neighbouring runs while they stay within the budget, to save planner calls."""
    merged: list[list[Element]] = []
    for run in runs:
        if merged and _content_count(merged[-1]) + _content_count(run) <= budget:
            merged[-1] = merged[-1] + run
        else:
            merged.append(list(run))
    return merged


def _outer_chain(run: Sequence[Element], inside: set[str]) -> tuple[str, ...]:
    """Ancestor headings of the run's first element that are not themselves in the run."""
    first = run[0]
    return tuple(heading for heading in first.ancestors if heading not in inside)
