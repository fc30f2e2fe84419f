"""The IAM evaluator the end-to-end harness enforces: wildcards, Deny, principals, conditions."""

from __future__ import annotations

import pytest

from tests.e2e.iam import (
    Decision,
    Request,
    Statement,
    UnsupportedPolicy,
    action_matches,
    arn_like,
    conditions_hold,
    evaluate,
    resource_matches,
)

BUCKET = "arn:aws:s3:::docs"
ROLE = "arn:aws:iam::123456789012:role/Register"


def allow(action, resource, **extra) -> Statement:
    return Statement.from_json({"Effect": "Allow", "Action": action, "Resource": resource,
                                **extra}, source="test")


def deny(action, resource, **extra) -> Statement:
    return Statement.from_json({"Effect": "Deny", "Action": action, "Resource": resource,
                                **extra}, source="deny")


@pytest.mark.parametrize(("pattern", "action", "expected"), [
    ("s3:GetObject", "s3:GetObject", True),
    ("s3:getobject", "S3:GetObject", True),  # actions are case-insensitive
    ("s3:Get*", "s3:GetObjectVersion", True),
    ("s3:GetObject*", "s3:GetObject", True),
    ("s3:Get*", "s3:PutObject", False),
    ("s3:GetObject", "s3:GetObjectVersion", False),  # no implicit prefix match
    ("s3:*", "s3:ListBucket", True),
    ("*", "dynamodb:Query", True),
    ("dynamodb:?etItem", "dynamodb:GetItem", True),
    ("dynamodb:?etItem", "dynamodb:BatchGetItem", False),
    ("s3:List*", "sqs:ListQueues", False),
])
def test_action_patterns(pattern: str, action: str, expected: bool) -> None:
    assert action_matches(pattern, action) is expected


@pytest.mark.parametrize(("pattern", "arn", "expected"), [
    (f"{BUCKET}/*", f"{BUCKET}/incoming/acme/a.pdf", True),  # * crosses "/"
    (f"{BUCKET}/*", BUCKET, False),  # objects only, not the bucket
    (BUCKET, f"{BUCKET}/x", False),
    ("arn:aws:dynamodb:us-east-1:1:table/T/index/*", "arn:aws:dynamodb:us-east-1:1:table/T", False),
    ("arn:aws:dynamodb:us-east-1:1:table/T/index/*",
     "arn:aws:dynamodb:us-east-1:1:table/T/index/by-source", True),
    ("arn:aws:states:*:1:execution:Drac-plan:*", "arn:aws:states:us-east-1:1:execution:Drac-plan:x",
     True),
    ("arn:aws:states:r:1:execution:Drac-plan:*", "arn:aws:states:r:1:execution:Drac-planner:x",
     False),
    ("arn:aws:s3:::Docs/*", f"{BUCKET}/a", False),  # resources are case-sensitive
    (f"{BUCKET}/a?c", f"{BUCKET}/abc", True),
    (f"{BUCKET}/a?c", f"{BUCKET}/ac", False),
    (f"{BUCKET}/a.c", f"{BUCKET}/abc", False),  # regex characters are literal
    ("*", "arn:aws:xray:us-east-1:1:anything", True),
])
def test_resource_patterns(pattern: str, arn: str, expected: bool) -> None:
    assert resource_matches(pattern, arn) is expected


def test_allow_needs_action_and_resource() -> None:
    statements = [allow(["s3:GetObject*", "s3:List*"], [BUCKET, f"{BUCKET}/*"])]
    assert evaluate(Request(action="s3:GetObject", resource=f"{BUCKET}/k"), statements).allowed
    assert evaluate(Request(action="s3:ListBucket", resource=BUCKET), statements).allowed
    denied = evaluate(Request(action="s3:PutObject", resource=f"{BUCKET}/k"), statements)
    assert denied.decision is Decision.IMPLICIT_DENY and not denied.allowed
    other = evaluate(Request(action="s3:GetObject", resource="arn:aws:s3:::other/k"), statements)
    assert other.decision is Decision.IMPLICIT_DENY


