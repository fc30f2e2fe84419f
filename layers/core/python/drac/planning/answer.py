"""Parse a planner model's answer: JSON arrays of element IDs, runs written as ranges."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from drac.errors import PlanningError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_RANGE = re.compile(r"^\s*(p[\d.]+)\s*-\s*(p[\d.]+)\s*$")


def parse_answer(answer: str) -> list[list[str]]:
    """Return the ID groups in a model answer; PlanningError when it is not JSON arrays of IDs."""
    text = answer.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        raise PlanningError("answer holds no JSON array")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise PlanningError(f"answer is not valid JSON: {exc.msg}") from exc
    if isinstance(data, dict) and isinstance(data.get("chunks"), list):
        data = data["chunks"]
    if not isinstance(data, list) or not all(isinstance(group, list) for group in data):
        raise PlanningError("answer is not an array of arrays")
    groups: list[list[str]] = []
    for group in data:
        if not all(isinstance(item, str) for item in group):
            raise PlanningError("answer arrays must hold ID strings only")
        groups.append([item.strip() for item in group])
    return groups


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
