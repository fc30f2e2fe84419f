"""Named chunking strategies, and building one from a name plus overrides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from drac.models import Strategy

PRESETS: dict[str, Strategy] = {
    "default": Strategy(name="default"),
    "fine": Strategy(name="fine", target_chars=600, min_chars=300, hard_limit_chars=1500),
    "coarse": Strategy(name="coarse", target_chars=1600, min_chars=1000, hard_limit_chars=3000),
    "llm": Strategy(name="llm", planner="llm"),
    # spreadsheet rows as "Column: value; ..." sentences (for embedders that read prose better)
    "sentences": Strategy(name="sentences", table_rows="sentences"),
}


def resolve_strategy(name: str | None = None, /, **overrides: Any) -> Strategy:
    """The preset called `name` (default: 'default') with non-None overrides applied.

    Overriding any setting of a preset names the result '<preset>+custom' unless a name is
    given among the overrides.
    """
    preset = PRESETS.get(name or "default")
    if preset is None:
        known = ", ".join(sorted(PRESETS))
        raise ValueError(f"unknown strategy {name!r} (known: {known})")
    changes = {key: value for key, value in overrides.items() if value is not None}
    if not changes:
        return preset
    changes.setdefault("name", f"{preset.name}+custom")
    if "target_chars" in changes and "min_chars" not in changes:
        # keep the preset's proportion between the boundary threshold and the target
        ratio = preset.min_chars / preset.target_chars
        changes["min_chars"] = round(changes["target_chars"] * ratio)
    try:
        return Strategy.model_validate({**preset.model_dump(), **changes})
    except ValidationError as exc:
        reasons = "; ".join(error["msg"].removeprefix("Value error, ") for error in exc.errors())
        raise ValueError(reasons) from exc


def strategy_from_request(
    requested: Strategy | Mapping[str, Any] | str | None, default: Strategy | None = None
) -> Strategy:
    """The strategy a request names: a preset name, a preset plus overrides
    (`{"name": "fine", "target_chars": 800}`), a complete strategy, or None for `default`.

    A name that is no preset with overrides names a custom strategy built on the default preset.
    """
    if requested is None:
        return default or PRESETS["default"]
    if isinstance(requested, Strategy):
        return requested
    if isinstance(requested, str):
        return resolve_strategy(requested)
    data = dict(requested)
    if set(data) >= set(Strategy.model_fields):
        return Strategy.model_validate(data)
    name = data.pop("name", None)
    known = name in PRESETS
    preset = resolve_strategy(name if known else None)
    changes = {key: value for key, value in data.items() if getattr(preset, key, None) != value}
    if name is not None and (changes or not known):
        changes["name"] = name
    return Strategy.model_validate({**preset.model_dump(), **changes})
