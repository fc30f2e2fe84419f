"""Parse a planner model's answer: JSON arrays of element IDs, runs written as ranges.

An answer is a plan only when the JSON it holds is one: a non-empty array of non-empty arrays
of strings (or `{"chunks": ...}` around one, or a flat array of IDs). A bracket pair inside
echoed text (a checklist box `[ ]`, a citation `[1]`) is never taken for a plan.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from drac.errors import PlanningError

# No `\s*` before the lazy body: the two overlapped, and an unclosed fence followed by blank
# space took quadratic time. The body is stripped after the match instead.
_FENCE = re.compile(r"```(?:json)?(.*?)```", re.DOTALL)
_MAX_ATTEMPTS = 64  # places in an answer to try decoding from
_RANGE = re.compile(r"^\s*(p[\d.]+)\s*-\s*(p[\d.]+)\s*$")
_DASHES = re.compile("[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")
_ID_LIKE = re.compile(r"^([a-z]\d+(?:\.\d+)*)(?:\s*-\s*([a-z]\d+(?:\.\d+)*))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Answer:
    """A parsed answer: its ID groups, and whether the model wrote one flat list of IDs
    (which carries no chunk boundaries: each ID is a group of its own)."""

    groups: list[list[str]]
    flat: bool = False


def parse_answer(answer: str) -> list[list[str]]:
    """Return the ID groups in a model answer; PlanningError when it holds no plan."""
    return read_answer(answer).groups


def read_answer(answer: str) -> Answer:
    """The plan in a model answer, IDs normalised; PlanningError when it holds none."""
    text = answer.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    data, flat = _plan_json(text)
    groups = [[normalise_id(item) for item in group] for group in data]
    return Answer(groups=groups, flat=flat)


def normalise_id(item: str) -> str:
    """An ID as the section writes it: `P1` is `p1`, `p1 – p3` is `p1-p3`; an item that
    looks like no ID or range is kept as written (validation reports it)."""
    text = _DASHES.sub("-", unicodedata.normalize("NFKC", item)).strip()
    match = _ID_LIKE.match(text)
    if match is None:
        return item.strip()
    first, last = match.group(1).lower(), match.group(2)
    return f"{first}-{last.lower()}" if last else first


def _plan_json(text: str) -> tuple[list[list[str]], bool]:
    """The plan-shaped JSON in text: the whole text when it decodes, else the first
    plan-shaped value decoded from an opening bracket, ignoring prose around it.

    Decoding from each '[' or '{' in turn (not from the first '[' to the last ']') lets a note
    after the answer mention brackets, as in 'p3 is a table [t1]', without spoiling it.
    """
    decoder = json.JSONDecoder()
    complaint: str | None = None
    first_error: str | None = None
    for start in _top_level_openers(text):
        try:
            data, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            first_error = first_error or exc.msg
            continue
        except RecursionError:  # absurdly deep nesting
            first_error = first_error or "nested too deeply"
            continue
        plan, problem = _as_plan(data)
        if plan is not None:
            return plan
        complaint = complaint or problem
    if complaint is not None:
        raise PlanningError(f"answer is not a plan: {complaint}")
    if first_error is not None:
        raise PlanningError(f"answer is not valid JSON: {first_error}")
    raise PlanningError("answer holds no JSON array")


def _top_level_openers(text: str) -> list[int]:
    """Where a bracket opens outside every other bracket pair (strings inside brackets are
    skipped), at most _MAX_ATTEMPTS of them: an array inside an answer cut off mid-way, or
    inside an object, is part of that value, never a plan of its own."""
    openers: list[int] = []
    depth = 0
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char in "[{":
            if depth == 0:
                openers.append(index)
                if len(openers) >= _MAX_ATTEMPTS:
                    break
            depth += 1
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == '"' and depth:
            in_string = True
    return openers


def _as_plan(data: object) -> tuple[tuple[list[list[str]], bool] | None, str]:
    """The groups of a decoded value and whether it was flat, or None and why it is no plan."""
    if isinstance(data, dict):
        if "chunks" not in data:
            return None, "an object without 'chunks'"
        data = data["chunks"]
    if not isinstance(data, list):
        return None, "not an array of arrays"
    if not data:
        return None, "an empty array"
    if all(isinstance(item, str) for item in data):
        if all(_ID_LIKE.match(normalise_id(item)) for item in data):
            return ([[item] for item in data], True), ""
        return None, "an array of words, not of ID arrays"
    if not all(isinstance(group, list) for group in data):
        return None, "not an array of arrays"
    if not all(group for group in data):
        return None, "an empty chunk"
    if not all(isinstance(item, str) for group in data for item in group):
        return None, "arrays must hold ID strings only"
    return (data, False), ""


def expand_ranges(group: Sequence[str], content_order: Sequence[str]) -> list[str]:
    """Replace each 'pA-pB' with the section's content IDs from pA to pB inclusive.

    A range whose ends are unknown or reversed is kept as-is, so validation reports it.
    """
    position = {element_id: index for index, element_id in enumerate(content_order)}
    expanded: list[str] = []
    for item in group:
        match = _RANGE.match(item)
        if match and match.group(1) in position and match.group(2) in position:
            first, last = position[match.group(1)], position[match.group(2)]
            if first <= last:
                expanded.extend(content_order[first : last + 1])
                continue
        expanded.append(item)
    return expanded


def compress_ranges(ids: Sequence[str], content_order: Sequence[str]) -> list[str]:
    """Write consecutive runs (in section content order) of three or more IDs as 'pA-pB'."""
    position = {element_id: index for index, element_id in enumerate(content_order)}
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= 3:
            out.append(f"{run[0]}-{run[-1]}")
        else:
            out.extend(run)
        run.clear()

    for element_id in ids:
        if (
            run
            and element_id in position
            and run[-1] in position
            and (position[element_id] == position[run[-1]] + 1)
        ):
            run.append(element_id)
        else:
            flush()
            run.append(element_id)
    flush()
    return out
