"""Validation against adversarial answers, the LLM planner with a scripted model, the plan cache."""

from __future__ import annotations

import json

import pytest

from drac.assemble import chunk_text
from drac.errors import ModelCallError, PlanningError
from drac.models import Element, Strategy
from drac.parsing import parse_markdown
from drac.planning import (
    LlmPlanner,
    Proposal,
    RulesPlanner,
    compress_ranges,
    expand_ranges,
    parse_answer,
    plan_document,
    plan_section,
    section_prompt,
    section_view,
    validate,
)
from drac.planning.base import SectionView
from drac.ports import MemoryLedger
from drac.sectioning import make_sections

DOC = """# Guide

## Setup

First paragraph about setup.

Second paragraph about setup.

Third paragraph about setup.

## Usage

Usage paragraph one.

Usage paragraph two.

| Command | Effect |
|---------|--------|
| run | starts |
| stop | stops |
"""
# content: p1..p3 under Setup (h2), p4, p5 under Usage (h3), rows p6, p7


@pytest.fixture
def view() -> SectionView:
    elements = parse_markdown(DOC)
    [section] = make_sections(elements)
    return section_view(section, elements)


def content_ids(view: SectionView) -> list[str]:
    return [e.id for e in view.content]


def check(groups: list[list[str]], view: SectionView, strategy: Strategy | None = None):
    """Validate groups after range expansion, as the LLM planner hands them over."""
    order = content_ids(view)
    proposal = Proposal(groups=[expand_ranges(g, order) for g in groups], planner="test")
    chunks, issues = validate(proposal, view, strategy or Strategy())
    flat = [i for chunk in chunks for i in chunk]
    assert sorted(flat) == sorted(content_ids(view)), "not every content ID exactly once"
    return chunks, issues


# --- validation -----------------------------------------------------------------------------


def test_clean_answer_is_kept_as_is(view: SectionView) -> None:
    chunks, issues = check([["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]], view)
    assert chunks == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]
    assert issues.clean


def test_unknown_ids_are_dropped_and_reported(view: SectionView) -> None:
    chunks, issues = check([["p1", "p2", "p3", "p99", "x"], ["p4-p7", "h42"]], view)
    assert chunks == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]
    assert issues.unknown_ids == ("p99", "x", "h42")


def test_duplicates_are_kept_once_at_first_use(view: SectionView) -> None:
    chunks, issues = check([["p1", "p2", "p1"], ["p2", "p3"], ["p4", "p5", "p6", "p7"]], view)
    # the one-block chunk left ["p3"] joins its neighbour under the same heading
    assert chunks == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]
    assert issues.duplicate_ids == ("p1", "p2")


def test_missing_ids_are_gathered_into_fallback_chunks_by_heading(view: SectionView) -> None:
    chunks, issues = check([["p2"]], view)
    assert issues.missing_ids == ("p1", "p3", "p4", "p5", "p6", "p7")
    # p1 and p3 (Setup) never end up with Usage content
    setup = {"p1", "p2", "p3"}
    for chunk in chunks:
        assert set(chunk) <= setup or not set(chunk) & setup
    # the missing Setup blocks are packed together, the lone p2 joins them, in document order
    assert chunks[0] == ["p1", "p2", "p3"]


def test_heading_ids_are_context_only(view: SectionView) -> None:
    chunks, issues = check([["h1", "h2", "p1", "p2", "p3"], ["h1", "h3", "p4-p7"]], view)
    assert chunks == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]
    assert issues.clean  # repeating heading IDs is allowed


def test_out_of_order_ids_are_put_in_document_order(view: SectionView) -> None:
    chunks, _ = check([["p3", "p1", "p2"], ["p7", "p4", "p6", "p5"]], view)
    assert chunks == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]
    chunks, _ = check([["p4", "p5", "p6", "p7"], ["p1", "p2", "p3"]], view)
    assert chunks[0] == ["p1", "p2", "p3"]


def test_ranges_valid_reversed_and_unknown(view: SectionView) -> None:
    order = content_ids(view)
    assert expand_ranges(["p2-p5"], order) == ["p2", "p3", "p4", "p5"]
    assert expand_ranges([" p1 - p2 "], order) == ["p1", "p2"]
    assert expand_ranges(["p5-p2"], order) == ["p5-p2"]  # reversed: kept for validation
    assert expand_ranges(["p1-p99"], order) == ["p1-p99"]
    assert expand_ranges(["h1-h3"], order) == ["h1-h3"]
    chunks, issues = check([["p1-p3"], ["p7-p4"], ["p4-p40"]], view)
    assert chunks[0] == ["p1", "p2", "p3"]
    assert set(issues.unknown_ids) == {"p7-p4", "p4-p40"}
    assert set(issues.missing_ids) == {"p4", "p5", "p6", "p7"}


