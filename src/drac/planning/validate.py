"""Validation of any planner's proposal, in code: the plan that is kept is always sound."""

from __future__ import annotations

from itertools import groupby

from drac.models import Element, PlanIssues, Strategy
from drac.planning.base import Proposal, SectionView
from drac.planning.measure import measure_of
from drac.planning.packing import pack, split_over_limit


def validate(
    proposal: Proposal, view: SectionView, strategy: Strategy
) -> tuple[list[list[str]], PlanIssues]:
    """Repair a proposal into chunks where every content ID of the section appears once.

    Unknown IDs are dropped, repeated content IDs kept at first use, heading IDs treated as
    context only, missing content gathered into fallback chunks under their own headings, and
    chunks over the hard limit split in order, and a one-element chunk below min_chars merged
    into a neighbour under the same headings. A proposal of which nothing could be kept is
    replaced by the rules plan and marked as fallen back.
    """
    notes = list(proposal.notes)
    fell_back = proposal.fell_back
    if _is_clean(proposal.groups, view):
        kept_groups = [[view.by_id[i] for i in group] for group in proposal.groups]
        unknown: list[str] = []
        duplicates: list[str] = []
        missing: list[Element] = []
    else:
        kept_groups, unknown, duplicates, missing = _repaired(proposal.groups, view, strategy)
        if view.content and len(missing) == len(view.content) and not fell_back:
            notes.append("no ID of the answer was usable")
            fell_back = True
            kept_groups = pack(view.content, view.by_id, strategy, view.breadcrumbs)
    if proposal.flat and not fell_back:
        # One list of IDs draws no chunk boundaries. Measured on the corpus (docs/evaluation.md):
        # one chunk per ID, merged, left 74 % of chunks under min_chars; one chunk split at the
        # hard limit made chunks of 1,780 chars (median); the rules packer's are 1,014.
        notes.append("a flat list of IDs (no chunk boundaries): packed by rules")
        fell_back = True
        kept = sorted((e for group in kept_groups for e in group), key=lambda e: view.order[e.id])
        kept_groups = pack(kept, view.by_id, strategy, view.breadcrumbs)
    if not fell_back and proposal.planner != "rules":  # packed groups are sized already
        kept_groups = merge_single_blocks(kept_groups, view, strategy)

    chunks: list[list[str]] = []
    splits = 0
    for group in kept_groups:
        pieces = split_over_limit(group, view.by_id, strategy.hard_limit_chars, view.breadcrumbs)
        splits += len(pieces) - 1
        chunks.extend([element.id for element in piece] for piece in pieces)

    issues = PlanIssues(
        unknown_ids=tuple(unknown),
        duplicate_ids=tuple(duplicates),
        missing_ids=tuple(element.id for element in missing),
        split_chunks=splits,
        fell_back_to_rules=fell_back,
        reason="; ".join(notes) or None,
        repaired=proposal.repaired,
        failed_answer=proposal.failed_answer,
    )
    return chunks, issues


def merge_single_blocks(
    groups: list[list[Element]], view: SectionView, strategy: Strategy
) -> list[list[Element]]:
    """Merge each one-element chunk smaller than min_chars into the chunk before it, else the
    one after it, when both lie under the same headings and the merged chunk keeps within the
    hard limit and max_blocks (the rules packer's own bounds)."""
    merged: list[list[Element]] = []
    pending = [list(group) for group in groups]
    for index, group in enumerate(pending):
        if len(group) == 1 and _small(group, view, strategy):
            if merged and _joinable(merged[-1], group, view, strategy):
                merged[-1] = sorted([*merged[-1], *group], key=lambda e: view.order[e.id])
                continue
            following = pending[index + 1] if index + 1 < len(pending) else None
            if following is not None and _joinable(group, following, view, strategy):
                pending[index + 1] = sorted([*group, *following], key=lambda e: view.order[e.id])
                continue
        merged.append(group)
    return merged


def _small(group: list[Element], view: SectionView, strategy: Strategy) -> bool:
    return measure_of(group, view.by_id, view.breadcrumbs).size < strategy.min_chars


def _joinable(
    first: list[Element], second: list[Element], view: SectionView, strategy: Strategy
) -> bool:
    if first[-1].ancestors != second[0].ancestors:
        return False
    if len({e.table_id or e.id for e in [*first, *second]}) > strategy.max_blocks:
        return False
    size = measure_of([*first, *second], view.by_id, view.breadcrumbs).size
    return size <= strategy.hard_limit_chars


def _is_clean(groups: list[list[str]], view: SectionView) -> bool:
    """True when the groups hold every content ID once, in order, and nothing else (as the
    rules planner's do): there is nothing to repair but sizes."""
    return all(groups) and [i for group in groups for i in group] == view.content_ids


def _repaired(
    groups: list[list[str]], view: SectionView, strategy: Strategy
) -> tuple[list[list[Element]], list[str], list[str], list[Element]]:
    """Kept groups in document order, unknown IDs, duplicate IDs and missing elements."""
    content_ids = set(view.content_ids)
    seen: set[str] = set()
    unknown: list[str] = []
    duplicates: list[str] = []
    kept_groups: list[list[Element]] = []
    for group in groups:
        kept: list[Element] = []
        for element_id in group:
            element = view.by_id.get(element_id)
            if element is not None and element.is_heading and element_id in view.order:
                continue  # heading IDs give context; assembly derives them
            if element_id not in content_ids:
                unknown.append(element_id)
            elif element_id in seen:
                duplicates.append(element_id)
            else:
                seen.add(element_id)
                kept.append(view.by_id[element_id])
        if kept:
            kept_groups.append(sorted(kept, key=lambda e: view.order[e.id]))

    missing = [element for element in view.content if element.id not in seen]
    for _, run in groupby(missing, key=lambda e: e.ancestors):
        kept_groups.extend(pack(list(run), view.by_id, strategy, view.breadcrumbs))
    kept_groups.sort(key=lambda g: view.order[g[0].id])
    return kept_groups, unknown, duplicates, missing
