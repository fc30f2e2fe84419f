"""The per-document session policy: exactly the scope's objects, within AssumeRole's limits,
and no key that widens it (a key's own `*`, `?` or `$`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from drac.aws.document_access import (
    SESSION_POLICY_LIMIT,
    SESSION_SECONDS,
    DocumentScope,
    exact_key,
    session_name,
    session_policy,
)
from drac.errors import DocumentError
from tests.e2e.iam import Request, Statement, evaluate


def _allows(policy: str, action: str, arn: str) -> bool:
    statements = [Statement.from_json(s) for s in json.loads(policy)["Statement"]]
    return evaluate(Request(action=action, resource=arn), statements).allowed


def test_the_policy_names_exactly_the_scope() -> None:
    scope = DocumentScope(
        reads=(("docs", "incoming/acme/a.pdf"),), writes=(("art", "pages/d1/*"),)
    )
    policy = session_policy(scope)
    assert _allows(policy, "s3:GetObject", "arn:aws:s3:::docs/incoming/acme/a.pdf")
    assert _allows(policy, "s3:GetObjectVersion", "arn:aws:s3:::docs/incoming/acme/a.pdf")
    assert _allows(policy, "s3:PutObject", "arn:aws:s3:::art/pages/d1/00001.png")
    for action, arn in [
        ("s3:GetObject", "arn:aws:s3:::docs/incoming/acme/a.pdf.metadata.json"),
        ("s3:GetObject", "arn:aws:s3:::docs/incoming/beta/a.pdf"),
        ("s3:PutObject", "arn:aws:s3:::docs/incoming/acme/a.pdf"),
        ("s3:PutObject", "arn:aws:s3:::art/pages/d2/00001.png"),
        ("s3:GetObject", "arn:aws:s3:::art/pages/d1/00001.png"),
        ("s3:DeleteObject", "arn:aws:s3:::art/pages/d1/00001.png"),
        ("s3:ListBucket", "arn:aws:s3:::docs"),
    ]:
        assert not _allows(policy, action, arn), (action, arn)


@pytest.mark.parametrize("key", ["incoming/acme/*", "incoming/acme/?x", "incoming/acme/${*}"])
def test_a_keys_wildcards_match_only_one_character_in_place(key: str) -> None:
    policy = session_policy(DocumentScope(reads=(("docs", key),), writes=()))
    (resource,) = json.loads(policy)["Statement"][0]["Resource"]
    assert "*" not in resource and "$" not in resource
    assert _allows(policy, "s3:GetObject", f"arn:aws:s3:::docs/{key}")
    assert not _allows(policy, "s3:GetObject", "arn:aws:s3:::docs/incoming/acme/a/b/c.pdf")
    assert exact_key("incoming/a/b.pdf") == "incoming/a/b.pdf"


def test_a_policy_over_the_limit_fails_the_document_by_name() -> None:
    longest = "incoming/acme/" + "k" * 1000
    fits = session_policy(DocumentScope(reads=(("docs", longest),), writes=()))
    assert len(fits) <= SESSION_POLICY_LIMIT
    with pytest.raises(DocumentError, match="2048"):
        session_policy(
            DocumentScope(reads=(("docs", longest),), writes=(("art", "p/" + "k" * 1000),))
        )


def test_the_session_name_is_one_sts_accepts() -> None:
    name = session_name("a/b c" + "x" * 100)
    assert len(name) <= 64 and name.startswith("drac-a-b-c")
    assert SESSION_SECONDS == 900


def test_the_runtime_assumes_the_access_role_with_the_policy(cloud: Any) -> None:
    rt, _ = cloud
    calls: list[dict[str, Any]] = []

    class Sts:
        def assume_role(self, **request: Any) -> dict[str, Any]:
            calls.append(request)
            return {"Credentials": {"AccessKeyId": "k", "SecretAccessKey": "s",
                                    "SessionToken": "t"}}

    class Session:
        def client(self, service: str, **kwargs: Any) -> Any:
            assert service == "sts"
            assert kwargs["endpoint_url"] == "https://sts.us-east-1.amazonaws.com"
            return Sts()

    rt.session = Session()
    rt._clients.clear()
    made: list[Any] = []
    rt._session_for = lambda credentials: made.append(credentials) or "scoped"
    scope = DocumentScope(reads=(("docs", "incoming/a.pdf"),), writes=())
    scoped = rt.for_document("d1", scope)
    assert scoped.session == "scoped" and made[0]["AccessKeyId"] == "k"
    (call,) = calls
    assert call["RoleArn"] == rt.resources.converter_access_role_arn
    assert call["Policy"] == session_policy(scope)
    assert call["DurationSeconds"] == 900 and call["RoleSessionName"] == "drac-d1"