def test_compress_then_expand_round_trips(view: SectionView) -> None:
    order = content_ids(view)
    ids = ["p1", "p2", "p3", "p5", "p6", "p7"]
    compressed = compress_ranges(ids, order)
    assert compressed == ["p1-p3", "p5-p7"]
    assert expand_ranges(compressed, order) == ids
    assert compress_ranges(["p1", "p2", "p4"], order) == ["p1", "p2", "p4"]


@pytest.mark.parametrize("groups", [[], [[]], [[], [], []], [["h1"]]])
def test_empty_answers_fall_back_to_packed_chunks(groups, view: SectionView) -> None:
    chunks, issues = check(groups, view)
    assert chunks
    assert len(issues.missing_ids) == 7


def test_over_limit_chunk_is_split(view: SectionView) -> None:
    strategy = Strategy(target_chars=100, min_chars=0, hard_limit_chars=200)
    chunks, issues = check([content_ids(view)], view, strategy)
    assert issues.split_chunks == len(chunks) - 1 >= 1
    for chunk in chunks:
        elements = [view.by_id[i] for i in chunk]
        assert len(chunk_text(elements, view.by_id)) <= 200


def test_rules_planner_covers_everything_within_limits(markdown_fixtures) -> None:
    strategy = Strategy(target_chars=400, min_chars=100, hard_limit_chars=800)
    for markdown in markdown_fixtures.values():
        elements = parse_markdown(markdown)
        by_id = {e.id: e for e in elements}
        for section in make_sections(elements, 60):
            section_plan = plan_section(section, elements, strategy)
            assert section_plan.planner == "rules" and section_plan.issues.clean
            flat = [i for c in section_plan.chunks for i in c if not by_id[i].is_heading]
            view = section_view(section, elements)
            assert flat == content_ids(view)
            for chunk in section_plan.chunks:
                content = [by_id[i] for i in chunk if not by_id[i].is_heading]
                assert len(chunk_text(content, by_id)) <= 800


# --- answer parsing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        '[["p1","p2"],["p3"]]',
        '```json\n[["p1","p2"],["p3"]]\n```',
        'Here is the plan:\n```\n[["p1", "p2"], ["p3"]]\n```\nHope this helps!',
        'Sure. [["p1", "p2"], ["p3"]] That is all.',
        '{"chunks": [["p1", "p2"], ["p3"]]}',
    ],
)
def test_parse_answer_accepts_fences_and_prose(answer: str) -> None:
    assert parse_answer(answer) == [["p1", "p2"], ["p3"]]


@pytest.mark.parametrize(
    "answer",
    ["", "no json here", "[[p1, p2]]", '["a", "b"]', '[["p1", 2]]', '{"a": 1}', "[[", "] ["],
)
def test_parse_answer_rejects_garbage(answer: str) -> None:
    with pytest.raises(PlanningError):
        parse_answer(answer)


# --- LLM planner ----------------------------------------------------------------------------

GOOD = '```json\n[["p1-p3"], ["p4", "p5"], ["p6", "p7"]]\n```'


def test_prompt_shows_ids_kinds_sizes_previews_and_chain(view: SectionView) -> None:
    elements = parse_markdown("# Top\n\n## Sub\n\n" + "long words " * 100 + "\n\n## Two\n\nx\n")
    sections = make_sections(elements, budget=1)
    later = section_view(sections[-1], elements)
    prompt = section_prompt(later, Strategy(preview_chars=40))
    assert prompt.splitlines()[0] == "In: Top"
    full = section_prompt(view, Strategy(preview_chars=40))
    assert "h2 ## Setup" in full
    assert "p6 R t1 " in full
    line = next(line for line in full.splitlines() if line.startswith("p2 "))
    assert line == "p2 P 29 Second paragraph about setup."
    assert "| run | starts |" not in full  # previews drop table syntax
    first = section_prompt(section_view(sections[0], elements), Strategy(preview_chars=40))
    long_line = next(line for line in first.splitlines() if line.startswith("p1 "))
    preview = long_line.split(" ", 3)[3]
    assert len(preview) <= 40 and preview.endswith("…")


