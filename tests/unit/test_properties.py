"""The method's invariants as properties, for arbitrary Markdown and arbitrary planner answers.

For any document and any answer a planner model may give: every content element lands in
exactly one chunk, every chunk body line is verbatim source text and every breadcrumb part a
stored heading title, no chunk exceeds the strategy's hard limit, and ids are deterministic.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drac.assemble import BREADCRUMB_SEPARATOR, assemble_chunks
from drac.models import Chunk, DocumentRecord, Element, ParseConfig, Strategy, TokenUsage
from drac.parsing import parse_markdown
from drac.planning import plan_document
from drac.ports import ModelReply, TextModel
from drac.sectioning import make_sections

# --- arbitrary Markdown -----------------------------------------------------------------------

_TEXT = st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs"))
words = st.text(_TEXT, min_size=1, max_size=30).map(str.strip).filter(bool)
lines = st.lists(words, min_size=1, max_size=3).map(" ".join)
# Lines made of Markdown's own punctuation, to reach the odd corners of its grammar.
noise = st.text(st.sampled_from("#-*+>|=`~<!/ \t1.[]:_\\()xyz"), min_size=1, max_size=40)


@st.composite
def pipe_table(draw: st.DrawFn) -> str:
    columns = draw(st.integers(1, 4))

    def row() -> str:
        cells = draw(st.lists(words.map(lambda w: w.replace("|", "/")), min_size=columns,
                              max_size=columns))
        return "| " + " | ".join(cells) + " |"

    rows = [row() for _ in range(draw(st.integers(0, 6)))]
    return "\n".join([row(), "|" + "---|" * columns, *rows])


@st.composite
def grid_table(draw: st.DrawFn) -> str:
    border = "+" + "---+" * draw(st.integers(1, 3))
    rows = draw(st.lists(words.map(lambda w: f"| {w} |"), min_size=1, max_size=4))
    header_rule = border.replace("-", "=") if draw(st.booleans()) else border
    lines_ = [border, rows[0], header_rule]
    for row in rows[1:]:
        lines_ += [row, border]
    return "\n".join(lines_)


@st.composite
def nested_list(draw: st.DrawFn) -> str:
    marker = draw(st.sampled_from(["-", "*", "1."]))
    items = draw(st.lists(st.tuples(st.integers(0, 3), lines), min_size=1, max_size=6))
    return "\n".join(f"{'  ' * depth}{marker} {text}" for depth, text in items)


blocks = st.one_of(
    st.tuples(st.integers(1, 6), words).map(lambda t: f"{'#' * t[0]} {t[1]}"),
    st.tuples(words, st.sampled_from(["===", "---"])).map("\n".join),
    st.lists(lines, min_size=1, max_size=4).map("\n".join),
    st.text(st.sampled_from("abcdefghij"), min_size=1300, max_size=2600),  # one long word
    st.lists(words, min_size=200, max_size=400).map(" ".join),  # long text, few sentences
    nested_list(),
    st.lists(lines, max_size=4).map(lambda body: "```\n# not a heading\n" + "\n".join(body)
                                    + "\n```"),
    pipe_table(),
    grid_table(),
    st.integers(1, 40).map(lambda page: f"<!-- Page {page} -->"),
    lines.map(lambda text: f"> {text}"),
    noise,
)


@st.composite
def markdown(draw: st.DrawFn) -> str:
    parts = draw(st.lists(blocks, min_size=1, max_size=12))
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(["\n\n", "\n\n", "\n", "\n\n\n"])) + part
    return out + draw(st.sampled_from(["", "\n"]))


STRATEGIES = [
    Strategy(),
    Strategy(name="fine", target_chars=600, min_chars=300, hard_limit_chars=1500),
    Strategy(name="tiny", target_chars=300, min_chars=100, hard_limit_chars=700, max_blocks=3,
             section_budget=5),
]


def parse_config(strategy: Strategy) -> ParseConfig:
    """Elements small enough to fit the hard limit beside a breadcrumb (as ingest does)."""
    return ParseConfig(max_element_chars=max(100, min(1200, strategy.hard_limit_chars - 500)))


# --- arbitrary planner answers ----------------------------------------------------------------

_PROMPT_ID = re.compile(r"^(p[\d.]+|h\d+) ", re.MULTILINE)


def answers(ids: list[str]) -> st.SearchStrategy[str]:
    """Answers a model might give for a section showing `ids`: any mix of its content and
    heading ids, unknown ids, duplicates and ranges, or no JSON at all."""
    content = [i for i in ids if i.startswith("p")]
    items = [st.sampled_from(["p9999", "h0", "p1.99", "", "DROP TABLE", "p3-p1"])]
    if ids:
        items.append(st.sampled_from(ids))
    if content:
        items.append(st.tuples(st.sampled_from(content), st.sampled_from(content))
                     .map(lambda pair: f"{pair[0]}-{pair[1]}"))
    groups = st.lists(st.lists(st.one_of(*items), max_size=12), max_size=8)
    return st.one_of(
        groups.map(json.dumps),
        groups.map(lambda g: f"Here is the plan:\n```json\n{json.dumps(g)}\n```"),
        st.just("I cannot plan this section."),
    )


class DrawingModel(TextModel):
    """A planner model whose every answer hypothesis draws, given the ids in the prompt."""

    name = "drawn"

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def complete(
        self, system: str, prompt: str, max_tokens: int = 2048, **_asked: Any
    ) -> ModelReply:
        text = self.data.draw(answers(_PROMPT_ID.findall(prompt)))
        return ModelReply(text=text, model=self.name, usage=TokenUsage(), latency_ms=0.0)


# --- the invariants ---------------------------------------------------------------------------


def chunks_of(source: str, strategy: Strategy, model: TextModel | None) -> list[Chunk]:
    elements = parse_markdown(source, parse_config(strategy))
    sections = make_sections(elements, strategy.section_budget)
    plan = plan_document("d1", elements, sections, strategy, version=1, text_model=model)
    record = DocumentRecord(document_id="d1", source="doc.md", sha256="0" * 64)
    return assemble_chunks(record, elements, plan)


def check_invariants(source: str, strategy: Strategy, chunks: list[Chunk]) -> None:
    elements = parse_markdown(source, parse_config(strategy))
    by_id = {element.id: element for element in elements}
    content = [element.id for element in elements if not element.is_heading]
    placed = [i for chunk in chunks for i in chunk.element_ids if not by_id[i].is_heading]
    assert sorted(placed) == sorted(content), "a content element is missing or repeated"
    titles = {element.title for element in elements if element.is_heading}
    for chunk in chunks:
        assert len(chunk.text) <= strategy.hard_limit_chars
        check_breadcrumb(chunk.breadcrumb, titles)
        body = chunk.text.removeprefix(chunk.breadcrumb + "\n\n")
        for line in body.split("\n"):
            assert line in source, f"not verbatim: {line!r}"


def check_breadcrumb(breadcrumb: str, titles: set[str]) -> None:
    if not breadcrumb:
        return
    parts = breadcrumb.split(BREADCRUMB_SEPARATOR)
    if breadcrumb.endswith("…") and parts[-1] not in titles:
        parts = parts[:-1]  # cut at the breadcrumb's length limit
        assert len(breadcrumb) == 300
    for part in parts:
        assert part in titles or part == "…", f"not a heading title: {part!r}"


# No example database: runs stay reproducible from the seed and leave no .hypothesis folder.
FAST = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@FAST
@given(markdown(), st.sampled_from(STRATEGIES))
def test_rules_planner_chunks_keep_the_invariants(source: str, strategy: Strategy) -> None:
    check_invariants(source, strategy, chunks_of(source, strategy, None))


@FAST
@given(markdown(), st.sampled_from(STRATEGIES), st.data())
def test_any_planner_answer_is_repaired_into_sound_chunks(
    source: str, strategy: Strategy, data: st.DataObject
) -> None:
    llm = strategy.model_copy(update={"planner": "llm"})
    check_invariants(source, llm, chunks_of(source, llm, DrawingModel(data)))


@FAST
@given(markdown(), st.sampled_from(STRATEGIES))
def test_ids_are_deterministic(source: str, strategy: Strategy) -> None:
    first: list[Element] = parse_markdown(source, parse_config(strategy))
    assert parse_markdown(source, parse_config(strategy)) == first
    assert len({element.id for element in first}) == len(first)
    assert all(re.fullmatch(r"h\d+|p\d+(\.\d+)?", element.id) for element in first)
    assert all(element.text and element.text in source for element in first)
    again = chunks_of(source, strategy, None)
    assert [c.chunk_id for c in again] == [c.chunk_id for c in chunks_of(source, strategy, None)]
