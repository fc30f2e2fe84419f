"""The metadata filter language both runtimes take: one pydantic model, one evaluator.

The JSON form is Amazon Bedrock Knowledge Bases' retrieval filter, restricted to what drac
implements: `equals`, `in`, `greaterThan`, `greaterThanOrEquals`, `lessThan`,
`lessThanOrEquals` (each `{"key": K, "value": V}`), and `andAll` / `orAll` (lists of filters).
`drac search --filter` also takes a short form (`parse_expressions`). A filter only narrows:
it is always ANDed with the tenant's own scope, and no key drac uses (`tenant` above all) may
appear in it.

Semantics, the same in the local search (`matches`) and in OpenSearch
(`drac.aws.opensearch.metadata_query`): `equals` compares a string exactly, a number
numerically, a boolean as one, and matches a list value that contains it; `in` is `equals` of
any of its values; a range compares numbers with numbers and ISO 8601 dates with dates
(values of another type never match); a document without the key never matches.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from drac.errors import FilterError, MetadataError
from drac.metadata import MetaValue, as_date, check_key, scalar

MAX_DEPTH = 6
"""Nesting of andAll/orAll (a filter deeper than this is refused before it is validated)."""
MAX_CONDITIONS = 100
MAX_IN_VALUES = 100
MAX_FILTER_CHARS = 16_384

Scalar = str | int | float | bool
RANGES = ("greaterThan", "greaterThanOrEquals", "lessThan", "lessThanOrEquals")
_OPERATORS = ("equals", "in", *RANGES, "andAll", "orAll")


class Condition(BaseModel):
    """`{"key": K, "value": V}` of one comparison."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    value: Scalar | list[Scalar]

    @field_validator("key")
    @classmethod
    def _allowed_key(cls, key: str) -> str:
        try:
            return check_key(key, "filter")
        except MetadataError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("value")
    @classmethod
    def _bounded(cls, value: Scalar | list[Scalar]) -> Scalar | list[Scalar]:
        items = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and len(v) > 2048 for v in items):
            raise ValueError("filter: a value is longer than 2048 characters")
        if any(isinstance(v, float) and not math.isfinite(v) for v in items):
            raise ValueError("filter: a number must be finite")
        return value


class MetadataFilter(BaseModel):
    """One filter: exactly one operator (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    equals: Condition | None = None
    in_: Condition | None = Field(default=None, alias="in")
    greater_than: Condition | None = Field(default=None, alias="greaterThan")
    greater_than_or_equals: Condition | None = Field(default=None, alias="greaterThanOrEquals")
    less_than: Condition | None = Field(default=None, alias="lessThan")
    less_than_or_equals: Condition | None = Field(default=None, alias="lessThanOrEquals")
    and_all: list[MetadataFilter] | None = Field(
        default=None, alias="andAll", min_length=1, max_length=MAX_CONDITIONS
    )
    or_all: list[MetadataFilter] | None = Field(
        default=None, alias="orAll", min_length=1, max_length=MAX_CONDITIONS
    )

    @model_validator(mode="before")
    @classmethod
    def _shallow_enough(cls, data: Any) -> Any:
        """Refuse deep or huge input before pydantic recurses into it."""
        depth, conditions = _shape(data)
        if depth > MAX_DEPTH:
            raise ValueError(f"filter: nested more than {MAX_DEPTH} levels deep")
        if conditions > MAX_CONDITIONS:
            raise ValueError(f"filter: more than {MAX_CONDITIONS} conditions")
        return data

    @model_validator(mode="after")
    def _one_operator(self) -> MetadataFilter:
        given = [name for name in _OPERATORS if self.operand(name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"filter: give exactly one of {', '.join(_OPERATORS)} (got {given or 'none'})"
            )
        operator = given[0]
        condition = self.operand(operator)
        if isinstance(condition, Condition):
            _check_operand(operator, condition)
        return self

    @property
    def operator(self) -> str:
        """The operator's JSON name (`equals`, `in`, ..., `andAll`, `orAll`)."""
        return next(name for name in _OPERATORS if self.operand(name) is not None)

    def operand(self, operator: str) -> Condition | list[MetadataFilter] | None:
        """What the operator of that JSON name applies to (None when not this filter's)."""
        field = _FIELD_OF[operator]
        value: Condition | list[MetadataFilter] | None = getattr(self, field)
        return value

    @property
    def condition(self) -> Condition:
        """The comparison of a leaf filter (ValueError for andAll/orAll)."""
        operand = self.operand(self.operator)
        if not isinstance(operand, Condition):
            raise ValueError(f"{self.operator} has no single condition")
        return operand

    @property
    def children(self) -> list[MetadataFilter]:
        """The filters of andAll/orAll (empty for a comparison)."""
        operand = self.operand(self.operator)
        return operand if isinstance(operand, list) else []

    @model_serializer(mode="plain")
    def _serialised(self) -> dict[str, Any]:
        """Always the JSON form: `{operator: operand}` under Bedrock's names."""
        operand = self.operand(self.operator)
        if isinstance(operand, list):
            return {self.operator: [child.to_json() for child in operand]}
        assert operand is not None
        return {self.operator: operand.model_dump(mode="json")}

    def to_json(self) -> dict[str, Any]:
        """The filter in its JSON form (Bedrock's names)."""
        return self._serialised()

    def keys(self) -> set[str]:
        """Every metadata key the filter reads."""
        if self.children:
            return set().union(*(child.keys() for child in self.children))
        return {self.condition.key}


