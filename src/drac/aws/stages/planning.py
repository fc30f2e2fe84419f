"""Planning stages: cut a document into sections, plan one section into arrays of element IDs."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.errors import model_throttling_retried
from drac.aws.runtime import Runtime
from drac.models import Section, Strategy
from drac.planning import plan_section
from drac.sectioning import make_sections

RunId = str | None
"""The planning execution's name (`$$.Execution.Name`; moto leaves it null)."""


class SectionInput(BaseModel):
    """The Section state's payload (re-plan path: no sections given)."""

    document_id: str
    strategy: Strategy
    run_id: RunId


class Sectioning(BaseModel):
    """Where a planning run's sections are and how many there are."""

    sections_key: str
    section_count: int


class SectionItem(BaseModel):
    """One item of the PlanSections map: a section of a planning run."""

    document_id: str
    strategy: Strategy
    sections_key: str
    run_id: RunId
    index: int


class PlanSectionInput(BaseModel):
    """The PlanSection state's payload (the map item under `input`)."""

    input: SectionItem


class PlannedSection(BaseModel):
    """A planned section's index and chunk count."""

    index: int
    chunks: int


def section_document(rt: Runtime, event: SectionInput) -> Sectioning:
    """Rebuild sections from the stored elements for the strategy's section budget.

    Raises KeyError when the document has no stored elements.
    """
    elements = rt.elements.get_elements(event.document_id)
    if not elements:
        raise KeyError(f"document {event.document_id} has no stored elements")
    sections = make_sections(elements, event.strategy.section_budget)
    key = store_sections(rt, event.document_id, str(event.run_id), sections)
    return Sectioning(sections_key=key, section_count=len(sections))


def plan_one_section(rt: Runtime, event: PlanSectionInput) -> PlannedSection:
    """Plan one section (rules, or the LLM planner) and store its validated plan.

    Raises ModelThrottled when Bedrock keeps throttling, so Step Functions backs off and retries.
    """
    item = event.input
    strategy = item.strategy
    sections = json.loads(rt.artifacts.get_text(item.sections_key))
    section = Section.model_validate(sections[item.index])
    elements = rt.elements.get_elements(item.document_id)
    with model_throttling_retried():
        plan = plan_section(
            section,
            elements,
            strategy,
            text_model=rt.text_model() if strategy.planner == "llm" else None,
            cache=rt.plan_cache,
            ledger=rt.ledger,
            document_id=item.document_id,
        )
    key = keys.section_plan_key(item.document_id, str(item.run_id), item.index)
    rt.artifacts.put_text(key, plan.model_dump_json())
    return PlannedSection(index=item.index, chunks=len(plan.chunks))


def store_sections(rt: Runtime, document_id: str, run_id: str, sections: Sequence[Section]) -> str:
    """Store a planning run's sections as a JSON array; return their key."""
    key = keys.sections_key(document_id, run_id)
    rt.artifacts.put_text(key, json.dumps([s.model_dump(mode="json") for s in sections]))
    return key