def test_explicit_deny_wins_whatever_the_order() -> None:
    request = Request(action="s3:GetObject", resource=f"{BUCKET}/secret/x")
    statements = [allow("s3:*", "*"), deny("s3:GetObject", f"{BUCKET}/secret/*")]
    for ordered in (statements, statements[::-1]):
        result = evaluate(request, ordered)
        assert result.decision is Decision.EXPLICIT_DENY and result.statement == "deny"
    assert evaluate(Request(action="s3:GetObject", resource=f"{BUCKET}/public/x"),
                    statements).allowed


def test_no_statements_is_an_implicit_deny() -> None:
    assert evaluate(Request(action="sqs:SendMessage", resource="*"), []).decision is (
        Decision.IMPLICIT_DENY)


def test_not_action_and_not_resource() -> None:
    statements = [Statement.from_json({"Effect": "Allow", "NotAction": "s3:Delete*",
                                       "NotResource": f"{BUCKET}/locked/*"})]
    assert evaluate(Request(action="s3:GetObject", resource=f"{BUCKET}/a"), statements).allowed
    assert not evaluate(Request(action="s3:DeleteObject", resource=f"{BUCKET}/a"),
                        statements).allowed
    assert not evaluate(Request(action="s3:GetObject", resource=f"{BUCKET}/locked/a"),
                        statements).allowed


def test_resource_policy_principals() -> None:
    to_events = Statement.from_json({
        "Effect": "Allow", "Principal": {"Service": "events.amazonaws.com"},
        "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:us-east-1:1:q"})
    send = Request(action="sqs:SendMessage", resource="arn:aws:sqs:us-east-1:1:q")
    assert evaluate(send.model_copy(update={"principal": "events.amazonaws.com"}),
                    [to_events]).allowed
    assert not evaluate(send.model_copy(update={"principal": ROLE}), [to_events]).allowed
    everyone = Statement.from_json({"Effect": "Allow", "Principal": {"AWS": "*"},
                                    "Action": "sqs:*", "Resource": "*"})
    assert evaluate(send.model_copy(update={"principal": ROLE}), [everyone]).allowed
    assert evaluate(send.model_copy(update={"principal": "events.amazonaws.com"}),
                    [everyone]).allowed
    account = Statement.from_json({"Effect": "Allow", "Principal": {"AWS": "123456789012"},
                                   "Action": "sqs:*", "Resource": "*"})
    assert evaluate(send.model_copy(update={"principal": ROLE}), [account]).allowed
    assert not evaluate(send.model_copy(update={"principal": "arn:aws:iam::999:role/x"}),
                        [account]).allowed


def test_cdk_tls_only_bucket_policy_denies_plain_http_only() -> None:
    tls_only = deny("s3:*", [BUCKET, f"{BUCKET}/*"], Principal={"AWS": "*"},
                    Condition={"Bool": {"aws:SecureTransport": "false"}})
    grants = [allow("s3:GetObject", f"{BUCKET}/*"), tls_only]
    request = Request(action="s3:GetObject", resource=f"{BUCKET}/a", principal=ROLE,
                      context={"aws:SecureTransport": ("true",)})
    assert evaluate(request, grants).allowed
    plain = request.model_copy(update={"context": {"aws:SecureTransport": ("false",)}})
    assert evaluate(plain, grants).decision is Decision.EXPLICIT_DENY