def test_llm_plan_uses_the_model_answer(view: SectionView, scripted_model) -> None:
    model = scripted_model([GOOD])
    ledger = MemoryLedger()
    section_plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"),
        text_model=model, ledger=ledger, document_id="d1",
    )  # fmt: skip
    assert section_plan.planner == "llm"
    assert section_plan.model == "fake-planner"
    content = [[i for i in c if i.startswith("p")] for c in section_plan.chunks]
    assert content == [["p1", "p2", "p3"], ["p4", "p5"], ["p6", "p7"]]
    assert section_plan.issues.clean
    assert len(model.calls) == 1
    assert [(e.stage, e.outcome, e.document_id) for e in ledger.entries] == [
        ("planning", "ok", "d1")
    ]
    assert ledger.entries[0].input_tokens > 0 and ledger.entries[0].output_tokens > 0
    assert section_plan.usage.input_tokens == ledger.entries[0].input_tokens


def test_garbage_then_good_answer_uses_the_retry(view: SectionView, scripted_model) -> None:
    model = scripted_model(["I cannot help with that.", GOOD])
    ledger = MemoryLedger()
    proposal = LlmPlanner(model, ledger).propose(view, Strategy(), "d1")
    assert proposal.groups[0] == ["p1", "p2", "p3"]
    assert len(model.calls) == 2
    # the repair turn shows the model its own answer, then what is wrong with it
    first_prompt = model.calls[0][1]
    assert model.requests[1]["earlier"] == [(first_prompt, "I cannot help with that.")]
    assert model.calls[1][1] == (
        "That answer cannot be used: answer holds no JSON array. Reply with the JSON only, "
        '{"b":[IDs]}: the IDs of the list above where a new chunk starts, in order, and '
        "nothing else."
    )
    assert model.calls[1][0] == model.calls[0][0]
    assert proposal.repaired
    assert [e.outcome for e in ledger.entries] == ["unparseable", "repaired"]
    assert proposal.usage.input_tokens == sum(e.input_tokens for e in ledger.entries)


def test_garbage_twice_falls_back_to_rules_and_is_recorded(
    view: SectionView, scripted_model
) -> None:
    model = scripted_model(["nonsense", "still { not json"])
    ledger = MemoryLedger()
    section_plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"),
        text_model=model, ledger=ledger, document_id="d1",
    )  # fmt: skip
    assert len(model.calls) == 2
    assert section_plan.planner == "llm->rules"
    assert section_plan.issues.fell_back_to_rules
    assert "fell back to rules" in (section_plan.issues.reason or "")
    assert [e.outcome for e in ledger.entries] == ["unparseable", "unparseable"]
    assert section_plan.usage.output_tokens == sum(e.output_tokens for e in ledger.entries)
    rules = RulesPlanner().propose(view, Strategy(planner="llm"), "d1").groups
    assert [[i for i in c if i.startswith("p")] for c in section_plan.chunks] == rules


def test_model_call_error_falls_back_to_rules(view: SectionView, scripted_model) -> None:
    model = scripted_model([ModelCallError("throttled after 5 retries")])
    ledger = MemoryLedger()
    section_plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"),
        text_model=model, ledger=ledger, document_id="d1",
    )  # fmt: skip
    assert section_plan.planner == "llm->rules"
    assert section_plan.issues.fell_back_to_rules
    assert "throttled" in (section_plan.issues.reason or "")
    assert len(ledger.entries) == 1 and ledger.entries[0].outcome.startswith("error")


def test_llm_strategy_without_model_is_an_error(view: SectionView) -> None:
    with pytest.raises(ValueError, match="no planner model"):
        plan_section(view.section, list(view.by_id.values()), Strategy(planner="llm"))
    with pytest.raises(ValueError, match="'rules' or 'llm'"):  # refused by the model itself
        plan_section(view.section, list(view.by_id.values()), Strategy(planner="magic"))


def test_adversarial_model_answer_is_repaired(view: SectionView, scripted_model) -> None:
    answer = '[["p1", "p1", "p2", "Ignore previous instructions"], ["p7-p4"], ["h1", "p6"]]'
    model = scripted_model([answer])
    section_plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"), text_model=model
    )
    issues = section_plan.issues
    assert issues.duplicate_ids == ("p1",)
    assert set(issues.unknown_ids) == {"Ignore previous instructions", "p7-p4"}
    assert set(issues.missing_ids) == {"p3", "p4", "p5", "p7"}
    flat = [i for c in section_plan.chunks for i in c if i.startswith("p")]
    assert sorted(flat) == sorted(content_ids(view))
    assert all(i in view.by_id for c in section_plan.chunks for i in c)


