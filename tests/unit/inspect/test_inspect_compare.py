"""Plan versions side by side: groups of chunks sharing elements, classified."""

from __future__ import annotations

from drac.inspect.compare import compare_chunks
from drac.inspect.model import ChangeKind, ChunkView


def _chunks(*groups: str) -> list[ChunkView]:
    return [
        ChunkView(
            number=number,
            chunk_id=f"c{number}",
            version=1,
            breadcrumb="",
            element_ids=tuple(ids.split()),
            content_ids=tuple(ids.split()),
            chars=10,
            pages=(1,),
            text=ids,
        )
        for number, ids in enumerate(groups, start=1)
    ]


ORDER = {f"p{i}": i for i in range(1, 20)}


def _kinds(left: list[ChunkView], right: list[ChunkView]) -> list[tuple[str, tuple, tuple]]:
    return [(g.kind.value, g.left, g.right) for g in compare_chunks(left, right, ORDER)]


def test_unchanged_split_merged_and_redrawn_in_document_order() -> None:
    left = _chunks("p1 p2", "p3 p4 p5", "p6", "p7", "p8 p9", "p10 p11")
    right = _chunks("p1 p2", "p3", "p4 p5", "p6 p7", "p8", "p9 p10", "p11")
    assert _kinds(left, right) == [
        ("unchanged", (1,), (1,)),
        ("split", (2,), (2, 3)),
        ("merged", (3, 4), (4,)),
        ("new", (5, 6), (5, 6, 7)),
    ]


def test_elements_on_one_side_only() -> None:
    left = _chunks("p1 p2", "p3")
    right = _chunks("p1 p2 p4", "p5")
    assert _kinds(left, right) == [
        ("new", (1,), (1,)),  # same chunk count, different elements: not unchanged
        ("removed", (2,), ()),
        ("new", (), (2,)),
    ]


def test_same_plan_is_all_unchanged() -> None:
    chunks = _chunks("p1", "p2 p3", "p4")
    groups = compare_chunks(chunks, chunks, ORDER)
    assert {g.kind for g in groups} == {ChangeKind.UNCHANGED} and len(groups) == 3
