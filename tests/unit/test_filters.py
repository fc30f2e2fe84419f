"""The metadata filter language (drac.filters): the JSON form, the command line's short form,
the validator's refusals (reserved keys above all: a filter can never name the tenant) and the
evaluator's semantics, operator by operator."""

from __future__ import annotations

import json

import pytest

from drac.errors import FilterError
from drac.filters import (
    MAX_CONDITIONS,
    MAX_DEPTH,
    MetadataFilter,
    matches,
    parse_expressions,
    parse_json,
)
from drac.metadata import RESERVED_KEYS

HR_2021 = {
    "dept": "hr",
    "year": 2021,
    "score": 4.5,
    "public": True,
    "tags": ["policy", "eu"],
    "issued": "2021-06-30",
}
LEGAL_2019 = {
    "dept": "legal",
    "year": 2019,
    "score": 3,
    "public": False,
    "tags": ["contract"],
    "issued": "2019-01-15T09:30:00Z",
}
BARE: dict[str, object] = {}


def one(text: str) -> MetadataFilter:
    flt = parse_expressions([text])
    assert flt is not None
    return flt


@pytest.mark.parametrize(
    ("expression", "hr", "legal"),
    [
        ("dept=hr", True, False),
        ("dept=HR", False, False),  # exact, case-sensitive (a keyword)
        ("dept=hr|legal", True, True),
        ("dept=finance|it", False, False),
        ("year=2021", True, False),
        ("year=2021.0", True, False),  # numbers compare as numbers
        ("year=2021|2019", True, True),
        ("year>2020", True, False),
        ("year>=2019", True, True),
        ("year<2021", False, True),
        ("year<=2021", True, True),
        ("year=2019..2020", False, True),
        ("year=2020..", True, False),
        ("year=..2020", False, True),
        ("score>=4", True, False),
        ("public=true", True, False),
        ("public=false", False, True),
        ("tags=eu", True, False),  # a list value matches a value it contains
        ("tags=contract|eu", True, True),
        ("issued>=2020-01-01", True, False),
        ("issued<2019-01-15T10:00:00+00:00", False, True),
        ("issued=2019-01-01..2019-12-31", False, True),
        ("issued=2021-06-30", True, False),  # equality on a date string is exact
        ("missing=1", False, False),
    ],
)
def test_each_operator(expression: str, hr: bool, legal: bool) -> None:
    flt = one(expression)
    assert (matches(flt, HR_2021), matches(flt, LEGAL_2019)) == (hr, legal)
    assert matches(flt, BARE) is False  # a document without the key never passes
    # the JSON form says the same and round-trips
    again = parse_json(json.dumps(flt.to_json()))
    assert again == flt


def test_values_of_another_type_never_match() -> None:
    assert not matches(one("year=2021"), {"year": "2021"})
    assert not matches(one("dept=1"), {"dept": "1"})  # the number 1 is not the string "1"
    assert not matches(one("public=true"), {"public": 1})
    assert not matches(one("year>2000"), {"year": "2021"})
    assert not matches(one("issued>2000-01-01"), {"issued": 2021})
    assert not matches(one("issued>2000-01-01"), {"issued": "not a date"})


def test_several_filters_are_anded_and_json_gives_or() -> None:
    both = parse_expressions(["dept=hr", "year>=2021"])
    assert both is not None and both.operator == "andAll"
    assert matches(both, HR_2021) and not matches(both, {"dept": "hr", "year": 2019})
    either = parse_json(
        json.dumps(
            {
                "orAll": [
                    {"equals": {"key": "dept", "value": "legal"}},
                    {
                        "andAll": [
                            {"equals": {"key": "public", "value": True}},
                            {"greaterThan": {"key": "score", "value": 4}},
                        ]
                    },
                ]
            }
        )
    )
    assert matches(either, HR_2021) and matches(either, LEGAL_2019)
    assert not matches(either, {"dept": "it", "public": True, "score": 2})
    assert parse_expressions([]) is None


