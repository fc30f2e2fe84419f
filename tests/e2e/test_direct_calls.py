"""Identity cannot be forged by a direct call once the account holds the stack's trust.

A direct lambda:InvokeFunction of Retrieve writes its own requestContext (an admin's ARN), a
direct states:StartExecution of the re-plan machine its own `source: drac.admin`; within one
account an identity policy alone allows either, and neither resource policy can Deny. The
stack outputs what `drac cloud-audit` needs to find every principal that still can (IAM's
policy simulator, here answered from moto's stored policies by the project's evaluator,
tests/e2e/simulator.py), and the service control policy it writes denies them all but the
stack's own roles."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from click.testing import CliRunner
from moto import mock_aws

from drac.aws.access_audit import (
    REPLAN_OUTPUT,
    REPLAN_STARTERS_OUTPUT,
    RETRIEVE_OUTPUT,
    DirectCaller,
    Target,
    direct_callers,
    guard_policy,
    target_from_outputs,
)
from drac.cli import cli
from tests.e2e import simulator
from tests.e2e.conftest import ACME_ROLE
from tests.e2e.iam import Request, Statement, evaluate
from tests.e2e.template import StackModel, StackTemplate

ACCOUNT = "123456789012"


@pytest.fixture
def target(stack_template: StackTemplate) -> Target:
    """The audit's target from the synthesised stack's own outputs."""
    model = StackModel(stack_template)
    outputs = {
        name: model.resolver.resolve(stack_template.template["Outputs"][name]["Value"])
        for name in (RETRIEVE_OUTPUT, REPLAN_OUTPUT, REPLAN_STARTERS_OUTPUT)
    }
    return target_from_outputs(stack_template.stack_name, outputs)


def test_the_outputs_name_the_function_the_machine_and_every_role_that_starts_it(
    stack_template: StackTemplate, target: Target
) -> None:
    model = StackModel(stack_template)
    assert target.retrieve_function == model.function_for("retrieve").arn
    assert target.replan_machine.endswith(":stateMachine:Drac-replan")
    # exactly the stack's roles whose policies allow starting the re-plan machine
    starters = {
        role.arn
        for role in model.roles.values()
        if evaluate(
            Request(
                action="states:StartExecution", resource=target.replan_machine, principal=role.arn
            ),
            role.statements,
        ).allowed
    }
    assert set(target.replan_starters) == starters and len(starters) == 3


def _role(iam: Any, name: str, statements: list[dict[str, Any]]) -> str:
    arn = iam.create_role(
        RoleName=name,
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"AWS": ACCOUNT}}
                ],
            }
        ),
    )["Role"]["Arn"]
    iam.put_role_policy(
        RoleName=name,
        PolicyName="p",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}),
    )
    return str(arn)


def _account(target: Target) -> dict[str, str]:
    """Roles of the stack's account: an administrator, an operator with states:*, the acme
    application (the API's grant only), a reader, and the stack's own re-plan starter."""
    iam = boto3.client("iam", region_name="us-east-1")
    roles = {
        "admin": _role(iam, "administrator", [{"Effect": "Allow", "Action": "*", "Resource": "*"}]),
        "ops": _role(iam, "ops", [{"Effect": "Allow", "Action": "states:*", "Resource": "*"}]),
        "acme": _role(
            iam,
            "acme-search",
            [
                {
                    "Effect": "Allow",
                    "Action": ["lambda:InvokeFunctionUrl", "lambda:InvokeFunction"],
                    "Resource": target.retrieve_function,
                    "Condition": {"Bool": {"lambda:InvokedViaFunctionUrl": "true"}},
                }
            ],
        ),
        "reader": _role(
            iam, "reader", [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]
        ),
    }
    starter = target.replan_starters[0].rsplit("/", 1)[-1]
    roles["starter"] = _role(
        iam,
        starter,
        [{"Effect": "Allow", "Action": "states:StartExecution", "Resource": target.replan_machine}],
    )
    assert roles["starter"] == target.replan_starters[0]
    return roles


def _attach_scp(document: dict[str, Any]) -> None:
    organizations = boto3.client("organizations", region_name="us-east-1")
    organizations.create_organization(FeatureSet="ALL")
    policy = organizations.create_policy(
        Content=json.dumps(document),
        Description="drac guard",
        Name="drac-guard",
        Type="SERVICE_CONTROL_POLICY",
    )["Policy"]["PolicySummary"]["Id"]
    organizations.attach_policy(PolicyId=policy, TargetId=ACCOUNT)


def test_the_audit_finds_every_direct_caller_until_the_guard_policy_is_attached(
    target: Target,
) -> None:
    with mock_aws():
        roles = _account(target)
        iam = simulator.install(boto3.client("iam", region_name="us-east-1"))
        found = set(direct_callers(iam, target))
        retrieve, replan = target.retrieve_function, target.replan_machine
        assert found == {
            DirectCaller(roles["admin"], "lambda:InvokeFunction", retrieve),
            DirectCaller(roles["admin"], "states:StartExecution", replan),
            DirectCaller(roles["admin"], "states:StartSyncExecution", replan),
            DirectCaller(roles["ops"], "states:StartExecution", replan),
            DirectCaller(roles["ops"], "states:StartSyncExecution", replan),
        }

        policy = guard_policy(target)
        _attach_scp(policy)
        assert direct_callers(iam, target) == []

    # The SCP leaves the legitimate paths alone: the API's own invocation through the URL,
    # and the stack's starters.
    scp = [Statement.from_json(s, "scp") for s in policy["Statement"]]
    allow_all = Statement.from_json({"Effect": "Allow", "Action": "*", "Resource": "*"}, "any")
    through_url = Request(
        action="lambda:InvokeFunction",
        resource=target.retrieve_function,
        principal=ACME_ROLE,
        context={"lambda:InvokedViaFunctionUrl": ("true",), "aws:PrincipalArn": (ACME_ROLE,)},
    )
    assert evaluate(through_url, [allow_all, *scp]).allowed
    for starter in target.replan_starters:
        start = Request(
            action="states:StartExecution",
            resource=target.replan_machine,
            principal=starter,
            context={"aws:PrincipalArn": (starter,)},
        )
        assert evaluate(start, [allow_all, *scp]).allowed


def test_the_command_prints_the_policy_and_fails_while_a_direct_caller_remains(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    with mock_aws():
        roles = _account(target)
        cloudformation = boto3.client("cloudformation", region_name="us-east-1")
        outputs = {
            RETRIEVE_OUTPUT: target.retrieve_function,
            REPLAN_OUTPUT: target.replan_machine,
            REPLAN_STARTERS_OUTPUT: ",".join(target.replan_starters),
        }
        cloudformation.create_stack(
            StackName="Drac",
            TemplateBody=json.dumps(
                {
                    "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
                    "Outputs": {k: {"Value": v} for k, v in outputs.items()},
                }
            ),
        )
        client = boto3.session.Session.client

        def guarded(self: Any, service: str, *args: Any, **kwargs: Any) -> Any:
            made = client(self, service, *args, **kwargs)
            return simulator.install(made) if service == "iam" else made

        monkeypatch.setattr(boto3.session.Session, "client", guarded)
        runner = CliRunner()
        printed = runner.invoke(cli, ["cloud-audit", "--stack", "Drac", "--policy"])
        assert printed.exit_code == 0 and json.loads(printed.output) == guard_policy(target)

        audit = runner.invoke(cli, ["cloud-audit", "--stack", "Drac"])
        assert audit.exit_code == 1
        assert f"DIRECT CALLER: {roles['admin']} may lambda:InvokeFunction" in audit.output
        assert roles["acme"] not in audit.output and roles["reader"] not in audit.output

        _attach_scp(guard_policy(target))
        audit = runner.invoke(cli, ["cloud-audit", "--stack", "Drac"])
        assert audit.exit_code == 0, audit.output
        assert "no principal reaches them directly" in audit.output
