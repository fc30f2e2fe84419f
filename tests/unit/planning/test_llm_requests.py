"""What the LLM planner asks for (issue 20): the answer's schema, a token cap sized to the
section, the structured prompt where the backend enforces the schema, cut-off answers named."""

from __future__ import annotations

import json

import pytest

from drac.models import Strategy, TokenUsage
from drac.parsing import parse_markdown
from drac.planning import LlmPlanner, plan_section, section_view
from drac.planning.base import SectionView
from drac.planning.llm import SYSTEM_PROMPT
from drac.planning.plan_format import answer_token_cap, plan_grammar, plan_schema
from drac.ports import MemoryLedger, ModelReply
from drac.sectioning import make_sections
from tests.unit.planning.test_untrickable_answers import DOC, content


@pytest.fixture
def view() -> SectionView:
    elements = parse_markdown(DOC)
    [section] = make_sections(elements)
    return section_view(section, elements)


def test_the_schema_and_grammar_admit_only_break_ids_of_the_section_and_the_cap_fits(
    view, scripted_model
) -> None:
    model = scripted_model(['{"b":["p4"]}'])
    proposal = LlmPlanner(model, MemoryLedger()).propose(view, Strategy(), "d1")
    [request] = model.requests
    ids = ["p1", "p2", "p3", "p4", "p5", "p6", "p7"]
    assert request["schema"] == {
        "type": "object",
        "properties": {"b": {"type": "array", "items": {"type": "string", "enum": ids[1:]},
                             "maxItems": 6}},
        "required": ["b"],
        "additionalProperties": False,
    }  # fmt: skip
    assert request["grammar"] == plan_grammar(ids)
    assert request["max_tokens"] == 16 + 11 * 7 == answer_token_cap(ids, 1024)
    assert proposal.groups == [ids[:3], ids[3:]]


def test_the_cap_never_exceeds_the_models_ceiling() -> None:
    ids = [f"p{n}" for n in range(1, 61)]  # 9 of 2 characters, 51 of 3
    assert answer_token_cap(ids, 1024) == 16 + 9 * 11 + 51 * 12
    assert answer_token_cap(ids * 2, 1024) == 1024
    assert answer_token_cap(ids, 200) == 200


def test_the_cap_holds_the_longest_answer_the_grammar_admits() -> None:
    """Every ID a break: the answer's characters bound its tokens (a token has at least one)."""
    for ids in (["p1", "p2"], [f"p{n}" for n in range(1, 400)], [f"p{n}.{n}" for n in range(90)]):
        longest = '{"b":[' + ",".join(f'"{i}"' for i in ids[1:]) + "]}"
        assert len(longest) <= answer_token_cap(ids, 10**6)
        pretty = json.dumps({"b": ids[1:]}, indent=2)  # a schema's answer, pretty-printed
        assert len(pretty) <= answer_token_cap(ids, 10**6)


def test_the_prompt_names_the_break_format_for_every_backend(view, scripted_model) -> None:
    plain = scripted_model(['{"b":[]}'])
    LlmPlanner(plain, MemoryLedger()).propose(view, Strategy(), "d1")
    structured = scripted_model(['{"b":[]}'], structured_output=True)
    LlmPlanner(structured, MemoryLedger()).propose(view, Strategy(), "d1")
    assert (
        plain.calls[0][0] == structured.calls[0][0] == SYSTEM_PROMPT.format(target=1100, limit=2000)
    )
    assert '{"b":[IDs]}' in plain.calls[0][0]


def test_a_cut_off_answer_is_named_so_not_invalid_json(view, scripted_model) -> None:
    cut = ModelReply(text='[["p1", "p2", "p3"], ["p4", "p', model="m", finish_reason="length",
                     usage=TokenUsage(input_tokens=50, output_tokens=90))  # fmt: skip
    ledger = MemoryLedger()
    plan = plan_section(view.section, list(view.by_id.values()), Strategy(planner="llm"),
                        text_model=scripted_model([cut]), ledger=ledger)  # fmt: skip
    assert plan.planner == "llm->rules"
    assert "stopped at the token cap (93 tokens)" in (plan.issues.reason or "")
    assert "not valid JSON" not in (plan.issues.reason or "")
    assert [e.outcome for e in ledger.entries] == ["cut off", "cut off"]


