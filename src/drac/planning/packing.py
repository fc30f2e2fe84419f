"""Greedy, size-aware packing of content elements into chunks (used by the rules planner
and by validation to repair fallback and over-limit chunks)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drac.assemble import BREADCRUMB_MAX_CHARS
from drac.models import Element, Strategy
from drac.planning.measure import Breadcrumbs, ChunkMeasure, measure_of


def split_over_limit(
    content: Sequence[Element],
    by_id: Mapping[str, Element],
    hard_limit: int,
    crumbs: Breadcrumbs | None = None,
) -> list[list[Element]]:
    """Split content (in order) into pieces whose chunk text stays within hard_limit."""
    if _size_bound(content, by_id) <= hard_limit:
        return [list(content)] if content else []
    crumbs = crumbs or Breadcrumbs(by_id)
    pieces: list[list[Element]] = []
    current: list[Element] = []
    measure: ChunkMeasure | None = None
    for element in content:
        if measure is None:
            measure = ChunkMeasure(element, by_id, crumbs)
        elif measure.probe(element) > hard_limit:
            pieces.append(current)
            current, measure = [], ChunkMeasure(element, by_id, crumbs)
        else:
            measure.commit()
        current.append(element)
    if current:
        pieces.append(current)
    return pieces


def _size_bound(content: Sequence[Element], by_id: Mapping[str, Element]) -> int:
    """An upper bound of the chunk text's length: longest breadcrumb, every heading above the
    elements written once, every element, each with a separator."""
    size = BREADCRUMB_MAX_CHARS + 2
    headings: set[str] = set()
    previous: tuple[str, ...] | None = None
    for element in content:
        if element.ancestors != previous:
            headings.update(element.ancestors)
            previous = element.ancestors
        size += len(element.text) + 2
        if element.table_header is not None:
            size += len(element.table_header) + 1
    return size + sum(len(by_id[heading].text) + 2 for heading in headings)


def pack(
    content: Sequence[Element],
    by_id: Mapping[str, Element],
    strategy: Strategy,
    crumbs: Breadcrumbs | None = None,
) -> list[list[Element]]:
    """Group content elements (in order) into chunks near the strategy's target size.

    Closes a chunk before the hard limit or max_blocks, when the next element would overshoot
    the target by more than the chunk is under it, or at a heading boundary once the chunk has
    min_chars; a table's rows stay together while they fit; a tiny tail merges backwards.
    """
    crumbs = crumbs or Breadcrumbs(by_id)
    groups: list[list[Element]] = []
    current: list[Element] = []
    measure: ChunkMeasure | None = None
    for element in content:
        if measure is None:
            measure = ChunkMeasure(element, by_id, crumbs)
        elif _should_close(current[-1], measure, element, measure.probe(element), strategy):
            groups.append(current)
            current, measure = [], ChunkMeasure(element, by_id, crumbs)
        else:
            measure.commit()
        current.append(element)
    if not current:
        return groups
    groups.append(current)
    if len(groups) > 1 and measure is not None and measure.size < strategy.min_chars:
        merged = [*groups[-2], *current]  # a tiny tail merges backwards when it fits
        if measure_of(merged, by_id, crumbs).size <= strategy.hard_limit_chars:
            groups[-2:] = [merged]
    return groups


def _should_close(
    last: Element, measure: ChunkMeasure, element: Element, candidate_size: int, strategy: Strategy
) -> bool:
    if candidate_size > strategy.hard_limit_chars:
        return True
    same_table = element.table_id is not None and element.table_id == last.table_id
    if same_table:
        return False  # keep a table's rows together while they fit
    if measure.probed_blocks > strategy.max_blocks:
        return True
    current_size = measure.size
    big_enough = current_size >= strategy.min_chars
    overshoot = candidate_size - strategy.target_chars
    if candidate_size > strategy.target_chars and overshoot > strategy.target_chars - current_size:
        return big_enough
    new_topic = element.ancestors != last.ancestors
    return new_topic and big_enough and _leaves_topic(last, element)


def _leaves_topic(last: Element, element: Element) -> bool:
    """True when element starts under a heading that last is not under (a sibling or uncle)."""
    return not set(last.ancestors) <= set(element.ancestors) or len(element.ancestors) <= len(
        last.ancestors
    )
