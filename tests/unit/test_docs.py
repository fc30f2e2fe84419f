"""The documentation states the defaults the code has."""

from __future__ import annotations

import re
from pathlib import Path

from drac.models import ParseConfig, Strategy

ROOT = Path(__file__).resolve().parents[2]


def _stated_numbers(text: str) -> dict[str, int]:
    """`name` (1,100 ...) pairs as the docs write them."""
    return {name: int(number.replace(",", ""))
            for name, number in re.findall(r"`(\w+)` \((\d[\d,]*)", text)}


def test_architecture_states_the_strategy_defaults() -> None:
    text = (ROOT / "docs/architecture.md").read_text()
    section = text[text.index("A `Strategy` (pydantic) holds"):]
    section = section[: section.index("\n\n")]
    stated = _stated_numbers(section)
    defaults = Strategy().model_dump()
    assert {"target_chars", "hard_limit_chars", "min_chars", "preview_chars"} <= set(stated)
    assert {name: defaults[name] for name in stated} == stated


def test_architecture_states_the_element_limit() -> None:
    text = (ROOT / "docs/architecture.md").read_text()
    assert f"(default {ParseConfig().max_element_chars:,}," in text
