"""Helpers that build the stack's AWS resources on moto (the fixtures are in
tests/unit/conftest.py)."""

from __future__ import annotations

from typing import Any

REGION = "us-east-1"


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


MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:Drac-ingest"


def make_stack_tables(session: Any) -> None:
    """The stack's tables with their key schemas and indexes (tests/infrastructure checks
    the template declares the same)."""
    ddb = session.client("dynamodb")

    def create(name: str, keys: list[tuple[str, str, str]], indexes: list[dict] = ()) -> None:
        attributes = {name: kind for name, kind, _ in keys}
        for index in indexes:
            attributes.update({k["AttributeName"]: "S" for k in index["KeySchema"]})
        ddb.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": k, "AttributeType": t}
                                  for k, t in attributes.items()],
            KeySchema=[{"AttributeName": n, "KeyType": role} for n, _, role in keys],
            **({"GlobalSecondaryIndexes": list(indexes)} if indexes else {}),
        )

    keys_only = {"ProjectionType": "KEYS_ONLY"}
    create("documents", [("document_id", "S", "HASH")], [
        {"IndexName": "live-documents", "Projection": keys_only,
         "KeySchema": [{"AttributeName": "live_tenant", "KeyType": "HASH"},
                       {"AttributeName": "document_id", "KeyType": "RANGE"}]}])
    create("sources", [("source", "S", "HASH")], [
        {"IndexName": "by-document", "Projection": keys_only,
         "KeySchema": [{"AttributeName": "document_id", "KeyType": "HASH"}]}])
    create("elements", [("document_id", "S", "HASH"), ("seq", "N", "RANGE")])
    create("plans", [("document_id", "S", "HASH"), ("version", "N", "RANGE")])
    create("ledger", [("document_id", "S", "HASH"), ("entry", "S", "RANGE")])
