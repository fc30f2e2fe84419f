"""Sections of a planning run, stored one per object with the elements each needs, and the
planning of one section into arrays of element IDs."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.errors import retried_by_step_functions
from drac.aws.runtime import Runtime
from drac.aws.stages.fanout import MAX_ITEMS, ItemGroup, item_groups
from drac.errors import DocumentError
from drac.models import Element, Section, Strategy
from drac.planning import plan_section
from drac.sectioning import make_sections


class Sectioning(BaseModel):
    """A planning run's sections: how many, the groups to fan out over, and the run id."""

    run_id: str
    section_count: int
    groups: list[ItemGroup]


class SectionInput(BaseModel):
    """The Section state's payload (re-plan path: sections come from stored elements)."""

    document_id: str
    strategy: Strategy
    run_id: str


class SectionItem(BaseModel):
    """One item of the PlanSections map."""

    document_id: str
    strategy: Strategy
    run_id: str
    index: int


class PlanSectionInput(BaseModel):
    """The PlanSection state's payload (the map item under `input`)."""

    input: SectionItem


class PlannedSection(BaseModel):
    """A planned section's index and chunk count."""

    index: int
    chunks: int


class StoredSection(BaseModel):
    """A section with its own elements and its ancestor headings: all planning it needs."""

    section: Section
    elements: list[Element]


def store_sections(
    rt: Runtime,
    document_id: str,
    run_id: str,
    sections: Sequence[Section],
    elements: Sequence[Element],
) -> Sectioning:
    """Store each section with the elements it names and its heading chain.

    Raises DocumentError beyond the fan-out limit, naming the setting to raise.
    """
    if len(sections) > MAX_ITEMS:
        raise DocumentError(
            f"{len(sections)} planner sections, more than {MAX_ITEMS}: raise the strategy's"
            " section_budget"
        )
    by_id = {element.id: element for element in elements}
    for index, section in enumerate(sections):
        wanted = [*section.heading_chain, *section.element_ids]
        own = [by_id[element_id] for element_id in dict.fromkeys(wanted)]
        body = StoredSection(section=section, elements=own)
        rt.artifacts.put_text(keys.section_key(document_id, run_id, index), body.model_dump_json())
    return Sectioning(run_id=run_id, section_count=len(sections), groups=item_groups(len(sections)))


def section_document(rt: Runtime, event: SectionInput) -> Sectioning:
    """Rebuild sections from the stored elements for the strategy's section budget.

    Raises KeyError when the document has no stored elements.
    """
    elements = rt.elements.get_elements(event.document_id)
    if not elements:
        raise KeyError(f"document {event.document_id} has no stored elements")
    sections = make_sections(elements, event.strategy.section_budget)
    return store_sections(rt, event.document_id, event.run_id, sections, elements)


def plan_one_section(rt: Runtime, event: PlanSectionInput) -> PlannedSection:
    """Plan one section (rules, or the LLM planner) from its stored object; store the plan.

    Raises ModelThrottled or TransientError when the planner model may succeed later.
    """
    item = event.input
    stored = StoredSection.model_validate_json(
        rt.artifacts.get_text(keys.section_key(item.document_id, item.run_id, item.index))
    )
    with retried_by_step_functions():
        plan = plan_section(
            stored.section,
            stored.elements,
            item.strategy,
            text_model=(
                rt.text_model(item.strategy.planner_model)
                if item.strategy.planner == "llm"
                else None
            ),
            cache=rt.plan_cache,
            ledger=rt.ledger,
            document_id=item.document_id,
        )
    key = keys.section_plan_key(item.document_id, item.run_id, item.index)
    rt.artifacts.put_text(key, plan.model_dump_json())
    return PlannedSection(index=item.index, chunks=len(plan.chunks))
