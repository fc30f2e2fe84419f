"""Plan a section or a whole document: cache, planner, fallback, validation, ledger."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from drac.assemble import layout_ids
from drac.clock import utc_now
from drac.ids import digest_of
from drac.models import Element, PlanIssues, PlanVersion, Section, SectionPlan, Strategy
from drac.planning.base import Planner, Proposal, SectionView, section_view, section_views
from drac.planning.errors import NoModelPlan, PlanningFailed
from drac.planning.registry import planner_named
from drac.planning.rules import RulesPlanner
from drac.planning.validate import validate
from drac.ports import Ledger, MemoryLedger, PlanCache, TextModel


def planner_for(strategy: Strategy, text_model: TextModel | None, ledger: Ledger) -> Planner:
    """The planner a strategy asks for (`drac.planning.registry`); 'llm' needs a configured
    text model."""
    return planner_named(strategy.planner, text_model, ledger)


def cache_key(section: Section, strategy: Strategy, planner: Planner) -> str:
    """Key under which a section's plan is cached: its content and every planning setting."""
    # holding back pages is a conversion policy, not a planning setting
    settings = strategy.model_dump(exclude={"name", "hold_back_flags"})
    model = getattr(getattr(planner, "model", None), "name", "")
    return digest_of(
        [section.content_hash, repr(sorted(settings.items())), planner.name, model], 32
    )


def plan_section(
    section: Section,
    elements: Sequence[Element],
    strategy: Strategy,
    *,
    text_model: TextModel | None = None,
    cache: PlanCache | None = None,
    ledger: Ledger | None = None,
    document_id: str = "",
) -> SectionPlan:
    """Plan one section into validated chunks of element IDs."""
    ledger = ledger or MemoryLedger()
    planner = planner_for(strategy, text_model, ledger)
    return _plan(section_view(section, elements), strategy, planner, cache, document_id)


def plan_document(
    document_id: str,
    elements: Sequence[Element],
    sections: Sequence[Section],
    strategy: Strategy,
    version: int,
    *,
    text_model: TextModel | None = None,
    cache: PlanCache | None = None,
    ledger: Ledger | None = None,
) -> PlanVersion:
    """Plan every section of a document into a new numbered plan version."""
    ledger = ledger or MemoryLedger()
    planner = planner_for(strategy, text_model, ledger)
    plans = [
        _plan(view, strategy, planner, cache, document_id)
        for view in section_views(sections, elements)
    ]
    return PlanVersion(
        document_id=document_id,
        version=version,
        strategy=strategy,
        sections=tuple(plans),
        created_at=utc_now(),
    )


def _plan(
    view: SectionView,
    strategy: Strategy,
    planner: Planner,
    cache: PlanCache | None,
    document_id: str,
) -> SectionPlan:
    cacheable = cache is not None and not isinstance(planner, RulesPlanner)
    key = cache_key(view.section, strategy, planner) if cacheable else ""
    if cacheable and cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit.model_copy(update={"section_id": view.section.id, "cached": True})
    proposal = _propose(view, strategy, planner, document_id)
    chunks, issues = validate(proposal, view, strategy)
    arrays = tuple(layout_ids([view.by_id[i] for i in chunk]) for chunk in chunks)
    rebuilt = issues.fell_back_to_rules and not proposal.fell_back
    plan = SectionPlan(
        section_id=view.section.id,
        chunks=arrays,
        planner=f"{proposal.planner}->rules" if rebuilt else proposal.planner,
        model=proposal.model,
        usage=proposal.usage,
        issues=issues,
    )
    if cacheable and cache is not None and _is_model_plan(issues):
        cache.put(key, plan)
    return plan


def _is_model_plan(issues: PlanIssues) -> bool:
    """True when the plan's chunks are the model's own: nothing fell back to rules and no
    content had to be added by the rules packer (such plans are asked for again next time)."""
    return not issues.fell_back_to_rules and not issues.missing_ids


def _propose(view: SectionView, strategy: Strategy, planner: Planner, document_id: str) -> Proposal:
    try:
        return planner.propose(view, strategy, document_id)
    except PlanningFailed as failure:
        fallback = RulesPlanner().propose(view, strategy, document_id)
        # the notes already say what went wrong: the reason does not repeat them
        said = [*failure.notes, "fell back to rules"] if failure.notes else []
        return Proposal(
            groups=fallback.groups,
            planner=f"{planner.name}->rules",
            model=getattr(getattr(planner, "model", None), "name", None),
            usage=failure.usage,
            notes=said or [f"fell back to rules: {failure}"],
            fell_back=True,
            failed_answer=failure.failed_answer,
        )


class PlanningCounts(BaseModel):
    """How a plan's sections were planned: by the model (some in a repair turn, some from
    the cache) or by the rules planner after the model failed; how many sections the
    validator split, and the tokens the model calls cost (cached sections cost none)."""

    model_config = ConfigDict(frozen=True)

    sections: int = 0
    by_model: int = 0
    repaired: int = 0
    cached: int = 0
    fell_back: int = 0
    split: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def describe(self) -> str:
        """One line: '5 section(s): 3 by the model (1 repaired by a second turn, 1 cached),
        2 fell back to rules; 1 split by the validator; 900 in / 40 out tokens'."""
        extras = [f"{self.repaired} repaired by a second turn"] if self.repaired else []
        extras += [f"{self.cached} cached"] if self.cached else []
        detail = f" ({', '.join(extras)})" if extras else ""
        line = f"{self.sections} section(s): {self.by_model} by the model{detail}"
        if self.fell_back:
            line += f", {self.fell_back} fell back to rules"
        if self.split:
            line += f"; {self.split} split by the validator"
        if self.input_tokens or self.output_tokens:
            line += f"; {self.input_tokens:,} in / {self.output_tokens:,} out tokens"
        return line


def planning_counts(plan: PlanVersion) -> PlanningCounts:
    """Count a plan's sections by how they were planned, and the tokens spent on them."""
    sections = plan.sections
    by_model = [s for s in sections if s.planner != "rules" and not s.issues.fell_back_to_rules]
    spent = [s for s in sections if not s.cached]
    return PlanningCounts(
        sections=len(sections),
        by_model=len(by_model),
        repaired=sum(1 for s in by_model if s.issues.repaired),
        cached=sum(1 for s in by_model if s.cached),
        fell_back=sum(1 for s in sections if s.issues.fell_back_to_rules),
        split=sum(1 for s in sections if s.issues.split_chunks),
        input_tokens=sum(s.usage.input_tokens for s in spent),
        output_tokens=sum(s.usage.output_tokens for s in spent),
    )


def require_model_plans(plan: PlanVersion) -> None:
    """Raise NoModelPlan (a PlanningError) when the model was asked to plan and planned no
    section: such a plan is the rules plan under another name, not worth a new version."""
    if plan.strategy.planner != "llm" or not plan.sections:
        return
    counts = planning_counts(plan)
    if counts.by_model:
        return
    first = next((s.issues.reason for s in plan.sections if s.issues.reason), None)
    raise NoModelPlan(
        f"every one of {len(plan.sections)} section(s) fell back to rules"
        + (f" (first: {first})" if first else "")
        + "; no new plan version stored",
        counts,
    )
