"""Who may read and re-plan which tenant: the caller's IAM identity, never the request body.

The deployment maps IAM principals to tenants (`tenantPrincipals`: role or user ARN -> tenant)
and names admin principals (`adminPrincipals`) that may read or re-plan any tenant or all of
them. The retrieval API learns its caller from the function URL event
(`requestContext.authorizer.iam.userArn`, set by Lambda after SigV4 authentication); re-plan
events carry no caller, so their `source` names the scope (`drac.tenant.<tenant>` or
`drac.admin`) and the event bus policy lets only the mapped principals send each source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from drac.aws.errors import Forbidden
from drac.aws.events import ReplanRequest
from drac.settings import Settings

REPLAN_ADMIN_SOURCE = "drac.admin"
REPLAN_TENANT_SOURCE_PREFIX = "drac.tenant."
_ASSUMED_ROLE = re.compile(r"arn:(aws[a-z-]*):sts::(\d{12}):assumed-role/([^/]+)/.+")
_IAM_PRINCIPAL = re.compile(r"arn:(aws[a-z-]*):iam::(\d{12}):(role|user)/(?:.*/)?([^/]+)")


@dataclass(frozen=True)
class CallerScope:
    """What one caller may reach: its tenant, or everything for an admin."""

    principal: str
    tenant: str | None
    admin: bool = False


def tenant_source(tenant: str) -> str:
    """The `source` a re-plan event of one tenant is sent with."""
    return f"{REPLAN_TENANT_SOURCE_PREFIX}{tenant}"


def principal_key(arn: str) -> tuple[str, str, str, str] | None:
    """(partition, account, kind, name) of an IAM role or user ARN, or of the assumed-role
    session ARN a role's caller arrives as (its path is not part of a session ARN, so roles
    compare by account and name); None for anything else."""
    session = _ASSUMED_ROLE.fullmatch(arn)
    if session:
        partition, account, name = session.groups()
        return partition, account, "role", name
    principal = _IAM_PRINCIPAL.fullmatch(arn)
    if principal:
        partition, account, kind, name = principal.groups()
        return partition, account, kind, name
    return None


def caller_scope(settings: Settings, caller_arn: str | None) -> CallerScope:
    """The scope of the caller with this ARN; Forbidden when the deployment does not map it."""
    key = principal_key(caller_arn or "")
    if key is None:
        raise Forbidden("the caller has no IAM identity this API knows")
    if any(principal_key(arn) == key for arn in settings.cloud.admin_principals):
        return CallerScope(principal=caller_arn or "", tenant=None, admin=True)
    for arn, tenant in settings.cloud.tenant_principals.items():
        if principal_key(arn) == key:
            return CallerScope(principal=caller_arn or "", tenant=tenant)
    raise Forbidden(f"{caller_arn} is mapped to no tenant (tenantPrincipals)")


def function_url_caller(event: dict[str, Any]) -> str | None:
    """The caller's ARN in a function URL event with AWS_IAM auth (None when absent)."""
    context = event.get("requestContext") or {}
    iam = (context.get("authorizer") or {}).get("iam") or {}
    arn = iam.get("userArn")
    return arn if isinstance(arn, str) else None


def replan_scope(settings: Settings, source: str) -> CallerScope:
    """The scope a re-plan event's source stands for; Forbidden for any other source (the
    bus policy lets only the principals mapped to a source send it)."""
    if source == REPLAN_ADMIN_SOURCE:
        return CallerScope(principal=source, tenant=None, admin=True)
    tenant = source.removeprefix(REPLAN_TENANT_SOURCE_PREFIX)
    if source.startswith(REPLAN_TENANT_SOURCE_PREFIX) and tenant in set(
        settings.cloud.tenant_principals.values()
    ):
        return CallerScope(principal=source, tenant=tenant)
    raise Forbidden(f"re-plan source {source!r} names no configured tenant")


def scoped_replan(scope: CallerScope, request: ReplanRequest) -> ReplanRequest:
    """The re-plan request if the scope covers it: a tenant's request names that tenant and
    never `all`; Forbidden otherwise. Admins' requests pass as they are."""
    if scope.admin:
        return request
    if request.all:
        raise Forbidden(f'tenant {scope.tenant!r} may not re-plan "all" tenants')
    if request.tenant != scope.tenant:
        raise Forbidden(f"tenant {scope.tenant!r} may not re-plan tenant {request.tenant!r}")
    return request
