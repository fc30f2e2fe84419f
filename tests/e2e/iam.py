"""A small IAM policy evaluator: does a set of policy statements allow one request?

It implements the parts of AWS's evaluation logic the stack's policies use (see the IAM User
Guide, "Policy evaluation logic" and "Condition operators"):

- an explicit Deny in any applicable statement wins over every Allow;
- otherwise an Allow whose Action, Resource, Principal and Condition all match allows;
- otherwise the request is implicitly denied.

Action patterns match case-insensitively with `*` and `?`; resource ARNs case-sensitively with
`*` and `?` (which match across `:` and `/`). Anything this module does not model -- policy
variables, an unknown condition operator -- raises `UnsupportedPolicy` instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class UnsupportedPolicy(ValueError):
    """A policy uses something the evaluator does not implement (so it cannot decide)."""


class Decision(StrEnum):
    """The outcome of evaluating one request."""

    ALLOW = "allow"
    IMPLICIT_DENY = "implicit deny"
    EXPLICIT_DENY = "explicit deny"


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


class Statement(BaseModel):
    """One policy statement with every field normalised to lists (as IAM reads them)."""

    model_config = ConfigDict(frozen=True)

    effect: str
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    not_resources: tuple[str, ...] = ()
    principals: dict[str, tuple[str, ...]] | None = None
    """None for identity policies; {"AWS": (...), "Service": (...)} or {"*": ("*",)}."""
    conditions: dict[str, dict[str, tuple[str, ...]]] = Field(default_factory=dict)
    source: str = ""
    """Where the statement comes from (policy name and index), for messages."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> Statement:
        """Read a statement as it appears in a policy document (values already resolved)."""
        if data.get("Effect") not in {"Allow", "Deny"}:
            raise UnsupportedPolicy(f"{source}: Effect must be Allow or Deny, got {data!r}")
        if "NotPrincipal" in data:
            raise UnsupportedPolicy(f"{source}: NotPrincipal is not supported")
        principals = None
        if "Principal" in data:
            raw = data["Principal"]
            if raw == "*":
                principals = {"*": ("*",)}
            elif isinstance(raw, Mapping):
                principals = {kind: tuple(str(v) for v in _as_list(values))
                              for kind, values in raw.items()}
            else:
                raise UnsupportedPolicy(f"{source}: Principal {raw!r}")
        conditions = {
            operator: {key: tuple(str(v).lower() if isinstance(v, bool) else str(v)
                                  for v in _as_list(values))
                       for key, values in block.items()}
            for operator, block in (data.get("Condition") or {}).items()
        }
        for pattern in (*_as_list(data.get("Resource")), *_as_list(data.get("NotResource"))):
            if not isinstance(pattern, str):
                raise UnsupportedPolicy(f"{source}: unresolved resource {pattern!r}")
            if "${" in pattern:
                raise UnsupportedPolicy(f"{source}: policy variables are not supported: {pattern}")
        statement = cls(
            effect=data["Effect"],
            actions=tuple(_as_list(data.get("Action"))),
            not_actions=tuple(_as_list(data.get("NotAction"))),
            resources=tuple(_as_list(data.get("Resource"))),
            not_resources=tuple(_as_list(data.get("NotResource"))),
            principals=principals,
            conditions=conditions,
            source=source,
        )
        for operator in statement.conditions:
            _operator_parts(operator)  # fail at load time on an unknown operator
        return statement


class Request(BaseModel):
    """One authorisation question: may `principal` perform `action` on `resource`?"""

    model_config = ConfigDict(frozen=True)

    action: str
    resource: str
    principal: str = ""
    """The caller's ARN (a role) or a service principal such as events.amazonaws.com."""
    context: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Condition context keys (lower-cased names) and their values."""

    def __str__(self) -> str:
        return f"{self.action} on {self.resource}"


class Evaluation(BaseModel):
    """The decision and the statements that made it."""

    decision: Decision
    request: Request
    statement: str = ""
    """The deciding statement's source (the Allow, or the explicit Deny)."""

    @property
    def allowed(self) -> bool:
        """True when the request is allowed."""
        return self.decision is Decision.ALLOW


def evaluate(request: Request, statements: Iterable[Statement]) -> Evaluation:
    """Evaluate a request against identity and resource-policy statements (one account)."""
    allow: Statement | None = None
    for statement in statements:
        if not _applies(statement, request):
            continue
        if statement.effect == "Deny":
            return Evaluation(decision=Decision.EXPLICIT_DENY, request=request,
                              statement=statement.source)
        allow = allow or statement
    if allow is not None:
        return Evaluation(decision=Decision.ALLOW, request=request, statement=allow.source)
    return Evaluation(decision=Decision.IMPLICIT_DENY, request=request)


def _applies(statement: Statement, request: Request) -> bool:
    if statement.actions and not any(action_matches(p, request.action)
                                     for p in statement.actions):
        return False
    if statement.not_actions and any(action_matches(p, request.action)
                                     for p in statement.not_actions):
        return False
    if not statement.actions and not statement.not_actions:
        raise UnsupportedPolicy(f"{statement.source}: a statement needs Action or NotAction")
    if statement.resources and not any(resource_matches(p, request.resource)
                                       for p in statement.resources):
        return False
    if statement.not_resources and any(resource_matches(p, request.resource)
                                       for p in statement.not_resources):
        return False
    if statement.principals is not None and not principal_matches(statement.principals,
                                                                  request.principal):
        return False
    return conditions_hold(statement.conditions, request.context)