_FIELD_OF = {
    "equals": "equals",
    "in": "in_",
    "greaterThan": "greater_than",
    "greaterThanOrEquals": "greater_than_or_equals",
    "lessThan": "less_than",
    "lessThanOrEquals": "less_than_or_equals",
    "andAll": "and_all",
    "orAll": "or_all",
}


def _shape(data: Any) -> tuple[int, int]:
    """(depth of andAll/orAll nesting, number of conditions) of raw filter input, walked
    without recursion."""
    deepest, conditions = 0, 0
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, MetadataFilter):
            node = node.to_json()
        if not isinstance(node, Mapping):
            continue
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        for name, value in node.items():
            if name in ("andAll", "orAll", "and_all", "or_all") and isinstance(value, list):
                pending.extend((item, depth + 1) for item in value)
            else:
                conditions += 1
        if conditions > MAX_CONDITIONS:
            break
    return deepest, conditions


def _check_operand(operator: str, condition: Condition) -> None:
    value = condition.value
    if operator == "in":
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_IN_VALUES:
            raise ValueError(f"filter: 'in' takes a list of 1 to {MAX_IN_VALUES} values")
        if any(isinstance(v, bool) for v in value):
            raise ValueError("filter: 'in' takes strings and numbers (use equals for booleans)")
        return
    if isinstance(value, list):
        raise ValueError(f"filter: {operator} takes one value, not a list (use 'in')")
    if operator in RANGES and (
        isinstance(value, bool) or (isinstance(value, str) and as_date(value) is None)
    ):
        raise ValueError(
            f"filter: {operator} on {condition.key!r} takes a number or an ISO 8601 date "
            f"(2024-05-01, 2024-05-01T12:00:00Z), not {value!r}"
        )


# -- evaluation (the local search) ---------------------------------------------------------


Predicate = Callable[[Mapping[str, MetaValue]], bool]
"""A compiled filter: metadata in, whether it passes out."""


def matches(flt: MetadataFilter, metadata: Mapping[str, MetaValue]) -> bool:
    """Whether a document with this metadata passes the filter."""
    return predicate(flt)(metadata)


def predicate(flt: MetadataFilter) -> Predicate:
    """The filter compiled once into a function of a document's metadata (bounds parsed
    ahead), for testing many documents."""
    operator = flt.operator
    if operator in ("andAll", "orAll"):
        parts = [predicate(child) for child in flt.children]
        if operator == "andAll":
            return lambda metadata: all(part(metadata) for part in parts)
        return lambda metadata: any(part(metadata) for part in parts)
    condition = flt.condition
    key = condition.key
    if operator in RANGES:
        test = _range_test(operator, condition.value)
        return lambda metadata: key in metadata and test(metadata[key])
    wanted = condition.value if isinstance(condition.value, list) else [condition.value]
    return lambda metadata: key in metadata and any(_equal(metadata[key], w) for w in wanted)


def _equal(stored: MetaValue, wanted: object) -> bool:
    if isinstance(stored, list):
        return isinstance(wanted, str) and wanted in stored
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return isinstance(wanted, bool) and isinstance(stored, bool) and stored == wanted
    if isinstance(wanted, str) or isinstance(stored, str):
        return isinstance(wanted, str) and isinstance(stored, str) and stored == wanted
    return float(stored) == float(wanted)  # type: ignore[arg-type]


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "greaterThan": lambda left, right: bool(left > right),
    "greaterThanOrEquals": lambda left, right: bool(left >= right),
    "lessThan": lambda left, right: bool(left < right),
    "lessThanOrEquals": lambda left, right: bool(left <= right),
}


