"""scripts/lowest_pins.py: the pins the lowest-versions runs install come from pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "lowest_pins.py"


def pins(*extras: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *extras], capture_output=True, text=True, check=True
    )
    return result.stdout.split()


def test_the_extras_pins_are_their_lower_bounds() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = ("langchain", "llamaindex", "mcp")
    wanted = [r for extra in extras for r in project["optional-dependencies"][extra]]
    found = pins(*extras)
    assert len(found) == len(wanted) == 3
    for pin, requirement in zip(found, wanted, strict=True):
        name, version = pin.split("==")
        assert requirement.startswith(f"{name}>={version},")  # the inclusive lower bound
    assert pins()[0].startswith("pydantic==")  # without extras: the core's, as before