WILDCARDS = {"*": ".*", "?": "."}


@lru_cache(maxsize=4096)
def _glob(pattern: str, flags: int) -> re.Pattern[str]:
    regex = "".join(WILDCARDS.get(char) or re.escape(char) for char in pattern)
    return re.compile(regex, flags | re.DOTALL)


def action_matches(pattern: str, action: str) -> bool:
    """True when an Action pattern (`s3:Get*`, `*`) names the action (case-insensitive)."""
    return _glob(pattern, re.IGNORECASE).fullmatch(action) is not None


def resource_matches(pattern: str, arn: str) -> bool:
    """True when a Resource pattern (with `*` and `?`) names the ARN (case-sensitive)."""
    return _glob(pattern, 0).fullmatch(arn) is not None


def principal_matches(principals: Mapping[str, Sequence[str]], principal: str) -> bool:
    """True when a resource policy's Principal names the caller (`*`, an ARN or a service)."""
    if "*" in principals or "*" in principals.get("AWS", ()):
        return True  # everyone (the form CDK's TLS-only Deny statements use)
    if principal.endswith(".amazonaws.com"):
        return principal in principals.get("Service", ())
    for value in principals.get("AWS", ()):
        if value == "*" or value == principal:
            return True
        account = principal.split(":")[4] if principal.count(":") >= 5 else None
        if account and value in {account, f"arn:aws:iam::{account}:root"}:
            return True
    return False


def arn_like(pattern: str, arn: str) -> bool:
    """ArnLike/ArnEquals: each of the six colon-separated parts matches on its own."""
    expected, actual = pattern.split(":", 5), arn.split(":", 5)
    if len(expected) != 6 or len(actual) != 6:
        return False
    return all(resource_matches(p, a) for p, a in zip(expected, actual, strict=True))


STRING_OPERATORS = {"StringEquals", "StringNotEquals", "StringEqualsIgnoreCase",
                    "StringNotEqualsIgnoreCase", "StringLike", "StringNotLike"}
ARN_OPERATORS = {"ArnEquals", "ArnNotEquals", "ArnLike", "ArnNotLike"}
SUPPORTED_OPERATORS = STRING_OPERATORS | ARN_OPERATORS | {"Bool", "Null"}


def _operator_parts(operator: str) -> tuple[str | None, str, bool]:
    """Split `ForAnyValue:StringLikeIfExists` into (set qualifier, base operator, if-exists)."""
    qualifier, _, base = operator.rpartition(":")
    if qualifier not in {"", "ForAnyValue", "ForAllValues"}:
        raise UnsupportedPolicy(f"unknown condition set operator {qualifier!r}")
    if_exists = base.endswith("IfExists") and base != "IfExists"
    base = base.removesuffix("IfExists") if if_exists else base
    if base not in SUPPORTED_OPERATORS:
        raise UnsupportedPolicy(f"condition operator {operator!r} is not supported")
    if base == "Null" and (if_exists or qualifier):
        raise UnsupportedPolicy(f"condition operator {operator!r} is not supported")
    return qualifier or None, base, if_exists


def conditions_hold(conditions: Mapping[str, Mapping[str, Sequence[str]]],
                    context: Mapping[str, Sequence[str]]) -> bool:
    """True when every condition of a statement holds in the request context.

    Keys compare case-insensitively; several values of one key are ORed (ANDed for negated
    operators); a key missing from the context fails the condition, except for negated
    operators, `...IfExists` and `Null`, as the IAM User Guide describes.
    """
    lowered = {key.lower(): tuple(values) for key, values in context.items()}
    for operator, block in conditions.items():
        qualifier, base, if_exists = _operator_parts(operator)
        for key, expected in block.items():
            present = lowered.get(key.lower())
            if base == "Null":
                if (expected[0].lower() == "true") != (present is None):
                    return False
                continue
            negated = "Not" in base
            if present is None:
                if if_exists or negated:
                    continue
                return False
            if not _values_match(base, negated, qualifier, present, expected):
                return False
    return True


def _values_match(base: str, negated: bool, qualifier: str | None,
                  present: Sequence[str], expected: Sequence[str]) -> bool:
    positive = base.replace("Not", "")

    def one(value: str) -> bool:
        hit = any(_compare(positive, value, pattern) for pattern in expected)
        return not hit if negated else hit

    if qualifier == "ForAllValues":
        return all(one(value) for value in present)
    if qualifier == "ForAnyValue" or len(present) > 1:
        return any(one(value) for value in present)
    return one(present[0])


def _compare(operator: str, value: str, pattern: str) -> bool:
    if operator == "StringEquals":
        return value == pattern
    if operator == "StringEqualsIgnoreCase":
        return value.lower() == pattern.lower()
    if operator == "StringLike":
        return resource_matches(pattern, value)
    if operator in {"ArnEquals", "ArnLike"}:
        return arn_like(pattern, value)
    if operator == "Bool":
        return value.lower() == pattern.lower()
    raise UnsupportedPolicy(f"condition operator {operator!r} is not supported")
