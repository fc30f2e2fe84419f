"""Chunk planning by element IDs: planners propose, code validates."""

from drac.planning.answer import compress_ranges, expand_ranges, parse_answer
from drac.planning.base import Planner, Proposal, SectionView, section_view
from drac.planning.llm import LlmPlanner, section_prompt
from drac.planning.registry import PLANNERS
from drac.planning.rules import RulesPlanner
from drac.planning.service import (
    PlanningCounts,
    cache_key,
    plan_document,
    plan_section,
    planner_for,
    planning_counts,
    require_model_plans,
)
from drac.planning.validate import validate

__all__ = [
    "PLANNERS",
    "LlmPlanner",
    "Planner",
    "PlanningCounts",
    "Proposal",
    "RulesPlanner",
    "SectionView",
    "cache_key",
    "compress_ranges",
    "expand_ranges",
    "parse_answer",
    "plan_document",
    "plan_section",
    "planner_for",
    "planning_counts",
    "require_model_plans",
    "section_prompt",
    "section_view",
    "validate",
]
