"""Role sessions a function assumes (sts:AssumeRole with a session policy), guarded as AWS
evaluates them.

The harness's session notes each AssumeRole it allowed (`guard.guarded_session`'s hook); a
session made from the returned credentials is authorised as the assumed role, after its trust
policy is checked to name the caller. A call is allowed only when the role's statements (with
the resource policies) allow it AND the session policy allows it: "The resulting session's
permissions are the intersection of the role's identity-based policy and the session policies"
(IAM User Guide, "Permissions for AssumeRole"). An explicit Deny in either wins.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3

from tests.e2e.authorization import Permission
from tests.e2e.guard import (
    SECURE_TRANSPORT,
    FunctionPrincipal,
    access_denied,
    guarded_session,
)
from tests.e2e.iam import Evaluation, Request, Statement, evaluate
from tests.e2e.template import StackModel


@dataclass
class SessionPrincipal(FunctionPrincipal):
    """An assumed role's session: the role's permissions narrowed by a session policy."""

    session_statements: tuple[Statement, ...] = ()

    def evaluate(self, permission: Permission) -> Evaluation:
        """Allowed only when the role and the session policy both allow."""
        result = super().evaluate(permission)
        if not result.allowed:
            return result
        request = Request(action=permission.action, resource=permission.resource,
                          principal=self.role.arn,
                          context={**SECURE_TRANSPORT, **permission.context})
        session = evaluate(request, self.session_statements)
        if session.allowed:
            return result
        return Evaluation(decision=session.decision, request=request,
                          statement=session.statement or "the session policy")


@dataclass
class AssumedSessions:
    """Every role session the functions of one deployment assumed, by access key id."""

    model: StackModel
    region: str
    wrap: Callable[[boto3.session.Session, FunctionPrincipal], Any]
    """Turns a guarded boto3 session into what a Runtime is given (faults, Bedrock fake)."""
    assumed: dict[str, tuple[FunctionPrincipal, Mapping[str, Any]]] = field(default_factory=dict)
    policies: list[dict[str, Any]] = field(default_factory=list)
    """Every session policy passed, parsed (for tests that look at them)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, caller: FunctionPrincipal, request: Mapping[str, Any],
             answer: Mapping[str, Any]) -> None:
        """Remember an allowed AssumeRole (the hook `guarded_session` calls)."""
        key = answer["Credentials"]["AccessKeyId"]
        with self.lock:
            self.assumed[key] = (caller, dict(request))
            if request.get("Policy"):
                self.policies.append(json.loads(request["Policy"]))

    def session_for(self, credentials: Mapping[str, Any]) -> Any:
        """The session of assumed-role credentials, guarded as the role narrowed by the
        session policy; AccessDenied when the role's trust policy does not name the caller."""
        with self.lock:
            caller, request = self.assumed[credentials["AccessKeyId"]]
        role = self.model.role_by_arn(request["RoleArn"])
        trust = self.trust(role.logical_id)
        asked = Request(action="sts:AssumeRole", resource=role.arn, principal=caller.role.arn,
                        context={"aws:PrincipalArn": (caller.role.arn,)})
        if not evaluate(asked, trust).allowed:
            permission = Permission("sts:AssumeRole", role.arn)
            message = caller.deny(permission, f"the trust policy of {role.name} does not name it")
            raise access_denied("AssumeRole", "sts", message)
        policy = json.loads(request["Policy"]) if request.get("Policy") else None
        statements = (tuple(Statement.from_json(s, f"session policy[{i}]")
                            for i, s in enumerate(policy["Statement"]))
                      if policy else ())
        principal = SessionPrincipal(
            f"{caller.logical_id} as {role.name}", request["RoleSessionName"], role,
            caller.authorizer, caller.log, caller.handler_dir,
            session_statements=statements)
        if policy is None:  # no session policy: the role's own permissions
            principal = FunctionPrincipal(principal.logical_id, principal.name, role,
                                          caller.authorizer, caller.log, caller.handler_dir)
        return self.wrap(guarded_session(principal, self.region, self.note), principal)

    def trust(self, role_id: str) -> list[Statement]:
        """The role's trust policy (who may assume it)."""
        props = self.model.stack.of_type("AWS::IAM::Role")[role_id]["Properties"]
        document = self.model.resolver.resolve(props["AssumeRolePolicyDocument"])
        return [Statement.from_json(s, f"{role_id} trust[{i}]")
                for i, s in enumerate(document["Statement"])]

