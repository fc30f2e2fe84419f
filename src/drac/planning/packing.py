"""Greedy, size-aware packing of content elements into chunks (used by the rules planner
and by validation to repair fallback and over-limit chunks)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drac.assemble import chunk_text
from drac.models import Element, Strategy


def block_count(content: Sequence[Element]) -> int:
    """Number of blocks, counting the consecutive rows of one table as a single block."""
    count = 0
    previous_table: str | None = None
    for element in content:
        if element.table_id is None or element.table_id != previous_table:
            count += 1
        previous_table = element.table_id
    return count


def split_over_limit(
    content: Sequence[Element], by_id: Mapping[str, Element], hard_limit: int
) -> list[list[Element]]:
    """Split content (in order) into pieces whose chunk text stays within hard_limit."""
    pieces: list[list[Element]] = []
    current: list[Element] = []
    for element in content:
        if current and len(chunk_text([*current, element], by_id)) > hard_limit:
            pieces.append(current)
            current = []
        current.append(element)
    if current:
        pieces.append(current)
    return pieces


def pack(
    content: Sequence[Element], by_id: Mapping[str, Element], strategy: Strategy
) -> list[list[Element]]:
    """Group content elements (in order) into chunks near the strategy's target size.

    Closes a chunk before the hard limit or max_blocks, when the next element would overshoot
    the target by more than the chunk is under it, or at a heading boundary once the chunk has
    min_chars; a table's rows stay together while they fit; a tiny tail merges backwards.
    """
    groups: list[list[Element]] = []
    current: list[Element] = []
    current_size = 0
    for element in content:
        if current:
            candidate_size = len(chunk_text([*current, element], by_id))
            if _should_close(current, current_size, element, candidate_size, strategy):
                groups.append(current)
                current = []
        current.append(element)
        current_size = len(chunk_text(current, by_id))
    if current:
        groups.append(current)
    return _merge_tiny_tail(groups, by_id, strategy)


def _should_close(
    current: list[Element],
    current_size: int,
    element: Element,
    candidate_size: int,
    strategy: Strategy,
) -> bool:
    if candidate_size > strategy.hard_limit_chars:
        return True
    same_table = element.table_id is not None and element.table_id == current[-1].table_id
    if same_table:
        return False  # keep a table's rows together while they fit
    if block_count([*current, element]) > strategy.max_blocks:
        return True
    big_enough = current_size >= strategy.min_chars
    overshoot = candidate_size - strategy.target_chars
    if candidate_size > strategy.target_chars and overshoot > strategy.target_chars - current_size:
        return big_enough
    new_topic = element.ancestors != current[-1].ancestors
    return new_topic and big_enough and _leaves_topic(current[-1], element)


def _leaves_topic(last: Element, element: Element) -> bool:
    """True when element starts under a heading that last is not under (a sibling or uncle)."""
    return not set(last.ancestors) <= set(element.ancestors) or len(element.ancestors) <= len(
        last.ancestors
    )


def _merge_tiny_tail(
    groups: list[list[Element]], by_id: Mapping[str, Element], strategy: Strategy
) -> list[list[Element]]:
    if len(groups) < 2:
        return groups
    tail = groups[-1]
    if len(chunk_text(tail, by_id)) >= strategy.min_chars:
        return groups
    merged = [*groups[-2], *tail]
    if len(chunk_text(merged, by_id)) <= strategy.hard_limit_chars:
        return [*groups[:-2], merged]
    return groups
