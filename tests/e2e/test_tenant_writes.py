"""Tenants are isolated on the write side too: the documents bucket's policy (generated from
`tenantPrincipals`, infra/tenancy.py) keeps a tenant's uploader inside its own
`incoming/<tenant>/` prefix and everyone but that tenant's principals and the admins out of
it. Every upload, delete, tag and sidecar here is made through a session whose calls are
evaluated against the caller's identity policy and the stack's bucket policy together, as AWS
does within one account (an explicit Deny in either wins)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError
from shared_paths import VELVERA

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.authorization import Permission, s3_object_arn
from tests.e2e.conftest import ACME_ROLE, ADMIN_ROLE, BETA_ROLE
from tests.e2e.harness import Cloud
from tests.e2e.iam import Request, Statement, evaluate

POLICY = (VELVERA / "md" / "environmental_policy.md").read_bytes()
CONTACT = (VELVERA / "md" / "contact_info.md").read_bytes()
OUTSIDER = "arn:aws:iam::123456789012:role/some-ci-job"
ACME_KEY = "incoming/acme/policy.md"
BETA_KEY = "incoming/beta/contact.md"


def everything_on(bucket: str) -> tuple[Statement, ...]:
    """A careless identity policy: every S3 action on the whole documents bucket."""
    return (
        Statement.from_json(
            {
                "Effect": "Allow",
                "Action": "s3:*",
                "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
            },
            "caller policy",
        ),
    )


def s3_as(deployed: Cloud, role: str) -> Any:
    """An S3 client of `role` (identity policy: s3:* on the bucket)."""
    caller = deployed.caller(role, everything_on(deployed.documents_bucket))
    return deployed.caller_session(caller).client("s3", region_name=deployed.region)


def sidecar(attributes: dict[str, Any]) -> bytes:
    return json.dumps({"metadataAttributes": attributes}).encode()


@pytest.fixture
def uploaded(cloud: Any) -> tuple[Cloud, str]:
    """acme's and beta's uploaders each put a document (and acme a sidecar) into their own
    prefix; returns the acme version id."""
    deployed, _bedrock, _opensearch, _pdf = cloud
    acme, beta = s3_as(deployed, ACME_ROLE), s3_as(deployed, BETA_ROLE)
    acme.put_object(
        Bucket=deployed.documents_bucket,
        Key=ACME_KEY + ".metadata.json",
        Body=sidecar({"dept": "sustainability"}),
    )
    version = acme.put_object(Bucket=deployed.documents_bucket, Key=ACME_KEY, Body=POLICY)
    beta.put_object(Bucket=deployed.documents_bucket, Key=BETA_KEY, Body=CONTACT)
    deployed.settle()
    return deployed, version["VersionId"]


def test_a_tenants_own_writes_flow_to_indexed(uploaded: Any) -> None:
    deployed, _version = uploaded
    registry = deployed.runtime.registry
    acme = registry.get(document_id_for(POLICY, "acme"))
    beta = registry.get(document_id_for(CONTACT, "beta"))
    assert acme is not None and acme.status is DocumentStatus.INDEXED
    assert beta is not None and beta.status is DocumentStatus.INDEXED
    assert acme.metadata == {"dept": "sustainability"}  # acme's own sidecar was read
    assert deployed.log.take_denials() == []


def test_another_tenants_uploader_cannot_add_delete_tag_or_attach_a_sidecar(
    uploaded: Any,
) -> None:
    deployed, version = uploaded
    bucket = deployed.documents_bucket
    beta = s3_as(deployed, BETA_ROLE)
    attempts = {
        "add a document": lambda: beta.put_object(
            Bucket=bucket, Key="incoming/acme/injected.md", Body=CONTACT
        ),
        "replace a document": lambda: beta.put_object(Bucket=bucket, Key=ACME_KEY, Body=CONTACT),
        "copy into the prefix": lambda: beta.copy_object(
            Bucket=bucket,
            Key="incoming/acme/copied.md",
            CopySource={"Bucket": bucket, "Key": BETA_KEY},
        ),
        "delete a document": lambda: beta.delete_object(Bucket=bucket, Key=ACME_KEY),
        "delete a version": lambda: beta.delete_object(
            Bucket=bucket, Key=ACME_KEY, VersionId=version
        ),
        "delete in a batch": lambda: beta.delete_objects(
            Bucket=bucket, Delete={"Objects": [{"Key": ACME_KEY}]}
        ),
        "tag a document": lambda: beta.put_object_tagging(
            Bucket=bucket,
            Key=ACME_KEY,
            Tagging={"TagSet": [{"Key": "drac-dept", "Value": "forged"}]},
        ),
        "untag a document": lambda: beta.delete_object_tagging(Bucket=bucket, Key=ACME_KEY),
        "replace the sidecar": lambda: beta.put_object(
            Bucket=bucket, Key=ACME_KEY + ".metadata.json", Body=sidecar({"dept": "forged"})
        ),
        "add a sidecar": lambda: beta.put_object(
            Bucket=bucket,
            Key="incoming/acme/other.md.metadata.json",
            Body=sidecar({"dept": "forged"}),
        ),
        "write without a tenant": lambda: beta.put_object(
            Bucket=bucket, Key="incoming/stray.md", Body=CONTACT
        ),
        "write to an unconfigured tenant": lambda: beta.put_object(
            Bucket=bucket, Key="incoming/gamma/stray.md", Body=CONTACT
        ),
    }
    for name, attempt in attempts.items():
        with pytest.raises(ClientError) as raised:
            attempt()
        assert raised.value.response["Error"]["Code"] == "AccessDenied", name

    denials = deployed.log.take_denials()
    assert len(denials) == len(attempts)
    # every one was the bucket policy's explicit Deny (its identity policy allows them all)
    policy = _documents_bucket_policy(deployed)
    assert all(d.reason.startswith(f"explicit deny in {policy}[") for d in denials), denials
    identity = everything_on(bucket)
    for denial in denials:
        request = Request(action=denial.action, resource=denial.resource, principal=BETA_ROLE)
        assert evaluate(request, identity).allowed, denial

    deployed.settle()
    registry = deployed.runtime.registry
    acme = registry.get(document_id_for(POLICY, "acme"))
    assert acme is not None and acme.status is DocumentStatus.INDEXED
    assert acme.metadata == {"dept": "sustainability"}
    assert len(deployed.executions("ingest")) == 2  # nothing beta tried started an ingest


def test_only_the_tenants_principals_and_admins_write_its_prefix(uploaded: Any) -> None:
    deployed, _version = uploaded
    bucket = deployed.documents_bucket
    outsider = s3_as(deployed, OUTSIDER)
    for key in (ACME_KEY, BETA_KEY, "incoming/beta/new.md", "incoming/stray.md"):
        with pytest.raises(ClientError) as raised:
            outsider.put_object(Bucket=bucket, Key=key, Body=CONTACT)
        assert raised.value.response["Error"]["Code"] == "AccessDenied"
    with pytest.raises(ClientError):
        outsider.delete_object(Bucket=bucket, Key=BETA_KEY)
    assert len(deployed.log.take_denials()) == 5

    # the policy alone, for principals whose writes would start ingests: the admin may write
    # any tenant's prefix, acme's uploader only its own (its own tags and sidecars too)
    identity = everything_on(bucket)
    for role, key, allowed in [
        (ADMIN_ROLE, ACME_KEY, True),
        (ADMIN_ROLE, BETA_KEY, True),
        (ACME_ROLE, ACME_KEY + ".metadata.json", True),
        (ACME_ROLE, BETA_KEY + ".metadata.json", False),
        (OUTSIDER, "incoming/stray.md", False),  # with tenants, incoming/ is theirs
        (ADMIN_ROLE, "incoming/stray.md", True),  # documents without a tenant: admins
    ]:
        for action in ("s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObjectVersion"):
            arn = s3_object_arn(bucket, key, deployed.authorizer.caller)
            result = deployed.authorizer.evaluate(role, identity, Permission(action, arn))
            assert result.allowed is allowed, (role, key, action, result)


def _documents_bucket_policy(deployed: Cloud) -> str:
    """The logical id of the documents bucket's policy."""
    bucket_arn = f"arn:aws:s3:::{deployed.documents_bucket}"
    for patterns, statements in deployed.authorizer.resource_policies:
        if bucket_arn in patterns:
            return statements[0].source.split("[")[0]
    raise AssertionError("no policy on the documents bucket")