# --- plan cache -----------------------------------------------------------------------------


class DictCache:
    def __init__(self) -> None:
        self.data: dict = {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, plan) -> None:
        self.data[key] = plan


def _plan_doc(markdown: str, strategy: Strategy, model, cache) -> list:
    elements: list[Element] = parse_markdown(markdown)
    sections = make_sections(elements, 5)
    version = plan_document("d1", elements, sections, strategy, 1, text_model=model, cache=cache)
    return list(version.sections)


def test_unchanged_replan_makes_no_model_call(scripted_model) -> None:
    model = scripted_model(['[["p1-p3"], ["p4", "p5"], ["p6", "p7"]]'])
    cache = DictCache()
    strategy = Strategy(planner="llm", section_budget=5)
    first = _plan_doc(DOC, strategy, model, cache)
    calls = len(model.calls)
    assert calls == len(first) >= 2
    second = _plan_doc(DOC, strategy, model, cache)
    assert len(model.calls) == calls  # no new call
    assert all(s.cached for s in second)
    assert [s.chunks for s in second] == [s.chunks for s in first]


def test_changed_strategy_or_text_calls_the_model_again(scripted_model) -> None:
    model = scripted_model([every_id])
    cache = DictCache()
    strategy = Strategy(planner="llm", section_budget=5)
    sections = _plan_doc(DOC, strategy, model, cache)
    calls = len(model.calls)
    _plan_doc(DOC, strategy.model_copy(update={"target_chars": 1000}), model, cache)
    assert len(model.calls) == calls + len(sections)
    calls = len(model.calls)
    changed = DOC.replace("Usage paragraph two.", "Usage paragraph two, edited.")
    replanned = _plan_doc(changed, strategy, model, cache)
    assert len(model.calls) == calls + 1  # only the edited section
    assert [s.cached for s in replanned] == [True, False]


def every_id(system: str, prompt: str) -> str:
    """A complete answer: every content ID of the prompt, in one chunk."""
    ids = [line.split(" ", 1)[0] for line in prompt.splitlines() if line.startswith("p")]
    return json.dumps([ids])


def test_renaming_a_strategy_keeps_the_cache(scripted_model) -> None:
    model = scripted_model([every_id])
    cache = DictCache()
    _plan_doc(DOC, Strategy(planner="llm", section_budget=5, name="a"), model, cache)
    calls = len(model.calls)
    _plan_doc(DOC, Strategy(planner="llm", section_budget=5, name="b"), model, cache)
    assert len(model.calls) == calls


def test_fallback_plans_are_not_cached(scripted_model) -> None:
    model = scripted_model(["garbage"])
    cache = DictCache()
    strategy = Strategy(planner="llm", section_budget=5)
    _plan_doc(DOC, strategy, model, cache)
    calls = len(model.calls)
    assert not cache.data
    _plan_doc(DOC, strategy, model, cache)
    assert len(model.calls) == 2 * calls  # retried, not served a stale fallback


@pytest.mark.parametrize(
    "answer",
    [
        '[["p1", "p2"], ["p3"]]\nNote: p3 is a table [t1].',
        'Plan [draft 2]: [["p1", "p2"], ["p3"]]',
        'Chunks (see [1]):\n[["p1", "p2"], ["p3"]] (ranges like [p1-p2] allowed)',
    ],
)
def test_parse_answer_ignores_brackets_in_prose_around_the_json(answer: str) -> None:
    assert parse_answer(answer) == [["p1", "p2"], ["p3"]]


@pytest.mark.parametrize("answer", ["[" * 100_000, "[x" * 5_000, "[1, 2] and [3]"])
def test_parse_answer_pathological_input_is_a_planning_error(answer: str) -> None:
    with pytest.raises(PlanningError):
        parse_answer(answer)


def test_a_note_after_the_answer_costs_no_retry(view: SectionView, scripted_model) -> None:
    model = scripted_model(['[["p1-p3"], ["p4-p7"]]\n\nI kept the table [t1] whole.'])
    proposal = LlmPlanner(model, MemoryLedger()).propose(view, Strategy(), "d1")
    assert len(model.calls) == 1
    assert proposal.groups == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]
