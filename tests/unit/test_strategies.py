"""Named strategies and overrides."""

from __future__ import annotations

import pytest

from drac.models import Strategy
from drac.strategies import PRESETS, resolve_strategy


def test_default_is_the_default_preset() -> None:
    assert resolve_strategy() is PRESETS["default"]
    assert resolve_strategy(None) == Strategy()
    assert resolve_strategy("default").planner == "rules"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_valid_and_named(name: str) -> None:
    strategy = resolve_strategy(name)
    assert strategy.name == name
    assert strategy.min_chars <= strategy.target_chars <= strategy.hard_limit_chars


def test_presets_differ_in_size() -> None:
    fine, default, coarse = (resolve_strategy(n) for n in ("fine", "default", "coarse"))
    assert fine.target_chars < default.target_chars < coarse.target_chars
    assert resolve_strategy("llm").planner == "llm"


def test_overrides_apply_and_rename() -> None:
    strategy = resolve_strategy("fine", target_chars=700, hard_limit_chars=None)
    assert strategy.target_chars == 700
    assert strategy.hard_limit_chars == PRESETS["fine"].hard_limit_chars  # None ignored
    assert strategy.name == "fine+custom"
    assert resolve_strategy("coarse", name="mine", max_blocks=4).name == "mine"
    assert PRESETS["fine"].target_chars != 700  # the preset itself is untouched


def test_none_overrides_return_the_preset_itself() -> None:
    assert resolve_strategy("coarse", target_chars=None) is PRESETS["coarse"]


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown strategy 'huge'.*coarse.*default.*fine"):
        resolve_strategy("huge")


def test_target_override_keeps_the_min_target_proportion() -> None:
    preset = PRESETS["default"]
    strategy = resolve_strategy("default", target_chars=preset.target_chars // 2)
    assert strategy.min_chars == round(preset.min_chars / 2)
    explicit = resolve_strategy("default", target_chars=800, min_chars=10)
    assert explicit.min_chars == 10


def test_inconsistent_overrides_are_rejected_with_a_readable_reason() -> None:
    with pytest.raises(ValueError, match="target_chars must not exceed hard_limit_chars"):
        resolve_strategy("default", target_chars=5000)
    with pytest.raises(ValueError):
        resolve_strategy("default", preview_chars=1000)
    with pytest.raises(ValueError):
        resolve_strategy("default", unknown_option=1)


def test_the_sentences_preset_reaches_a_stack_from_its_context() -> None:
    from drac.settings import Settings

    assert (
        Settings.from_context({"strategy": "sentences"}).conversion.strategy == PRESETS["sentences"]
    )
    assert PRESETS["sentences"].table_rows == "sentences"
    override = Settings.from_context({"strategy": {"name": "fine", "table_rows": "sentences"}})
    assert (override.conversion.strategy.target_chars, override.conversion.strategy.table_rows) == (
        600,
        "sentences",
    )
