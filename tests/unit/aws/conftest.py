"""moto-backed AWS for the adapter tests (no network, fake credentials)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

REGION = "us-east-1"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A moto session: yields a boto3 Session in us-east-1."""
    import boto3
    from moto import mock_aws

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield boto3.session.Session(region_name=REGION)


def make_table(session: Any, name: str, pk: str, sk: str | None, sk_type: str = "N",
               gsi: str | None = None) -> Any:
    """Create an on-demand table like the stack's; return the resource Table."""
    attrs = [{"AttributeName": pk, "AttributeType": "S"}]
    schema = [{"AttributeName": pk, "KeyType": "HASH"}]
    extra: dict[str, Any] = {}
    if sk:
        attrs.append({"AttributeName": sk, "AttributeType": sk_type})
        schema.append({"AttributeName": sk, "KeyType": "RANGE"})
    if gsi:
        attrs.append({"AttributeName": gsi, "AttributeType": "S"})
        extra["GlobalSecondaryIndexes"] = [{
            "IndexName": "by-source", "KeySchema": [{"AttributeName": gsi, "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}]
    session.client("dynamodb").create_table(
        TableName=name, AttributeDefinitions=attrs, KeySchema=schema,
        BillingMode="PAY_PER_REQUEST", **extra)
    return session.resource("dynamodb").Table(name)
