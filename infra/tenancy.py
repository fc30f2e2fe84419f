"""Tenant isolation on the write side: the documents bucket's policy, from `tenantPrincipals`.

A tenant is the key prefix `incoming/<tenant>/`, so who may write under a prefix decides whose
documents, metadata (tags, sidecars `<key>.metadata.json`, which sit beside their document under
the same prefix) and deletions enter that tenant's index. The same mapping that decides what a
principal reads and re-plans (`drac.aws.identity`) decides where it writes: one list, reviewed
with the code, no second place to keep in step.

Two explicit Deny statements per tenant (an explicit Deny in a resource policy wins over every
Allow of the account's identity policies; IAM User Guide, "Policy evaluation logic"):

- the tenant's principals may write nothing outside `incoming/<tenant>/` (NotResource);
- nobody but the tenant's principals and the admins may write under `incoming/<tenant>/`.

Keys outside every configured tenant's prefix (documents without a tenant, `incoming/<x>/` of a
tenant not configured) are left to the account's identity policies, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aws_cdk import aws_iam as iam

from drac.aws.events import INCOMING_PREFIX

# Every request that creates, replaces, deletes or re-labels an object (or one of its
# versions): PutObject (also CopyObject's destination and multipart uploads), its tagging, ACL,
# retention and legal hold; DeleteObject and its version and tagging forms; replication's
# writes (a replication role of another bucket writes replicas with them); RestoreObject.
WRITE_ACTIONS = ("s3:PutObject*", "s3:DeleteObject*", "s3:Replicate*", "s3:RestoreObject")


def tenant_prefix(tenant: str) -> str:
    """The key prefix of one tenant's uploads."""
    return f"{INCOMING_PREFIX}{tenant}/"


def tenants_of(mapping: Mapping[str, str]) -> dict[str, list[str]]:
    """Tenant -> its principals (sorted), from the principal -> tenant mapping."""
    tenants: dict[str, list[str]] = {}
    for arn, tenant in sorted(mapping.items()):
        tenants.setdefault(tenant, []).append(arn)
    return dict(sorted(tenants.items()))


def tenant_write_statements(
    bucket_arn: str,
    tenant_principals: Mapping[str, str],
    admin_principals: Iterable[str],
    exempt: Iterable[str] = (),
) -> list[iam.PolicyStatement]:
    """The bucket policy statements that confine each tenant's principals to their own prefix
    and keep everyone else but the admins (and `exempt` roles of the stack itself, such as the
    one that empties the bucket when the stack is destroyed) out of it."""
    admins, exempt = sorted(admin_principals), sorted(exempt)
    statements = []
    for index, (tenant, principals) in enumerate(tenants_of(tenant_principals).items()):
        objects = f"{bucket_arn}/{tenant_prefix(tenant)}*"
        statements.append(
            iam.PolicyStatement(
                sid=f"Tenant{index}WritesOnlyItsPrefix",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=list(WRITE_ACTIONS),
                not_resources=[objects],
                conditions={"ArnEquals": {"aws:PrincipalArn": principals}},
            )
        )
        statements.append(
            iam.PolicyStatement(
                sid=f"OnlyTenant{index}WritesItsPrefix",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=list(WRITE_ACTIONS),
                resources=[objects],
                conditions={"ArnNotEquals": {"aws:PrincipalArn": [*principals, *admins, *exempt]}},
            )
        )
    return statements
