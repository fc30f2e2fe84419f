"""Who may reach the retrieval function or the re-plan machine without the API or the bus.

The retrieval API trusts `requestContext.authorizer.iam` because Lambda fills it in for a
function URL call; a direct `lambda:InvokeFunction` carries whatever the invoker writes. The
re-plan machine trusts an event's `source` because the bus policy says who may send it; a
direct `states:StartExecution` carries whatever the caller writes, `source: drac.admin`
included. The stack's resource policies let nobody do either (the function's only allows
`lambda:InvokeFunction` through the URL), but within one account a request is allowed when
the identity policy **or** the resource policy allows it (IAM User Guide, "Policy evaluation
for requests within a single account"), Lambda resource policies cannot Deny, and resource
control policies do not cover Lambda or Step Functions. What can deny the account's own
principals is a service control policy (or a permissions boundary on each of them).

So this module (a) writes that SCP for a deployed stack (`guard_policy`) and (b) asks IAM's
policy simulator, for every role and user of the account, whether it may still invoke the
function directly or start the re-plan machine (`direct_callers`); the simulator evaluates the
principal's policies, its permissions boundary and the SCPs of its account (IAM API Reference,
"EvaluationResult": `OrganizationsDecisionDetail`, `PermissionsBoundaryDecisionDetail`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from drac.errors import DracError

RETRIEVE_OUTPUT = "RetrieveFunctionArn"
REPLAN_OUTPUT = "ReplanStateMachine"
REPLAN_STARTERS_OUTPUT = "ReplanStarters"
"""Stack outputs: the function, the machine and the stack's roles that start it (comma-joined)."""
INVOKE = "lambda:InvokeFunction"
START = ("states:StartExecution", "states:StartSyncExecution")


@dataclass(frozen=True)
class Target:
    """What the audit protects, read from a deployed stack's outputs."""

    retrieve_function: str
    replan_machine: str
    replan_starters: tuple[str, ...]


@dataclass(frozen=True)
class DirectCaller:
    """A principal the account lets make a call that bypasses the API or the bus."""

    principal: str
    action: str
    resource: str

    def __str__(self) -> str:
        return f"{self.principal} may {self.action} on {self.resource}"


def stack_target(session: Any, stack_name: str) -> Target:
    """The function, machine and trusted starters a drac stack outputs; DracError naming what
    is missing."""
    cloudformation = session.client("cloudformation")
    try:
        (stack,) = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except Exception as exc:  # botocore's errors vary: say which stack could not be read
        raise DracError(f"cannot read stack {stack_name!r}: {exc}") from exc
    outputs = {o["OutputKey"]: str(o["OutputValue"]) for o in stack.get("Outputs", [])}
    return target_from_outputs(stack_name, outputs)


def target_from_outputs(stack_name: str, outputs: dict[str, str]) -> Target:
    """The audit's target from a stack's outputs (name -> value)."""
    missing = [
        name
        for name in (RETRIEVE_OUTPUT, REPLAN_OUTPUT, REPLAN_STARTERS_OUTPUT)
        if name not in outputs
    ]
    if missing:
        raise DracError(f"stack {stack_name!r} has no {', '.join(missing)} output (redeploy it)")
    starters = tuple(sorted(a for a in outputs[REPLAN_STARTERS_OUTPUT].split(",") if a))
    return Target(outputs[RETRIEVE_OUTPUT], outputs[REPLAN_OUTPUT], starters)


def guard_policy(target: Target) -> dict[str, Any]:
    """The service control policy that denies, to every principal of the account, invoking
    the retrieval function other than through its URL, and starting the re-plan machine to
    every principal but the stack's own starters (the Starter, the bus rule's role and the
    machine itself, whose Distributed Map starts child executions)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "RetrieveOnlyThroughItsUrl",
                "Effect": "Deny",
                "Action": INVOKE,
                "Resource": [target.retrieve_function, f"{target.retrieve_function}:*"],
                "Condition": {"BoolIfExists": {"lambda:InvokedViaFunctionUrl": "false"}},
            },
            {
                "Sid": "ReplanOnlyFromTheStack",
                "Effect": "Deny",
                "Action": list(START),
                "Resource": target.replan_machine,
                "Condition": {"ArnNotEquals": {"aws:PrincipalArn": list(target.replan_starters)}},
            },
        ],
    }


def _principals(iam: Any) -> Iterator[str]:
    """Every role and user ARN of the account."""
    for page in iam.get_paginator("list_roles").paginate():
        yield from (role["Arn"] for role in page["Roles"])
    for page in iam.get_paginator("list_users").paginate():
        yield from (user["Arn"] for user in page["Users"])


def _allowed(
    iam: Any, principal: str, actions: list[str], resource: str, context: list[dict[str, Any]]
) -> list[str]:
    """The actions the simulator allows the principal on the resource."""
    answer = iam.simulate_principal_policy(
        PolicySourceArn=principal,
        ActionNames=actions,
        ResourceArns=[resource],
        ContextEntries=context,
    )
    return [
        r["EvalActionName"] for r in answer["EvaluationResults"] if r["EvalDecision"] == "allowed"
    ]


def direct_callers(iam: Any, target: Target) -> list[DirectCaller]:
    """Every role or user of the account that may invoke the retrieval function directly
    (not through its URL) or start the re-plan machine without being one of the stack's
    starters; empty when the account holds the stack's trust."""
    direct = [
        {
            "ContextKeyName": "lambda:InvokedViaFunctionUrl",
            "ContextKeyValues": ["false"],
            "ContextKeyType": "boolean",
        }
    ]
    found = []
    for principal in _principals(iam):
        for action in _allowed(iam, principal, [INVOKE], target.retrieve_function, direct):
            found.append(DirectCaller(principal, action, target.retrieve_function))
        if principal in target.replan_starters:
            continue
        for action in _allowed(iam, principal, list(START), target.replan_machine, []):
            found.append(DirectCaller(principal, action, target.replan_machine))
    return found
