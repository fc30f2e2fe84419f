"""make_sections: budget, recursive heading splits, runs without headings, tables, chains."""

from __future__ import annotations

import pytest

from drac.models import Element, ElementKind, Section
from drac.parsing import parse_markdown
from drac.sectioning import make_sections


def paragraphs(count: int, prefix: str = "Paragraph") -> str:
    return "".join(f"{prefix} {i} text.\n\n" for i in range(count))


def content_ids(section: Section, elements: list[Element]) -> list[str]:
    by_id = {e.id: e for e in elements}
    return [i for i in section.element_ids if not by_id[i].is_heading]


def assert_partition(sections: list[Section], elements: list[Element]) -> None:
    """Every element in exactly one section, sections in document order."""
    flat = [i for section in sections for i in section.element_ids]
    assert flat == [e.id for e in elements]


def test_within_budget_is_one_section() -> None:
    elements = parse_markdown("# A\n\n" + paragraphs(10) + "## B\n\n" + paragraphs(10))
    sections = make_sections(elements, budget=20)
    assert len(sections) == 1
    assert sections[0].id == "s1"
    assert sections[0].element_ids == tuple(e.id for e in elements)
    assert sections[0].heading_chain == ()


def test_over_budget_splits_at_the_shallowest_heading_level() -> None:
    markdown = (
        "# Doc\n\nintro\n\n"
        "## A\n\n" + paragraphs(4, "a") + "### A1\n\n" + paragraphs(4, "a1") +
        "## B\n\n" + paragraphs(8, "b") +
        "## C\n\n" + paragraphs(8, "c")
    )  # fmt: skip
    elements = parse_markdown(markdown)
    sections = make_sections(elements, budget=10)
    by_id = {e.id: e for e in elements}
    first_titles = [by_id[s.element_ids[0]].title for s in sections]
    # cut before the level-2 headings, not inside A at its level-3 heading
    assert first_titles == ["Doc", "B", "C"]
    assert all(len(content_ids(s, elements)) <= 10 for s in sections)
    assert_partition(sections, elements)


def test_oversized_subsection_is_split_recursively_at_deeper_level() -> None:
    markdown = (
        "# Doc\n\n"
        "## A\n\n" + "### A1\n\n" + paragraphs(6, "a1") + "### A2\n\n" + paragraphs(6, "a2") +
        "## B\n\n" + paragraphs(3, "b")
    )  # fmt: skip
    elements = parse_markdown(markdown)
    sections = make_sections(elements, budget=8)
    by_id = {e.id: e for e in elements}
    assert all(len(content_ids(s, elements)) <= 8 for s in sections)
    starts = [by_id[s.element_ids[0]].title for s in sections]
    assert starts == ["Doc", "A2", "B"]
    a2 = sections[1]
    assert [by_id[h].title for h in a2.heading_chain] == ["Doc", "A"]
    b = sections[2]
    assert [by_id[h].title for h in b.heading_chain] == ["Doc"]
    assert_partition(sections, elements)


def test_no_headings_is_cut_in_order() -> None:
    elements = parse_markdown(paragraphs(25))
    sections = make_sections(elements, budget=10)
    assert [len(s.element_ids) for s in sections] == [10, 10, 5]
    assert_partition(sections, elements)
    assert all(s.heading_chain == () for s in sections)


def test_tables_are_kept_whole_when_they_fit() -> None:
    table = "| h | v |\n|---|---|\n" + "".join(f"| r{i} | {i} |\n" for i in range(6))
    elements = parse_markdown(paragraphs(8) + table + "\n" + paragraphs(8, "after"))
    sections = make_sections(elements, budget=10)
    table_ids = {e.table_id for e in elements if e.table_id}
    for table_id in table_ids:
        holders = {
            s.id for s in sections for i in s.element_ids if i in _ids_of(elements, table_id)
        }
        assert len(holders) == 1, "table rows spread over sections"
    assert all(len(content_ids(s, elements)) <= 10 for s in sections)
    assert_partition(sections, elements)


