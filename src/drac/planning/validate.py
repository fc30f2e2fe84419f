"""Validation of any planner's proposal, in code: the plan that is kept is always sound."""

from __future__ import annotations

from itertools import groupby

from drac.models import Element, PlanIssues, Strategy
from drac.planning.base import Proposal, SectionView
from drac.planning.packing import pack, split_over_limit


def validate(
    proposal: Proposal, view: SectionView, strategy: Strategy
) -> tuple[list[list[str]], PlanIssues]:
    """Repair a proposal into chunks where every content ID of the section appears once.

    Unknown IDs are dropped, repeated content IDs kept at first use, heading IDs treated as
    context only, missing content gathered into fallback chunks under their own headings, and
    chunks over the hard limit split in order.
    """
    if _is_clean(proposal.groups, view):
        kept_groups = [[view.by_id[i] for i in group] for group in proposal.groups]
        unknown: list[str] = []
        duplicates: list[str] = []
        missing: list[Element] = []
    else:
        kept_groups, unknown, duplicates, missing = _repaired(proposal.groups, view, strategy)

    chunks: list[list[str]] = []
    splits = 0
    for group in kept_groups:
        pieces = split_over_limit(
            group, view.by_id, strategy.hard_limit_chars, view.breadcrumbs
        )
        splits += len(pieces) - 1
        chunks.extend([element.id for element in piece] for piece in pieces)

    issues = PlanIssues(
        unknown_ids=tuple(unknown),
        duplicate_ids=tuple(duplicates),
        missing_ids=tuple(element.id for element in missing),
        split_chunks=splits,
        fell_back_to_rules=proposal.fell_back,
        reason="; ".join(proposal.notes) or None,
    )
    return chunks, issues


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