def _range_test(operator: str, bound: object) -> Callable[[MetaValue], bool]:
    """A stored value's test against one bound: numbers with numbers, dates with dates."""
    compare = _COMPARE[operator]
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        limit = float(bound)

        def numeric(stored: MetaValue) -> bool:
            if isinstance(stored, bool) or not isinstance(stored, int | float):
                return False
            return compare(float(stored), limit)

        return numeric
    moment = as_date(bound)

    def dated(stored: MetaValue) -> bool:
        parsed = _cached_date(stored) if isinstance(stored, str) else None
        return parsed is not None and moment is not None and compare(parsed, moment)

    return dated


@lru_cache(maxsize=65536)
def _cached_date(value: str) -> datetime | None:
    return as_date(value)


# -- the command line's short form ----------------------------------------------------------

_EXPRESSION = re.compile(r"^\s*(?P<key>[^<>=!\s]+)\s*(?P<op>>=|<=|!=|=|>|<)\s*(?P<value>.*?)\s*$")
_RANGE_SIGNS = {
    ">": "greaterThan",
    ">=": "greaterThanOrEquals",
    "<": "lessThan",
    "<=": "lessThanOrEquals",
}


def parse_expressions(texts: Iterable[str]) -> MetadataFilter | None:
    """`drac search --filter` arguments as one filter (several are ANDed): each is JSON (a
    filter object, starting with `{`) or `KEY=VALUE` (equals), `KEY=A|B|C` (in),
    `KEY>=V`, `KEY>V`, `KEY<=V`, `KEY<V` (ranges), `KEY=LOW..HIGH` (inclusive range, either
    end may be left out). Values read as numbers, `true`/`false` or strings as in `--meta`.
    Raises FilterError saying which argument is wrong."""
    filters = [_parse_one(text) for text in texts]
    if not filters:
        return None
    if len(filters) == 1:
        return filters[0]
    return _validated({"andAll": [f.to_json() for f in filters]}, "--filter")


def parse_json(text: str, origin: str = "filter") -> MetadataFilter:
    """A filter from its JSON text; FilterError naming the origin otherwise."""
    if len(text) > MAX_FILTER_CHARS:
        raise FilterError(f"{origin}: longer than {MAX_FILTER_CHARS} characters")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FilterError(f"{origin}: not valid JSON ({str(exc)[:120]})") from exc
    return _validated(data, origin)


def _validated(data: Any, origin: str) -> MetadataFilter:
    from pydantic import ValidationError

    try:
        return MetadataFilter.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'filter'}: {error['msg']}"
            for error in exc.errors()[:3]
        )
        raise FilterError(f"{origin}: {problems}") from exc


def _parse_one(text: str) -> MetadataFilter:
    origin = f"--filter {json.dumps(text[:80])}"
    if text.lstrip().startswith("{"):
        return parse_json(text, origin)
    match = _EXPRESSION.match(text)
    if match is None:
        raise FilterError(
            f"{origin}: expected KEY=VALUE, KEY=A|B, KEY>=V, KEY<V, KEY=LOW..HIGH or JSON"
        )
    key, op, raw = match["key"], match["op"], match["value"]
    if op == "!=":
        raise FilterError(f"{origin}: '!=' is not supported (use 'in' with the values wanted)")
    if not raw:
        raise FilterError(f"{origin}: no value after {op!r}")
    if op in _RANGE_SIGNS:
        return _validated({_RANGE_SIGNS[op]: {"key": key, "value": scalar(raw)}}, origin)
    if ".." in raw:
        low, high = raw.split("..", 1)
        bounds = [
            (name, scalar(v))
            for name, v in (("greaterThanOrEquals", low), ("lessThanOrEquals", high))
            if v
        ]
        if bounds and all(_orderable(v) for _, v in bounds):
            parts = [{name: {"key": key, "value": value}} for name, value in bounds]
            return _validated(parts[0] if len(parts) == 1 else {"andAll": parts}, origin)
    if "|" in raw:
        values = [scalar(v) for v in raw.split("|")]
        return _validated({"in": {"key": key, "value": values}}, origin)
    return _validated({"equals": {"key": key, "value": scalar(raw)}}, origin)


def _orderable(value: object) -> bool:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    return numeric or as_date(value) is not None
