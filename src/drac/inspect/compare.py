"""Two plan versions of one document, side by side: which chunks are unchanged, split, merged
or new. Versions share their elements, so chunks are compared by content element IDs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drac.inspect.model import ChangeGroup, ChangeKind, ChunkView


def compare_chunks(
    left: Sequence[ChunkView], right: Sequence[ChunkView], order: Mapping[str, int]
) -> list[ChangeGroup]:
    """Groups of chunks sharing elements (connected through shared IDs), in document order
    (`order` gives each element ID's position).

    One chunk on each side with the same elements is unchanged; one left chunk spread over
    several right chunks is split; several left chunks joined into one is merged; anything
    else (boundaries redrawn across several chunks, or elements only on the right) is new,
    and left chunks whose elements are on no right chunk are removed.
    """
    nodes = [*left, *right]
    parent = list(range(len(nodes)))

    def find(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    owner: dict[str, int] = {}
    for index, chunk in enumerate(nodes):
        for element_id in chunk.content_ids:
            if element_id in owner:
                parent[find(index)] = find(owner[element_id])
            else:
                owner[element_id] = index
    members: dict[int, list[int]] = {}
    for index in range(len(nodes)):
        members.setdefault(find(index), []).append(index)

    def start(indexes: list[int]) -> int:
        return min(
            (order.get(i, len(order)) for n in indexes for i in nodes[n].content_ids),
            default=len(order),
        )

    groups = sorted(members.values(), key=start)
    return [
        _group(
            [nodes[n] for n in group if n < len(left)], [nodes[n] for n in group if n >= len(left)]
        )
        for group in groups
    ]


def _group(left: list[ChunkView], right: list[ChunkView]) -> ChangeGroup:
    same = {i for c in left for i in c.content_ids} == {i for c in right for i in c.content_ids}
    if not right:
        kind = ChangeKind.REMOVED
    elif not left or not same:
        kind = ChangeKind.NEW
    elif len(left) == 1 and len(right) == 1:
        kind = ChangeKind.UNCHANGED
    elif len(left) == 1:
        kind = ChangeKind.SPLIT
    elif len(right) == 1:
        kind = ChangeKind.MERGED
    else:
        kind = ChangeKind.NEW
    return ChangeGroup(
        kind=kind, left=tuple(c.number for c in left), right=tuple(c.number for c in right)
    )