@pytest.mark.parametrize("key", [*sorted(RESERVED_KEYS), "Tenant", "_id"])
def test_no_filter_can_name_a_reserved_key(key: str) -> None:
    with pytest.raises(FilterError, match="reserved"):
        parse_expressions([f"{key}=beta"])
    hidden = {
        "orAll": [
            {"equals": {"key": "dept", "value": "hr"}},
            {"andAll": [{"in": {"key": key, "value": ["beta"]}}]},
        ]
    }
    with pytest.raises(FilterError, match="reserved"):
        parse_json(json.dumps(hidden))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"equals": {"key": "a", "value": 1}, "in": {"key": "a", "value": [1]}}',
            "exactly one of",
        ),
        ("{}", "exactly one of"),
        ('{"equals": {"key": "a"}}', "value"),
        ('{"equals": {"key": "a", "value": 1, "extra": 2}}', "Extra inputs"),
        ('{"startsWith": {"key": "a", "value": "x"}}', "Extra inputs"),
        ('{"equals": {"key": "a", "value": [1]}}', "one value, not a list"),
        ('{"in": {"key": "a", "value": "x"}}', "takes a list"),
        ('{"in": {"key": "a", "value": []}}', "takes a list"),
        ('{"in": {"key": "a", "value": [true]}}', "strings and numbers"),
        ('{"greaterThan": {"key": "a", "value": "abc"}}', "number or an ISO 8601 date"),
        ('{"lessThan": {"key": "a", "value": true}}', "number or an ISO 8601 date"),
        ('{"andAll": []}', "at least 1"),
        ('{"equals": {"key": "a b", "value": 1}}', "may hold only letters"),
        ('{"equals": {"key": "a", "value": NaN}}', "finite"),
        ('{"equals": {"key": "a", "value": {"$ne": 1}}}', "value"),
        ("[1]", "filter"),
        ("{bad", "not valid JSON"),
        ("[" * 10_000, "not valid JSON"),
    ],
)
def test_malformed_filters_are_refused(text: str, expected: str) -> None:
    with pytest.raises(FilterError, match=expected):
        parse_json(text)


def test_deep_and_huge_filters_are_refused_before_validation() -> None:
    deep: dict[str, object] = {"equals": {"key": "a", "value": 1}}
    for _ in range(MAX_DEPTH):
        deep = {"andAll": [deep]}
    with pytest.raises(FilterError, match="nested more than"):
        parse_json(json.dumps(deep))
    very_deep: dict[str, object] = {"equals": {"key": "a", "value": 1}}
    for _ in range(5000):
        very_deep = {"orAll": [very_deep]}
    # as the API gets it: parsed JSON handed to the model, which refuses it before recursing
    with pytest.raises(ValueError, match="nested more than"):
        MetadataFilter.model_validate(very_deep)
    wide = {"orAll": [{"equals": {"key": "a", "value": i}} for i in range(MAX_CONDITIONS + 1)]}
    with pytest.raises(FilterError, match="more than 100"):
        parse_json(json.dumps(wide))
    with pytest.raises(FilterError, match="longer than"):
        parse_json(" " * 20_000 + "{}")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("dept!=hr", "'!=' is not supported"),
        ("dept=", "no value"),
        ("=hr", "expected KEY=VALUE"),
        ("dept", "expected KEY=VALUE"),
        ("year>soon", "number or an ISO 8601 date"),
        ("tenant=acme", "reserved"),
    ],
)
def test_bad_expressions_name_the_argument(expression: str, expected: str) -> None:
    with pytest.raises(FilterError, match=expected) as caught:
        parse_expressions([expression])
    assert str(caught.value).startswith(f"--filter {json.dumps(expression)}")


def test_a_range_of_words_is_an_equality() -> None:
    flt = one("name=a..b")
    assert flt.operator == "equals" and matches(flt, {"name": "a..b"})
    assert one("year=2020..2022").operator == "andAll"
    assert one("v=1|2").keys() == {"v"}
