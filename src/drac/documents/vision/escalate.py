"""Per-page escalation: the pages a first (cheap) vision model converted doubtfully are
converted again by a second (stronger) model, and each page keeps the better-verified answer.

A page is doubtful when its verification flags (unsupported, missing, suspect merged rows)
are more than a threshold, or when its conversion failed (a repetition loop, a cut-off or
foreign answer). The two answers are compared by their flags; a failed answer is worse than
any answer; a tie goes to the second model. Pure functions: the caller converts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from drac.documents.options import ESCALATE_FLAGS
from drac.documents.vision.batches import BatchResult, page_span
from drac.documents.vision.check import MARKER, page_texts
from drac.documents.vision.prompt import page_marker
from drac.documents.vision.verify import PageVerification
from drac.models import PageEscalation
from drac.ports import VisionModel


@dataclass(frozen=True)
class Escalation:
    """The second model and the flags a page may have before it is converted again by it."""

    model: VisionModel
    threshold: int = ESCALATE_FLAGS


def failed_pages(markdown: str) -> dict[int, str]:
    """The pages of a batch's Markdown that are error markers, with each marker's text."""
    return {
        int(match.group(1)): match.group(0)
        for match in MARKER.finditer(markdown)
        if "conversion failed" in match.group(0)
    }


def escalation_reasons(results: Sequence[BatchResult], threshold: int) -> dict[int, str]:
    """Page number -> why it deserves the second model: its conversion failed, or it has more
    than `threshold` verification flags."""
    reasons: dict[int, str] = {}
    for result in results:
        for number, marker in failed_pages(result.markdown).items():
            if number in result.pages:
                reasons[number] = _marker_reason(marker)
        for page in result.verification:
            if page.page not in reasons and page.flags > threshold:
                reasons[page.page] = _flags_reason(page, threshold)
    return dict(sorted(reasons.items()))


def merge_escalated(
    results: Sequence[BatchResult],
    escalated: Sequence[BatchResult],
    reasons: Mapping[int, str],
    first_model: str,
    second_model: str,
) -> tuple[list[BatchResult], list[PageEscalation]]:
    """The batches with each escalated page's better-verified answer (ties to the second
    model), and the record of every escalated page. Batches with no escalated page are kept
    as they are; the others become one result per page."""
    second = {number: result for result in escalated for number in result.pages}
    merged: list[BatchResult] = []
    records: list[PageEscalation] = []
    for result in results:
        if not any(number in reasons for number in result.pages):
            merged.append(result)
            continue
        warnings = list(result.warnings)
        for number in result.pages:
            if number not in reasons:
                merged.append(_page_of(result, number, []))
                continue
            before = _score(result, number)
            answer = second.get(number)
            after = _score(answer, number) if answer is not None else None
            use_second = answer is not None and _second_wins(before, after)
            if use_second and answer is not None:
                merged.append(_page_of(answer, number, []))
                warnings.extend(w for w in answer.warnings if w not in warnings)
            else:
                merged.append(_page_of(result, number, []))
            records.append(
                PageEscalation(
                    page=number,
                    reason=reasons[number],
                    first_model=first_model,
                    second_model=second_model,
                    model=second_model if use_second else first_model,
                    flags_before=before,
                    flags_after=after,
                )
            )
        first = next(i for i, r in enumerate(merged) if r.pages == [result.pages[0]])
        merged[first] = merged[first].model_copy(update={"warnings": warnings})
    return merged, records


def _second_wins(before: int | None, after: int | None) -> bool:
    """Whether the second answer is kept: fewer or as many flags, or the first one failed
    (None); a failed second answer never replaces a written page."""
    if after is None:
        return before is None
    return before is None or after <= before


def _score(result: BatchResult, number: int) -> int | None:
    """The page's flags in this answer; None when the page failed or was not written."""
    if number in failed_pages(result.markdown) or number not in page_texts(result.markdown):
        return None
    found = [page for page in result.verification if page.page == number]
    return found[0].flags if found else 0


def _page_of(result: BatchResult, number: int, warnings: list[str]) -> BatchResult:
    """One page of a batch as a result of its own: its Markdown (or error marker), failure
    and verification."""
    failed = failed_pages(result.markdown)
    if number in failed:
        markdown = failed[number]
        failure: str | None = f"{page_span([number])}: {_marker_reason(failed[number])}"
    else:
        text = page_texts(result.markdown).get(number, "")
        markdown = f"{page_marker(number)}\n\n{text}".rstrip()
        failure = None
    return BatchResult(
        pages=[number],
        markdown=markdown,
        warnings=warnings,
        failure=failure,
        verification=[page for page in result.verification if page.page == number],
    )


def _marker_reason(marker: str) -> str:
    """'conversion failed: <reason>' of an error marker."""
    body = marker.removeprefix("<!--").removesuffix("-->").strip()
    return body[body.find("conversion failed") :].strip()


def _flags_reason(page: PageVerification, threshold: int) -> str:
    counts = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in page.counts.items())
    return f"{page.flags} verification flags ({counts}), more than {threshold}"


def escalation_line(records: Sequence[PageEscalation]) -> str:
    """One warning line for the record: the pages escalated and whose answers they kept."""
    second = records[0].second_model
    kept = [record.page for record in records if record.model == second]
    pages = ", ".join(str(record.page) for record in records[:20])
    return (
        f"escalation: {len(records)} page(s) converted again by {second} (pages {pages}); "
        f"{len(kept)} kept its answer"
    )