@pytest.mark.parametrize(("conditions", "context", "expected"), [
    ({"StringEquals": {"s3:prefix": ["a/", "b/"]}}, {"s3:prefix": ("b/",)}, True),  # values OR
    ({"StringEquals": {"s3:prefix": "a/"}}, {"s3:prefix": ("A/",)}, False),
    ({"StringEqualsIgnoreCase": {"s3:prefix": "a/"}}, {"s3:prefix": ("A/",)}, True),
    ({"StringEquals": {"s3:prefix": "a/"}}, {}, False),  # missing key: false
    ({"StringNotEquals": {"s3:prefix": "a/"}}, {}, True),  # ... but true when negated
    ({"StringNotEquals": {"s3:prefix": ["a/", "b/"]}}, {"s3:prefix": ("b/",)}, False),  # AND
    ({"StringNotEquals": {"s3:prefix": ["a/", "b/"]}}, {"s3:prefix": ("c/",)}, True),
    ({"StringLike": {"s3:prefix": "incoming/*"}}, {"s3:prefix": ("incoming/acme/",)}, True),
    ({"StringNotLike": {"s3:prefix": "incoming/*"}}, {"s3:prefix": ("runs/",)}, True),
    ({"StringEqualsIfExists": {"s3:prefix": "a/"}}, {}, True),
    ({"StringEqualsIfExists": {"s3:prefix": "a/"}}, {"s3:prefix": ("b/",)}, False),
    ({"Null": {"s3:prefix": "true"}}, {}, True),
    ({"Null": {"s3:prefix": "false"}}, {}, False),
    ({"Null": {"s3:prefix": "false"}}, {"S3:Prefix": ("x",)}, True),  # keys ignore case
    ({"Bool": {"aws:SecureTransport": True}}, {"aws:securetransport": ("true",)}, True),
    ({"ArnLike": {"aws:SourceArn": "arn:aws:events:*:1:rule/*"}},
     {"aws:SourceArn": ("arn:aws:events:us-east-1:1:rule/ObjectCreated",)}, True),
    ({"ArnLike": {"aws:SourceArn": "arn:aws:events:*:1:rule/*"}},
     {"aws:SourceArn": ("arn:aws:events:us-east-1:2:rule/ObjectCreated",)}, False),
    ({"ArnEquals": {"aws:SourceArn": "arn:aws:events:us-east-1:1:rule/A"}},
     {"aws:SourceArn": ("arn:aws:events:us-east-1:1:rule/B",)}, False),
    ({"ArnNotEquals": {"aws:SourceArn": "arn:aws:events:us-east-1:1:rule/A"}},
     {"aws:SourceArn": ("arn:aws:events:us-east-1:1:rule/B",)}, True),
    ({"ForAllValues:StringEquals": {"k": ["a", "b"]}}, {"k": ("a", "b")}, True),
    ({"ForAllValues:StringEquals": {"k": ["a"]}}, {"k": ("a", "b")}, False),
    ({"ForAnyValue:StringEquals": {"k": ["b"]}}, {"k": ("a", "b")}, True),
    # several operators and keys are ANDed
    ({"StringEquals": {"a": "1"}, "Bool": {"b": "true"}}, {"a": ("1",), "b": ("false",)}, False),
])
def test_condition_operators(conditions: dict, context: dict, expected: bool) -> None:
    statement = allow("s3:ListBucket", BUCKET, Condition=conditions)
    assert conditions_hold(statement.conditions, context) is expected


def test_arn_like_matches_part_by_part() -> None:
    assert arn_like("arn:aws:sqs:*:123:*", "arn:aws:sqs:us-east-1:123:queue")
    # "*" does not stretch over the colon between region and account in ArnLike
    assert not arn_like("arn:aws:sqs:*", "arn:aws:sqs:us-east-1:123:queue")
    assert not arn_like("arn:aws:sqs:us-east-1:123:q", "not-an-arn")


@pytest.mark.parametrize("statement", [
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*",
     "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}},
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*",
     "Condition": {"DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}}},
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*",
     "Condition": {"Whatever:StringEquals": {"k": "v"}}},
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/${aws:username}"},
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": {"Fn::GetAtt": ["B", "Arn"]}},
    {"Effect": "Allow", "NotPrincipal": {"AWS": "x"}, "Action": "s3:*", "Resource": "*"},
    {"Effect": "Maybe", "Action": "s3:*", "Resource": "*"},
])
def test_what_is_not_modelled_fails_loudly(statement: dict) -> None:
    with pytest.raises(UnsupportedPolicy):
        Statement.from_json(statement, source="p")
