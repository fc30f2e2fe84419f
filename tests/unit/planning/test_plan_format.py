"""The break-ID plan format: every answer its grammar or schema admits is a finite, complete
plan of the section's own IDs; the model never writes text that is kept."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drac.errors import PlanningError
from drac.planning.plan_format import plan_grammar, plan_schema, read_breaks, read_plan

IDS = ["p1", "p2", "p3", "p4"]
_RULE = re.compile(r"^(\S+) ::= (.*)$")
_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')


def admitted(grammar: str) -> set[str]:
    """Every string a (finite, non-recursive) GBNF grammar of literals and rule names admits."""
    rules = {}
    for line in grammar.strip().splitlines():
        name, body = _RULE.match(line).groups()  # type: ignore[union-attr]
        rules[name] = [_TOKEN.findall(alt) for alt in body.split(" | ")]

    def expand(name: str) -> set[str]:
        out: set[str] = set()
        for alt in rules[name]:
            parts = [
                {bytes(lit, "utf-8").decode("unicode_escape")} if lit or not ref else expand(ref)
                for lit, ref in alt
            ]
            out |= {"".join(combo) for combo in itertools.product(*parts)}
        return out

    return expand("root")


def test_the_grammar_admits_exactly_the_compact_answers_of_ordered_unique_breaks() -> None:
    answers = admitted(plan_grammar(IDS))
    expected = {
        json.dumps({"b": list(subset)}, separators=(",", ":"))
        for size in range(4)
        for subset in itertools.combinations(IDS[1:], size)
    }
    assert answers == expected  # finite: 2**3 answers, the longest a break before every ID
    for answer in answers:
        groups = read_breaks(answer, IDS)
        assert groups is not None and [i for g in groups for i in g] == IDS


def test_a_section_of_one_id_admits_only_the_empty_answer() -> None:
    assert admitted(plan_grammar(["p7"])) == {'{"b":[]}'}
    assert plan_schema(["p7"])["properties"]["b"]["maxItems"] == 0


@given(st.lists(st.sampled_from(IDS), max_size=12))
def test_any_break_list_the_schema_admits_is_a_complete_plan(breaks: list[str]) -> None:
    """Unordered or repeated items (a schema cannot forbid them) still cut the section once."""
    groups, flat = read_plan(json.dumps({"b": breaks}), IDS)
    assert [i for g in groups for i in g] == IDS and all(groups) and not flat
    assert len(groups) == 1 + len(set(breaks) - {"p1"})


def test_an_id_of_no_section_is_an_unusable_answer() -> None:
    with pytest.raises(PlanningError, match="not IDs of this section: 'p9'"):
        read_breaks('{"b":["p2","p9"]}', IDS)


def test_id_groups_are_still_read() -> None:
    assert read_plan('[["p1","p2"],["p3","p4"]]', IDS) == ([["p1", "p2"], ["p3", "p4"]], False)
