"""The planners by name: a strategy's `planner` looks its planner up here.

Each planner is a class in its own module (`drac.planning.rules`, `drac.planning.llm`) whose
`build` makes it from what the caller has; a new planner is one class and one entry below.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from drac.planning.base import Planner
from drac.planning.llm import LlmPlanner
from drac.planning.rules import RulesPlanner
from drac.ports import Ledger, TextModel

PLANNERS: Mapping[str, type[Planner]] = MappingProxyType(
    {planner.name: planner for planner in (RulesPlanner, LlmPlanner)}
)
"""Every planner, by the name a strategy gives it."""


def planner_named(name: str, text_model: TextModel | None, ledger: Ledger) -> Planner:
    """The planner called `name`, built from `text_model` and `ledger` (raises ValueError for
    an unknown name, or when the planner needs a text model and none is configured)."""
    planner = PLANNERS.get(name)
    if planner is None:
        known = " or ".join(repr(known) for known in PLANNERS)
        raise ValueError(f"unknown planner {name!r} (use {known})")
    return planner.build(text_model, ledger)
