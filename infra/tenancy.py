"""Tenant isolation on the write side: the documents bucket's policy, from `tenantPrincipals`.

A tenant is the key prefix `incoming/<tenant>/`, so who may write under a prefix decides whose
documents, metadata (tags, sidecars `<key>.metadata.json`, which sit beside their document under
the same prefix) and deletions enter that tenant's index. The same mapping that decides what a
principal reads and re-plans (`drac.aws.identity`) decides where it writes: one list, reviewed
with the code, no second place to keep in step.

Explicit Deny statements (an explicit Deny in a resource policy wins over every Allow of the
account's identity policies; IAM User Guide, "Policy evaluation logic"):

- one per tenant: its principals may write nothing outside `incoming/<tenant>/` (NotResource);
- one for all: nobody but the tenants' principals and the admins writes under `incoming/`, so
  once tenants are configured a principal mapped to none (or a documents-without-tenant
  upload) needs to be an admin.

Without tenants the bucket policy has none of these (any writer the account allows uploads).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from aws_cdk import aws_iam as iam

from drac.aws.events import INCOMING_PREFIX

# Every request that creates, replaces, deletes or re-labels an object (or one of its
# versions): PutObject (also CopyObject's destination and multipart uploads), its tagging, ACL,
# retention and legal hold; DeleteObject and its version and tagging forms; replication's
# writes (a replication role of another bucket writes replicas with them); RestoreObject.
WRITE_ACTIONS = ("s3:PutObject*", "s3:DeleteObject*", "s3:Replicate*", "s3:RestoreObject")


POLICY_LIMIT, POLICY_RESERVE = 20 * 1024, 2 * 1024


def tenant_prefix(tenant: str) -> str:
    """The key prefix of one tenant's uploads."""
    return f"{INCOMING_PREFIX}{tenant}/"


def tenants_of(mapping: Mapping[str, str]) -> dict[str, list[str]]:
    """Tenant -> its principals (sorted), from the principal -> tenant mapping."""
    tenants: dict[str, list[str]] = {}
    for arn, tenant in sorted(mapping.items()):
        tenants.setdefault(tenant, []).append(arn)
    return dict(sorted(tenants.items()))


def tenant_write_policy(
    bucket_arn: str,
    tenant_principals: Mapping[str, str],
    admin_principals: Iterable[str],
    exempt: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The bucket policy statements (as JSON): each tenant's principals write only under
    their own prefix, and nobody but the tenants' principals and the admins (and `exempt`
    roles of the stack itself, such as the one that empties the bucket when the stack is
    destroyed) writes under `incoming/` at all. None without tenants."""
    tenants = tenants_of(tenant_principals)
    if not tenants:
        return []
    common = {"Effect": "Deny", "Principal": {"AWS": "*"}, "Action": list(WRITE_ACTIONS)}
    writers = [*sorted(tenant_principals), *sorted(admin_principals), *sorted(exempt)]
    statements: list[dict[str, Any]] = [
        {
            "Sid": "OnlyTenantsAndAdminsWriteIncoming",
            **common,
            "Resource": f"{bucket_arn}/{INCOMING_PREFIX}*",
            "Condition": {"ArnNotEquals": {"aws:PrincipalArn": writers}},
        }
    ]
    for index, (tenant, principals) in enumerate(tenants.items()):
        statements.append(
            {
                "Sid": f"Tenant{index}WritesOnlyItsPrefix",
                **common,
                "NotResource": f"{bucket_arn}/{tenant_prefix(tenant)}*",
                "Condition": {"ArnEquals": {"aws:PrincipalArn": principals}},
            }
        )
    return statements


def check_policy_size(
    tenant_principals: Mapping[str, str], admin_principals: Iterable[str]
) -> None:
    """Refuse (ValueError) a mapping whose statements would not fit in a bucket policy, which
    S3 limits to 20 KB (S3 User Guide, "Bucket policies and user policies"), measured with the
    longest bucket ARN and with room for the statements CDK adds (TLS only, auto-delete)."""
    longest = "arn:aws-us-gov:s3:::" + "b" * 63
    emptier = "arn:aws-us-gov:iam::123456789012:role/" + "r" * 64
    size = len(
        json.dumps(
            tenant_write_policy(longest, tenant_principals, admin_principals, [emptier]),
            separators=(",", ":"),
        )
    )
    if size > POLICY_LIMIT - POLICY_RESERVE:
        raise ValueError(
            f"tenantPrincipals: {len(set(tenant_principals.values()))} tenants need a documents "
            f"bucket policy of about {size:,} bytes, over S3's {POLICY_LIMIT:,}-byte limit "
            f"(less {POLICY_RESERVE:,} for the stack's own statements): use fewer, shorter "
            "role ARNs or deploy tenants in several stacks"
        )


def tenant_write_statements(
    bucket_arn: str,
    tenant_principals: Mapping[str, str],
    admin_principals: Iterable[str],
    exempt: Iterable[str] = (),
) -> list[iam.PolicyStatement]:
    """`tenant_write_policy` as CDK statements (after `check_policy_size`)."""
    check_policy_size(tenant_principals, admin_principals)
    return [
        iam.PolicyStatement.from_json(statement)
        for statement in tenant_write_policy(
            bucket_arn, tenant_principals, admin_principals, exempt
        )
    ]
