"""Failure is visible (issue 20): warnings say each thing once and quote the answer, the raw
answer is kept, a failed call is still counted, sections are counted by how they were planned,
and a plan of which the model planned nothing is refused."""

from __future__ import annotations

import pytest

from drac.errors import ModelCallError, PlanningError
from drac.models import Strategy
from drac.parsing import parse_markdown
from drac.planning import (
    PlanningCounts,
    plan_document,
    plan_section,
    planning_counts,
    require_model_plans,
    section_view,
)
from drac.ports import MemoryLedger
from drac.sectioning import make_sections
from tests.unit.planning.test_untrickable_answers import DOC


def _section_plan(model, ledger=None):
    elements = parse_markdown(DOC)
    [section] = make_sections(elements)
    view = section_view(section, elements)
    return plan_section(view.section, elements, Strategy(planner="llm"), text_model=model,
                        ledger=ledger or MemoryLedger())  # fmt: skip


def test_a_fallback_reason_says_each_thing_once_and_quotes_the_answers(scripted_model) -> None:
    plan = _section_plan(scripted_model(["Sure! Here are the chunks you asked", "[ ] p1"]))
    assert plan.issues.reason == (
        "answer 'Sure! Here are the chunks you asked' unusable: answer holds no JSON array; "
        "answer '[ ] p1' unusable: answer is not a plan: an empty array; fell back to rules"
    )
    assert plan.issues.failed_answer == "[ ] p1"  # the last unusable answer, for drac show


def test_the_kept_answer_is_truncated(scripted_model) -> None:
    plan = _section_plan(scripted_model(["blah " * 1000]))
    assert plan.issues.failed_answer == ("blah " * 1000)[:500]


def test_a_failed_call_is_still_counted_in_the_ledger(scripted_model) -> None:
    ledger = MemoryLedger()
    model = scripted_model([ModelCallError("no answer within 600 s (DRAC_MODEL_TIMEOUT_S)")])
    plan = _section_plan(model, ledger)
    [entry] = ledger.entries
    system, prompt = model.calls[0]
    assert entry.input_tokens == -(-(len(system) + len(prompt)) // 4) > 0
    assert entry.latency_ms > 0
    assert entry.outcome.startswith("error: no answer within 600 s (DRAC_MODEL_TIMEOUT_S)")
    assert entry.outcome.endswith("(input tokens estimated)")
    assert plan.issues.reason == (
        "fell back to rules: model call failed: no answer within 600 s (DRAC_MODEL_TIMEOUT_S)"
    )


def test_sections_are_counted_by_how_they_were_planned(scripted_model) -> None:
    elements = parse_markdown(DOC)
    sections = make_sections(elements, 3)  # s1: p1-p3, s2: p4-p5, s3: p6-p7
    answers = ["nonsense", '[["p1-p3"]]', '[["p4", "p5"]]', '[["p6", "p7"]]']  # s1 repaired
    plan = plan_document("d1", elements, sections, Strategy(planner="llm"), 1,
                         text_model=scripted_model(answers))  # fmt: skip
    counts = planning_counts(plan)
    spent = sum(s.usage.input_tokens for s in plan.sections)
    assert spent > 0
    assert counts == PlanningCounts(sections=3, by_model=3, repaired=1, cached=0, fell_back=0,
                                    split=0, input_tokens=spent, output_tokens=10)  # fmt: skip
    assert counts.describe() == (
        f"3 section(s): 3 by the model (1 repaired by a second turn); {spent:,} in / 10 out tokens"
    )
    require_model_plans(plan)  # the model planned: nothing to refuse


def test_a_validator_split_is_named_apart_from_a_repair_turn() -> None:
    counts = PlanningCounts(sections=2, by_model=2, repaired=0, split=1)
    assert counts.describe() == "2 section(s): 2 by the model; 1 split by the validator"
    assert "repaired" not in counts.describe()


def test_a_plan_the_model_did_not_make_is_refused(scripted_model) -> None:
    elements = parse_markdown(DOC)
    sections = make_sections(elements, 3)
    plan = plan_document("d1", elements, sections, Strategy(planner="llm"), 1,
                         text_model=scripted_model(["no"]))  # fmt: skip
    counts = planning_counts(plan)
    assert (counts.by_model, counts.fell_back) == (0, 3)
    assert counts.describe().startswith("3 section(s): 0 by the model, 3 fell back to rules; ")
    with pytest.raises(PlanningError, match=r"every one of 3 section\(s\) fell back to rules"):
        require_model_plans(plan)
    require_model_plans(plan_document("d1", elements, sections, Strategy(), 1))  # rules: fine
