"""Print pip constraints pinning each core dependency (or each dependency of the extras named)
to the lowest version it allows.

    python3 scripts/lowest_pins.py > constraints.txt
    python3 scripts/lowest_pins.py langchain llamaindex mcp   # those extras' dependencies

Pins come from pyproject.toml, never by hand: a core dependency without a lower bound is an
error, since the lowest version it allows is then whatever a registry happens to keep.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*?)\s*$")
_LOWER = re.compile(r"^(>=|==|~=)\s*([0-9][^,\s]*)$")


def lowest_pin(requirement: str) -> str:
    """'name>=1.2,<2' -> 'name==1.2'; ValueError when there is no inclusive lower bound."""
    match = _REQUIREMENT.match(requirement)
    if match is None or ";" in requirement:
        raise ValueError(f"cannot read requirement {requirement!r}")
    name, _, specifiers = match.groups()
    for specifier in filter(None, (part.strip() for part in specifiers.split(","))):
        lower = _LOWER.match(specifier)
        if lower:
            return f"{name}=={lower.group(2)}"
    raise ValueError(f"{name} has no lower bound (>=, == or ~=) in pyproject.toml")


def main(extras: list[str]) -> int:
    """Print one pin a line for the core dependencies of pyproject.toml, or for those of the
    extras named."""
    project = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]
    optional = project["optional-dependencies"]
    wanted = [r for extra in extras for r in optional[extra]] if extras else project["dependencies"]
    try:
        pins = [lowest_pin(requirement) for requirement in wanted]
    except ValueError as exc:
        print(f"lowest_pins: {exc}", file=sys.stderr)
        return 1
    print("\n".join(pins))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
