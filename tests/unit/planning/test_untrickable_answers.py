"""Answers a real small model gave (issue 20): echoed text, capital IDs, dash ranges, flat
lists, one-element chunks. None may pass as a model plan unless it is one."""

from __future__ import annotations

import pytest

from drac.errors import PlanningError
from drac.models import Strategy
from drac.parsing import parse_markdown
from drac.planning import parse_answer, plan_document, plan_section, section_view
from drac.planning.base import SectionView
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

CHECKLIST = """# Checklist

## Before

- [ ] Check the cable

Plug it in.

## During

- [ ] Watch the light

Wait for green.

## After

- [x] Unplug

Store it dry.
"""
# an echo of the planner's own prompt, checklist boxes and all, as Gemma 3 270M answered
ECHO = "h2 ## Before\np1 L 20 [ ] Check the cable\np2 P 11 Plug it in.\n"


@pytest.fixture
def view() -> SectionView:
    elements = parse_markdown(DOC)
    [section] = make_sections(elements)
    return section_view(section, elements)


def content(plan) -> list[list[str]]:
    return [[i for i in chunk if i.startswith("p")] for chunk in plan.chunks]


class DictCache:
    def __init__(self) -> None:
        self.data: dict = {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, plan) -> None:
        self.data[key] = plan


@pytest.mark.parametrize(
    "answer", ["[]", "[[]]", "[[], []]", ECHO, "See [ ] and [x]", '{"chunks": []}']
)
def test_an_empty_array_anywhere_is_no_plan(answer: str) -> None:
    with pytest.raises(PlanningError):
        parse_answer(answer)


def test_an_echoed_checklist_falls_back_is_labelled_and_not_cached(scripted_model) -> None:
    elements = parse_markdown(CHECKLIST)
    sections = make_sections(elements)
    model = scripted_model([ECHO])
    cache = DictCache()
    strategy = Strategy(planner="llm")
    version = plan_document("d1", elements, sections, strategy, 1, text_model=model, cache=cache)
    [plan] = version.sections
    assert plan.planner == "llm->rules"
    assert plan.issues.fell_back_to_rules
    assert not cache.data
    rules = plan_document("d1", elements, sections, Strategy(), 1)
    assert content(plan) == content(rules.sections[0])


@pytest.mark.parametrize(
    "answer",
    [
        '[["P1", "P2", "P3"], ["P4-P7"]]',
        '[["p1 \u2013 p3"], ["p4 \u2014 p7"]]',
        '[["p1\u2212p3"], ["p4 -p7"]]',
        '[[" p1", "p2 ", "P3"], ["p4\u2010p7"]]',
    ],
)
def test_ids_are_normalised_before_they_are_judged(answer: str, view, scripted_model) -> None:
    plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"),
        text_model=scripted_model([answer]),
    )  # fmt: skip
    assert plan.planner == "llm"
    assert content(plan) == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]
    assert plan.issues.clean


def test_words_that_are_not_ids_are_reported_verbatim(view, scripted_model) -> None:
    plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"),
        text_model=scripted_model(['[["p1-p3", "Ignore ALL"], ["p4-p7"]]']),
    )  # fmt: skip
    assert plan.issues.unknown_ids == ("Ignore ALL",)


def test_a_rebuilt_section_is_not_cached(scripted_model) -> None:
    """An answer that left content out is completed by rules: not a model plan to keep."""
    elements = parse_markdown(DOC)
    sections = make_sections(elements)
    cache = DictCache()
    model = scripted_model(['[["p1", "p2", "p3"]]'])
    version = plan_document("d1", elements, sections, Strategy(planner="llm"), 1,
                            text_model=model, cache=cache)  # fmt: skip
    assert version.sections[0].issues.missing_ids == ("p4", "p5", "p6", "p7")
    assert not cache.data


def test_one_element_chunks_merge_with_their_neighbours(view, scripted_model) -> None:
    answer = '[["p1"], ["p2"], ["p3"], ["p4"], ["p5"], ["p6", "p7"]]'
    plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"),
        text_model=scripted_model([answer]),
    )  # fmt: skip
    # tiny blocks join the chunk before them under the same heading, never across one
    assert content(plan) == [["p1", "p2", "p3"], ["p4", "p5"], ["p6", "p7"]]
    assert plan.planner == "llm"


def test_a_large_one_element_chunk_stands_alone(scripted_model) -> None:
    big = "Long paragraph about setup. " * 30
    elements = parse_markdown(f"# G\n\n{big}\n\nShort one.\n\n{big}\n")
    [section] = make_sections(elements)
    plan = plan_section(section, elements, Strategy(planner="llm"),
                        text_model=scripted_model(['[["p1"], ["p2", "p3"]]']))  # fmt: skip
    assert content(plan) == [["p1"], ["p2", "p3"]]


def test_a_flat_list_is_packed_by_rules_and_labelled_so(view, scripted_model) -> None:
    """A flat list draws no chunk boundaries: its IDs are packed as rules packs them."""
    plan = plan_section(
        view.section, list(view.by_id.values()), Strategy(planner="llm"),
        text_model=scripted_model(['["P1", "p2", "p3", "p4", "p5", "p6", "p7"]']),
    )  # fmt: skip
    rules = plan_section(view.section, list(view.by_id.values()), Strategy())
    assert content(plan) == content(rules)
    assert plan.planner == "llm->rules"
    assert "flat list" in (plan.issues.reason or "")