def _ids_of(elements: list[Element], table_id: str) -> set[str]:
    return {e.id for e in elements if e.table_id == table_id}


def test_a_table_larger_than_the_budget_is_still_cut() -> None:
    table = "| h |\n|---|\n" + "".join(f"| r{i} |\n" for i in range(30))
    elements = parse_markdown(table)
    sections = make_sections(elements, budget=10)
    assert [len(s.element_ids) for s in sections] == [10, 10, 10]


def test_heading_chain_excludes_headings_inside_the_section() -> None:
    markdown = (
        "# Top\n\n## Mid\n\n" + "### Leaf1\n\n" + paragraphs(5) + "### Leaf2\n\n" + paragraphs(5)
    )
    elements = parse_markdown(markdown)
    sections = make_sections(elements, budget=5)
    by_id = {e.id: e for e in elements}
    assert len(sections) == 2
    assert sections[0].heading_chain == ()  # Top and Mid are inside the first section
    assert [by_id[h].title for h in sections[1].heading_chain] == ["Top", "Mid"]
    assert by_id[sections[1].element_ids[0]].title == "Leaf2"


def test_every_element_in_exactly_one_section_on_real_documents(
    markdown_fixtures: dict[str, str],
) -> None:
    for markdown in markdown_fixtures.values():
        elements = parse_markdown(markdown)
        for budget in (1, 2, 3, 5, 60):
            sections = make_sections(elements, budget)
            assert_partition(sections, elements)
            assert [s.id for s in sections] == [f"s{i}" for i in range(1, len(sections) + 1)]
            assert all(len(content_ids(s, elements)) <= budget for s in sections)


def test_content_hash_is_stable_and_tracks_text() -> None:
    markdown = "# A\n\none\n\ntwo\n"
    first = make_sections(parse_markdown(markdown))[0]
    again = make_sections(parse_markdown(markdown))[0]
    changed = make_sections(parse_markdown(markdown.replace("two", "three")))[0]
    assert first.content_hash == again.content_hash
    assert first.content_hash != changed.content_hash


def test_content_hash_tracks_the_outer_heading_text() -> None:
    base = "# Top\n\n## S1\n\n" + paragraphs(3) + "## S2\n\n" + paragraphs(3, "other")
    renamed = base.replace("# Top", "# Renamed")
    first = make_sections(parse_markdown(base), budget=3)
    second = make_sections(parse_markdown(renamed), budget=3)
    assert first[1].element_ids == second[1].element_ids
    assert first[1].content_hash != second[1].content_hash  # its breadcrumb context changed


def test_empty_and_invalid_budget() -> None:
    assert make_sections([], budget=5) == []
    with pytest.raises(ValueError):
        make_sections(parse_markdown("x"), budget=0)


def test_heading_only_document_is_one_section() -> None:
    elements = parse_markdown("# A\n## B\n")
    assert [s.element_ids for s in make_sections(elements, 1)] == [("h1", "h2")]
    assert all(e.kind is ElementKind.HEADING for e in elements)


def test_a_table_starting_early_is_not_cut_when_it_fits_a_section() -> None:
    table = "| h |\n|---|\n" + "".join(f"| r{i} |\n" for i in range(6))
    elements = parse_markdown(paragraphs(5) + table + "\n" + paragraphs(10, "after"))
    sections = make_sections(elements, budget=10)
    rows = {e.id for e in elements if e.table_id}
    holders = [s.id for s in sections if rows & set(s.element_ids)]
    assert len(holders) == 1, "a 6-row table was split although a section holds 10"
    assert all(len(content_ids(s, elements)) <= 10 for s in sections)
    assert_partition(sections, elements)


def test_a_table_that_fits_the_remaining_room_does_not_close_the_section() -> None:
    table = "| h |\n|---|\n" + "".join(f"| r{i} |\n" for i in range(2))
    elements = parse_markdown(paragraphs(8) + table + "\n" + paragraphs(10, "after"))
    sections = make_sections(elements, budget=10)
    assert len(sections[0].element_ids) == 10  # 8 paragraphs and both rows
