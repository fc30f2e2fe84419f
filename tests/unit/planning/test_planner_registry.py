"""The planner registry: every planner a strategy may name resolves, and nothing else does."""

from __future__ import annotations

from typing import get_args

import pytest

from drac.models import Strategy
from drac.planning import PLANNERS, LlmPlanner, RulesPlanner, planner_for
from drac.planning.registry import planner_named
from drac.ports import MemoryLedger


def test_every_planner_a_strategy_may_name_is_registered_and_resolves(scripted_model) -> None:
    names = get_args(Strategy.model_fields["planner"].annotation)
    assert set(PLANNERS) == set(names)
    model, ledger = scripted_model([]), MemoryLedger()
    for name in names:
        planner = planner_for(Strategy(planner=name), model, ledger)
        assert planner.name == name
        assert isinstance(planner, PLANNERS[name])
    assert type(planner_named("rules", None, ledger)) is RulesPlanner
    llm = planner_named("llm", model, ledger)
    assert isinstance(llm, LlmPlanner) and llm.model is model and llm.ledger is ledger


def test_an_unknown_planner_fails_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown planner 'magic' \(use 'rules' or 'llm'\)"):
        planner_named("magic", None, MemoryLedger())


def test_the_llm_planner_without_a_model_fails_clearly() -> None:
    with pytest.raises(ValueError, match="no planner model is configured"):
        planner_named("llm", None, MemoryLedger())
