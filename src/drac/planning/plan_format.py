"""The plan format a model answers in: the IDs where a new chunk starts, `{"b":[ID,...]}`.

Every answer the schema or grammar admits is a finite, complete plan of the section: the
section's own content IDs are the only items, and any subset of them (in any order, repeated
or not) cuts the section's IDs into chunks, so no prefix of an answer can run on for ever and
no ID can be missing. The grammar (for llama.cpp servers) is stricter still: each break at
most once, in document order, no white space, so the longest answer it admits is one item per
ID and the token cap always holds a complete answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from drac.errors import PlanningError
from drac.planning.answer import normalise_id, read_answer

BREAKS_KEY = "b"
SHAPE = '{"b":[IDs]}'
"""The answer's shape as the prompts name it."""
ANSWER_TOKENS_BASE = 16
ANSWER_TOKENS_PER_ID = 9
"""An answer's token cap: base plus, for each content ID, its length and 9 (within the
model's ceiling). A token holds at least one character, so the longest answer the grammar
admits (`{"b":[` and `,"ID"` before every ID but the first, then `]}`) always ends within the
cap, and so does the longest a schema admits pretty-printed (a newline and an indent before
each item, as llama.cpp's JSON Schema decoding writes); a break costs about 4 tokens."""


def break_candidates(content_ids: Sequence[str]) -> list[str]:
    """The IDs a chunk may start at: every content ID but the first (which always does)."""
    return list(content_ids[1:])


def plan_schema(content_ids: Sequence[str]) -> dict[str, Any]:
    """The JSON Schema of a section's plan: `{"b": [ID, ...]}`, each item one of the IDs a
    chunk may start at, at most one item per such ID."""
    candidates = break_candidates(content_ids)
    items: dict[str, Any] = {"type": "string", "enum": candidates} if candidates else {}
    return {
        "type": "object",
        "properties": {
            BREAKS_KEY: {"type": "array", "items": items, "maxItems": len(candidates)},
        },
        "required": [BREAKS_KEY],
        "additionalProperties": False,
    }


def plan_grammar(content_ids: Sequence[str]) -> str:
    """A GBNF grammar (llama.cpp's `grammar` field) admitting exactly the compact answers
    `{"b":[...]}` whose items are break candidates, each at most once, in document order.

    Rule fJ: no item written yet, candidates from J on; sJ: at least one written. Each rule
    either writes candidate J and moves past it, or skips it: linear in the section's size.
    """
    candidates = break_candidates(content_ids)
    count = len(candidates)
    lines = [f'root ::= "{{\\"{BREAKS_KEY}\\":[" f0']
    for index, candidate in enumerate(candidates):
        literal = _gbnf_string(json.dumps(candidate))
        nxt = index + 1
        lines.append(f'f{index} ::= "{literal}" s{nxt} | f{nxt}')
        lines.append(f's{index} ::= ",{literal}" s{nxt} | s{nxt}')
    lines.append(f'f{count} ::= "]}}"')
    lines.append(f's{count} ::= "]}}"')
    return "\n".join(lines) + "\n"


def _gbnf_string(text: str) -> str:
    """Text escaped for a GBNF double-quoted literal."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def answer_token_cap(content_ids: Sequence[str], ceiling: int) -> int:
    """Output tokens to allow an answer for a section with these content IDs."""
    needed = sum(len(element_id) + ANSWER_TOKENS_PER_ID for element_id in content_ids)
    return max(16, min(ceiling, ANSWER_TOKENS_BASE + needed))


def read_breaks(text: str, content_ids: Sequence[str]) -> list[list[str]] | None:
    """The chunks an answer of break IDs draws over the section's content IDs, None when the
    answer is not in that shape (it may still be ID groups, see `read_answer`);
    PlanningError when it names an ID that is no break candidate of this section."""
    data = _decoded(text)
    if isinstance(data, dict) and BREAKS_KEY in data and "chunks" not in data:
        data = data[BREAKS_KEY]
    else:
        return None
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise PlanningError(f'"{BREAKS_KEY}" must be an array of ID strings')
    position = {element_id: index for index, element_id in enumerate(content_ids)}
    starts = {0}
    unknown: list[str] = []
    for item in data:
        element_id = normalise_id(item)
        if element_id in position:
            starts.add(position[element_id])
        else:
            unknown.append(item)
    if unknown:
        raise PlanningError(f"not IDs of this section: {', '.join(map(repr, unknown[:5]))}")
    edges = [*sorted(starts), len(content_ids)]
    return [list(content_ids[a:b]) for a, b in pairwise(edges) if a < b]


def _decoded(text: str) -> object:
    """The JSON value an answer holds: the whole answer, or the plan-shaped value in it."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        pass
    start = stripped.find("{")
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(stripped, start)[0]
    except (json.JSONDecodeError, RecursionError):
        return None


def read_plan(text: str, content_ids: Sequence[str]) -> tuple[list[list[str]], bool]:
    """The ID groups of an answer, in the break format or as ID groups (a model that writes
    the groups themselves), and whether they were one flat list; PlanningError otherwise."""
    groups = read_breaks(text, content_ids)
    if groups is not None:
        return groups, False
    answer = read_answer(text)
    return answer.groups, answer.flat
