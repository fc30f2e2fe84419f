"""Buckets and tables: encryption, TLS, versioning, public access, events, lifecycle, PITR."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infrastructure.conftest import Synth

BLOCK_ALL = {
    "BlockPublicAcls": True,
    "BlockPublicPolicy": True,
    "IgnorePublicAcls": True,
    "RestrictPublicBuckets": True,
}


def bucket(synth: Synth, name: str) -> tuple[str, dict[str, Any]]:
    construct = getattr(synth.stack.storage, name)
    logical_id = synth.logical_id(construct)
    return logical_id, synth.resources[logical_id]["Properties"]


@pytest.mark.parametrize("name", ["documents", "artifacts", "access_logs"])
def test_every_bucket_is_private_encrypted_and_tls_only(synth: Synth, name: str) -> None:
    logical_id, props = bucket(synth, name)
    assert props["PublicAccessBlockConfiguration"] == BLOCK_ALL
    rule = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in {"AES256", "aws:kms"}
    policies = [
        p["Properties"]
        for p in synth.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": logical_id}
    ]
    assert len(policies) == 1
    denies = [
        s
        for s in policies[0]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Deny"
        and s["Action"] == "s3:*"
        and s.get("Condition") == {"Bool": {"aws:SecureTransport": "false"}}
    ]
    assert len(denies) == 1 and denies[0]["Principal"] == {"AWS": "*"}
    assert len(denies[0]["Resource"]) == 2, "the bucket and its objects"


@pytest.mark.parametrize("name", ["documents", "artifacts"])
def test_data_buckets_are_versioned_and_logged(synth: Synth, name: str) -> None:
    _, props = bucket(synth, name)
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    access_logs = synth.logical_id(synth.stack.storage.access_logs)
    assert props["LoggingConfiguration"]["DestinationBucketName"] == {"Ref": access_logs}


def test_documents_bucket_sends_events_to_eventbridge(synth: Synth) -> None:
    logical_id, _ = bucket(synth, "documents")
    notifications = [
        n["Properties"]
        for n in synth.of_type("Custom::S3BucketNotifications").values()
        if n["Properties"]["BucketName"] == {"Ref": logical_id}
    ]
    assert len(notifications) == 1
    assert notifications[0]["NotificationConfiguration"] == {"EventBridgeConfiguration": {}}


def test_page_images_expire(synth: Synth) -> None:
    _, props = bucket(synth, "artifacts")
    rules = {rule["Id"]: rule for rule in props["LifecycleConfiguration"]["Rules"]}
    pages = rules["expire-page-images"]
    assert pages["Prefix"] == "pages/" and pages["Status"] == "Enabled"
    assert pages["ExpirationInDays"] == 30  # cdk.json pageImageExpirationDays
    # Nothing outside pages/ and runs/ (Markdown, plans: the audit trail) expires.
    assert all(
        "ExpirationInDays" not in r or r.get("Prefix") in {"pages/", "runs/"}
        for r in rules.values()
    )


def test_retain_policy_keeps_stateful_resources(synth: Synth) -> None:
    for kind in ("AWS::S3::Bucket", "AWS::DynamoDB::Table"):
        for logical_id, resource in synth.of_type(kind).items():
            assert resource.get("DeletionPolicy") == "Retain", logical_id
            assert resource.get("UpdateReplacePolicy") == "Retain", logical_id


EXPECTED_TABLES = {
    "documents_table": ({"document_id": "S"}, ["document_id"]),
    "sources_table": ({"source": "S"}, ["source"]),
    "elements_table": ({"document_id": "S", "seq": "N"}, ["document_id", "seq"]),
    "plans_table": ({"document_id": "S", "version": "N"}, ["document_id", "version"]),
    "ledger_table": ({"document_id": "S", "entry": "S"}, ["document_id", "entry"]),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_TABLES))
def test_tables_have_keys_pitr_and_encryption(synth: Synth, name: str) -> None:
    attributes, keys = EXPECTED_TABLES[name]
    props = synth.resources[synth.logical_id(getattr(synth.stack.storage, name))]["Properties"]
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["SSESpecification"] == {"SSEEnabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert [k["AttributeName"] for k in props["KeySchema"]] == keys
    defined = {a["AttributeName"]: a["AttributeType"] for a in props["AttributeDefinitions"]}
    assert {k: defined[k] for k in attributes} == attributes


def test_ledger_and_plan_cache_expire_by_the_attribute_the_code_writes(synth: Synth) -> None:
    from drac.aws.dynamo import EXPIRES_AT

    storage = synth.stack.storage
    for name in EXPECTED_TABLES:
        props = synth.resources[synth.logical_id(getattr(storage, name))]["Properties"]
        if name in ("ledger_table", "plans_table"):
            assert props["TimeToLiveSpecification"] == {
                "AttributeName": EXPIRES_AT,
                "Enabled": True,
            }, name
        else:  # documents, sources and elements never expire
            assert "TimeToLiveSpecification" not in props, name


def test_live_documents_and_sources_have_the_indexes_the_code_queries(synth: Synth) -> None:
    """The re-plan manifest pages the live documents of a tenant; retirement asks which keys
    still hold a document."""
    import inspect

    from drac.aws.dynamo import DynamoDocumentRegistry

    queried = {
        name: parameter.default
        for name, parameter in inspect.signature(DynamoDocumentRegistry).parameters.items()
    }
    storage = synth.stack.storage
    documents = synth.resources[synth.logical_id(storage.documents_table)]["Properties"]
    (live,) = documents["GlobalSecondaryIndexes"]
    assert live["IndexName"] == queried["live_index"]
    assert live["KeySchema"] == [
        {"AttributeName": "live_tenant", "KeyType": "HASH"},
        {"AttributeName": "document_id", "KeyType": "RANGE"},
    ]
    sources = synth.resources[synth.logical_id(storage.sources_table)]["Properties"]
    assert sources["KeySchema"] == [{"AttributeName": "source", "KeyType": "HASH"}]
    (by_document,) = sources["GlobalSecondaryIndexes"]
    assert by_document["IndexName"] == queried["document_index"]
    assert by_document["KeySchema"] == [{"AttributeName": "document_id", "KeyType": "HASH"}]
    assert len(synth.of_type("AWS::DynamoDB::Table")) == 5


WRITES = ["s3:PutObject*", "s3:DeleteObject*", "s3:Replicate*", "s3:RestoreObject"]


def test_tenant_writes_are_confined_by_the_documents_bucket_policy(alternate: Synth) -> None:
    """One Deny per tenant of tenantPrincipals (its principals write only under
    incoming/<tenant>/) and one for all (only the tenants' principals, the admins and the
    stack's bucket-emptying role, with removalPolicy=destroy, write under incoming/)."""
    logical_id, _ = bucket(alternate, "documents")
    (policy,) = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in alternate.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": logical_id}
    ]
    tenant_statements = [s for s in policy if "Tenant" in s.get("Sid", "")]
    arn = {"Fn::GetAtt": [logical_id, "Arn"]}
    acme = "arn:aws:iam::123456789012:role/acme-app"
    beta = "arn:aws:iam::123456789012:role/apps/beta-app"
    operator = "arn:aws:iam::123456789012:role/operator"
    assert len(tenant_statements) == 3 and all(
        s["Effect"] == "Deny"
        and s["Principal"] == {"AWS": "*"}
        and sorted(s["Action"]) == sorted(WRITES)
        for s in tenant_statements
    )
    by_sid = {s["Sid"]: s for s in tenant_statements}
    acme_only = by_sid["Tenant0WritesOnlyItsPrefix"]
    assert acme_only["NotResource"] == {"Fn::Join": ["", [arn, "/incoming/acme/*"]]}
    assert acme_only["Condition"] == {"ArnEquals": {"aws:PrincipalArn": [acme]}}
    beta_only = by_sid["Tenant1WritesOnlyItsPrefix"]
    assert beta_only["NotResource"] == {"Fn::Join": ["", [arn, "/incoming/beta/*"]]}
    everyone = by_sid["OnlyTenantsAndAdminsWriteIncoming"]
    assert everyone["Resource"] == {"Fn::Join": ["", [arn, "/incoming/*"]]}
    writers = everyone["Condition"]["ArnNotEquals"]["aws:PrincipalArn"]
    assert writers[:3] == [acme, beta, operator]
    (emptier,) = writers[3:]
    (role,) = emptier["Fn::GetAtt"][:1]
    assert alternate.resources[role]["Type"] == "AWS::IAM::Role"
    assert "AutoDeleteObjects" in role


def test_too_many_tenants_for_a_bucket_policy_are_refused() -> None:
    """S3 limits a bucket policy to 20 KB: a mapping that cannot fit stops the synth."""
    from infra.tenancy import check_policy_size

    def mapping(count: int) -> dict[str, str]:
        return {f"arn:aws:iam::123456789012:role/apps/t{i}-search": f"t{i}" for i in range(count)}

    check_policy_size(mapping(30), ["arn:aws:iam::123456789012:role/operator"])
    with pytest.raises(ValueError, match="60 tenants need a documents bucket policy"):
        check_policy_size(mapping(60), ["arn:aws:iam::123456789012:role/operator"])


def test_no_tenant_statements_without_tenants(synth: Synth) -> None:
    logical_id, _ = bucket(synth, "documents")
    statements = [
        s
        for p in synth.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": logical_id}
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    assert not [s for s in statements if "Tenant" in s.get("Sid", "")]
