"""Parse a planner model's answer: JSON arrays of element IDs, runs written as ranges."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from drac.errors import PlanningError

# No `\s*` before the lazy body: the two overlapped, and an unclosed fence followed by blank
# space took quadratic time. The body is stripped after the match instead.
_FENCE = re.compile(r"```(?:json)?(.*?)```", re.DOTALL)
_OPENER = re.compile(r"[\[{]")
_MAX_ATTEMPTS = 64  # places in an answer to try decoding from
_RANGE = re.compile(r"^\s*(p[\d.]+)\s*-\s*(p[\d.]+)\s*$")


def parse_answer(answer: str) -> list[list[str]]:
    """Return the ID groups in a model answer; PlanningError when it is not JSON arrays of IDs."""
    text = answer.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    data = _first_json(text)
    if not isinstance(data, list) or not all(isinstance(group, list) for group in data):
        raise PlanningError("answer is not an array of arrays")
    groups: list[list[str]] = []
    for group in data:
        if not all(isinstance(item, str) for item in group):
            raise PlanningError("answer arrays must hold ID strings only")
        groups.append([item.strip() for item in group])
    return groups


def _first_json(text: str) -> object:
    """The first JSON array (or {"chunks": [...]}) in text that decodes, ignoring prose around it.

    Decoding from each '[' or '{' in turn (not from the first '[' to the last ']') lets a note
    after the answer mention brackets, as in 'p3 is a table [t1]', without spoiling it.
    """
    decoder = json.JSONDecoder()
    first_error: str | None = None
    found_array = False
    for attempt, match in enumerate(_OPENER.finditer(text)):
        if attempt >= _MAX_ATTEMPTS:
            break
        try:
            data, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as exc:
            first_error = first_error or exc.msg
            continue
        except RecursionError:  # absurdly deep nesting
            first_error = first_error or "nested too deeply"
            continue
        if isinstance(data, dict) and isinstance(data.get("chunks"), list):
            data = data["chunks"]
        if isinstance(data, list):
            found_array = True
            if all(isinstance(group, list) for group in data):
                return data
    if found_array:
        raise PlanningError("answer is not an array of arrays")
    if first_error is not None:
        raise PlanningError(f"answer is not valid JSON: {first_error}")
    raise PlanningError("answer holds no JSON array")


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
