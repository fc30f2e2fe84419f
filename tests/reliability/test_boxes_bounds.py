"""Placing elements on a hostile page is bounded: difflib's worst case (one word repeated
over a page) never tries more than MAX_WINDOW_WORK word matches at once, and a document's
alignments stop at their budget, the elements left saying they were not looked for."""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from typing import Any

import pytest

from drac.documents.pdf import boxes
from drac.documents.pdf.layers import PageLayer
from drac.models import Element
from drac.provenance import BoxStatus


def test_a_page_of_one_repeated_word_is_aligned_in_bounded_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = tuple((("a", "b")[i % 2], 0.0, 0.0, 1.0, 1.0, i // 20) for i in range(60_000))
    layer = PageLayer(number=1, words=words)  # the most a page may hold is 200,000 characters
    text = " ".join(["a a b b"] * 150)  # never an exact run of the page: aligned by difflib
    elements = [Element(id=f"p{i}", kind="paragraph", text=text, page=1) for i in range(40)]
    compared: list[int] = []

    class Counting(SequenceMatcher):  # type: ignore[type-arg]
        def __init__(self, junk: Any, a: Any, b: Any, autojunk: bool = True) -> None:
            counts = Counter(x for x in b if x is not None)
            compared.append(sum(counts.get(x, 0) for x in a))  # difflib's matches to try
            super().__init__(junk, a, b, autojunk)

    monkeypatch.setattr(boxes, "SequenceMatcher", Counting)
    monkeypatch.setattr(boxes, "MAX_DOCUMENT_WORK", 10 * boxes.MAX_WINDOW_WORK)
    placed = boxes.align_elements(elements, {1: layer})
    assert compared and max(compared) <= boxes.MAX_WINDOW_WORK
    assert sum(compared) <= 10 * boxes.MAX_WINDOW_WORK + boxes.MAX_PAGE_WORK
    refused = [e for e in placed if e.boxes and "not looked for" in (e.boxes.reason or "")]
    assert refused and all(e.boxes.status is BoxStatus.NOT_ALIGNED for e in refused)
    first = placed[0].boxes
    assert first is not None and "not looked for" not in (first.reason or "")  # it was tried