def test_a_complete_plan_before_the_cut_is_used(view, scripted_model) -> None:
    """A model that closes its JSON and then rambles to the cap still planned the section."""
    rambling = ModelReply(text='[["p1-p3"], ["p4-p7"]]\n\nNow let me explain why I', model="m",
                          finish_reason="length")  # fmt: skip
    plan = plan_section(view.section, list(view.by_id.values()), Strategy(planner="llm"),
                        text_model=scripted_model([rambling]))  # fmt: skip
    assert plan.planner == "llm"
    assert content(plan) == [["p1", "p2", "p3"], ["p4", "p5", "p6", "p7"]]


def test_plan_schema_of_one_id_is_still_a_schema() -> None:
    breaks = plan_schema(["p1"])["properties"]["b"]
    assert breaks == {"type": "array", "items": {}, "maxItems": 0}


def test_an_unreachable_server_stops_planning_instead_of_falling_back(scripted_model) -> None:
    from drac.errors import ModelUnreachable
    from drac.planning import plan_document
    from drac.planning.errors import ModelServerUnreachable

    elements = parse_markdown(DOC)
    sections = make_sections(elements, 3)
    assert len(sections) >= 2
    model = scripted_model([ModelUnreachable("model server unreachable: refused")])
    ledger = MemoryLedger()
    with pytest.raises(ModelServerUnreachable, match="refused"):
        plan_document("d1", elements, sections, Strategy(planner="llm"), 1,
                      text_model=model, ledger=ledger)  # fmt: skip
    assert len(model.calls) == 1  # the first section, not every one in turn
    assert ledger.entries[0].outcome.startswith("error: model server unreachable")


def test_the_repair_turn_after_a_cut_off_shows_the_cut_answer(view, scripted_model) -> None:
    cut = ModelReply(text='[["p1", "p2"', model="m", finish_reason="length")
    model = scripted_model([cut, '[["p1-p3"], ["p4-p7"]]'])
    ledger = MemoryLedger()
    proposal = LlmPlanner(model, ledger).propose(view, Strategy(), "d1")
    assert model.requests[1]["earlier"] == [(model.calls[0][1], '[["p1", "p2"')]
    assert model.calls[1][1].startswith(
        "That answer cannot be used: it stopped at the token cap (93 tokens) before it ended."
    )
    assert proposal.repaired and proposal.groups[0] == ["p1", "p2", "p3"]
    assert [e.outcome for e in ledger.entries] == ["cut off", "repaired"]


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("<details><summary>Setup steps</summary>Plug it in<br>then wait</details>",
         "Setup steps Plug it in then wait"),  # no '<br', no '<details <summary'
        ("Voltage > 5 V and a -> b", "Voltage > 5 V and a -> b"),  # '>' in text is text
        ("> quoted advice\n> more", "quoted advice more"),  # a quote marker is markup
        ("a <b>bold</b> word", "a bold word"),
    ],
)  # fmt: skip
def test_previews_drop_html_tags_whole_and_keep_a_greater_than_sign(
    markdown: str, shown: str
) -> None:
    from drac.planning.llm import preview

    [element] = parse_markdown(markdown)
    assert preview(element, 120) == shown


def test_a_strategys_planner_model_chooses_the_model(monkeypatch) -> None:
    from drac.cli.models_setup import build_models
    from drac.clients.openai_compat import OpenAICompatTextModel

    monkeypatch.setenv("DRAC_MODEL", "openai")
    monkeypatch.setenv("DRAC_OPENAI_MODEL", "gemma3:27b")
    _, chosen = build_models(None, Strategy(planner="llm", planner_model="qwen3:8b"))
    _, default = build_models(None, Strategy(planner="llm"))
    assert isinstance(chosen, OpenAICompatTextModel) and isinstance(default, OpenAICompatTextModel)
    assert (chosen.model, default.model) == ("qwen3:8b", "gemma3:27b")
