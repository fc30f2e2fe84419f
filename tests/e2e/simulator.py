"""IAM's policy simulator (SimulatePrincipalPolicy) for moto, which does not implement it.

It answers from what moto stores, with the project's own evaluator (tests/e2e/iam.py): the
principal's inline and attached managed policies, its permissions boundary and the service
control policies attached to its account in moto's Organizations. As AWS evaluates them (IAM
User Guide, "Policy evaluation logic"): an explicit Deny in any of them wins; otherwise the
identity policies must allow, and so must the boundary when there is one. SCPs here only
deny (the account keeps `FullAWSAccess`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import boto3
from botocore.exceptions import ClientError

from tests.e2e.iam import Request, Statement, evaluate


def _document(value: Any) -> dict[str, Any]:
    return json.loads(value) if isinstance(value, str) else dict(value)


def _statements(document: Mapping[str, Any], source: str) -> list[Statement]:
    statements = document["Statement"]
    statements = statements if isinstance(statements, list) else [statements]
    return [Statement.from_json(s, f"{source}[{i}]") for i, s in enumerate(statements)]


def _managed(iam: Any, arn: str) -> list[Statement]:
    version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
    document = iam.get_policy_version(PolicyArn=arn, VersionId=version)["PolicyVersion"]
    return _statements(_document(document["Document"]), arn)


def identity_policies(iam: Any, principal: str) -> tuple[list[Statement], list[Statement] | None]:
    """(identity statements, permissions-boundary statements or None) of a role or user."""
    kind, name = principal.split(":", 5)[5].split("/", 1)
    name = name.rsplit("/", 1)[-1]
    if kind == "role":
        details = iam.get_role(RoleName=name)["Role"]
        inline = iam.list_role_policies(RoleName=name)["PolicyNames"]
        documents = [
            iam.get_role_policy(RoleName=name, PolicyName=p)["PolicyDocument"] for p in inline
        ]
        attached = iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]
    else:
        details = iam.get_user(UserName=name)["User"]
        inline = iam.list_user_policies(UserName=name)["PolicyNames"]
        documents = [
            iam.get_user_policy(UserName=name, PolicyName=p)["PolicyDocument"] for p in inline
        ]
        attached = iam.list_attached_user_policies(UserName=name)["AttachedPolicies"]
    statements = [
        s
        for i, d in enumerate(documents)
        for s in _statements(_document(d), f"{principal} inline {i}")
    ]
    statements += [s for policy in attached for s in _managed(iam, policy["PolicyArn"])]
    boundary = details.get("PermissionsBoundary", {}).get("PermissionsBoundaryArn")
    return statements, (_managed(iam, boundary) if boundary else None)


def service_control_policies(account: str) -> list[Statement]:
    """The statements of the SCPs attached to the account (none without an organization)."""
    organizations = boto3.client("organizations", region_name="us-east-1")
    try:
        attached = organizations.list_policies_for_target(
            TargetId=account, Filter="SERVICE_CONTROL_POLICY"
        )["Policies"]
    except ClientError:
        return []
    statements = []
    for policy in attached:
        content = organizations.describe_policy(PolicyId=policy["Id"])["Policy"]["Content"]
        statements += _statements(_document(content), f"SCP {policy['Name']}")
    return statements


def _decisions(params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    iam = boto3.client("iam", region_name="us-east-1")
    principal = params["PolicySourceArn"]
    identity, boundary = identity_policies(iam, principal)
    scps = service_control_policies(principal.split(":")[4])
    context = {
        entry["ContextKeyName"]: tuple(entry["ContextKeyValues"])
        for entry in params.get("ContextEntries", [])
    }
    context.setdefault("aws:PrincipalArn", (principal,))
    for action in params["ActionNames"]:
        for resource in params.get("ResourceArns", ["*"]):
            request = Request(
                action=action, resource=resource, principal=principal, context=context
            )
            denied = [s for s in (*scps, *(boundary or ())) if s.effect == "Deny"]
            decision = evaluate(request, identity + denied).decision.value
            if decision == "allow" and boundary is not None:
                decision = evaluate(request, boundary).decision.value
            yield {
                "EvalActionName": action,
                "EvalResourceName": resource,
                "EvalDecision": {
                    "allow": "allowed",
                    "explicit deny": "explicitDeny",
                    "implicit deny": "implicitDeny",
                }[decision],
            }


def _remember(params: Mapping[str, Any], context: dict[str, Any], **_: Any) -> None:
    context["simulated"] = dict(params)


def _simulate(context: dict[str, Any], **_: Any) -> tuple[Any, dict[str, Any]]:
    response = {
        "EvaluationResults": list(_decisions(context["simulated"])),
        "IsTruncated": False,
        "ResponseMetadata": {"HTTPStatusCode": 200},
    }
    return _Http(), response


class _Http:
    status_code = 200
    headers: ClassVar[dict[str, str]] = {}
    content = b""


def install(client: Any) -> Any:
    """Answer the client's SimulatePrincipalPolicy calls from moto's stored policies (the
    call's parameters are kept when they are built, the answer replaces the HTTP call)."""
    events = client.meta.events
    events.register("before-parameter-build.iam.SimulatePrincipalPolicy", _remember)
    events.register("before-call.iam.SimulatePrincipalPolicy", _simulate)
    return client
