"""ChunkMeasure gives exactly the length of chunk_text, for any run of content elements."""

from __future__ import annotations

import random

from drac.assemble import chunk_text
from drac.models import Element
from drac.parsing import parse_markdown
from drac.planning.measure import Breadcrumbs, ChunkMeasure, measure_of

NESTED = """# Guide

Intro text.

## Setup

### Install

Install step one.

| Tool | Version |
|------|---------|
| cli  | 2       |
| sdk  | 3       |

#

Under a heading with no title.

### Configure

- a list
- of items

## Usage

Usage text that is a little longer than the others, to vary sizes.

+---+---+
| a | b |
+===+===+
| 1 | 2 |
+---+---+
| 3 | 4 |
+---+---+

# Appendix

Last words.
"""


# Long titles: the breadcrumb elides middle levels, or is cut, past its length limit.
LONG_TITLES = (
    "".join(
        f"{'#' * level} Level {level} {'title words ' * (level * 3)}\n\nText under {level}.\n\n"
        for level in (1, 2, 3, 4, 5, 6, 3, 6, 2, 6)
    )
    + "#\n\n## "
    + "x" * 400
    + "\n\nUnder a very long title.\n"
)


def documents(markdown_fixtures: dict[str, str]) -> list[list[Element]]:
    texts = [NESTED, LONG_TITLES, *markdown_fixtures.values()]
    return [parse_markdown(text) for text in texts]


def test_measure_matches_chunk_text_for_every_run(markdown_fixtures: dict[str, str]) -> None:
    for elements in documents(markdown_fixtures):
        by_id = {e.id: e for e in elements}
        content = [e for e in elements if not e.is_heading]
        crumbs = Breadcrumbs(by_id)
        for start in range(len(content)):
            measure = ChunkMeasure(content[start], by_id, crumbs)
            for end in range(start + 1, min(start + 15, len(content))):
                candidate = content[start : end + 1]
                assert measure.probe(content[end]) == len(chunk_text(candidate, by_id))
                measure.add(content[end])
                assert measure.size == len(chunk_text(candidate, by_id))


def test_measure_matches_chunk_text_for_scattered_elements(
    markdown_fixtures: dict[str, str],
) -> None:
    generator = random.Random(11)
    for elements in documents(markdown_fixtures):
        by_id = {e.id: e for e in elements}
        content = [e for e in elements if not e.is_heading]
        for _ in range(200):
            picked = sorted(generator.sample(range(len(content)), min(6, len(content))))
            run = [content[i] for i in picked]
            measure = measure_of(run, by_id, Breadcrumbs(by_id))
            assert measure.size == len(chunk_text(run, by_id))
