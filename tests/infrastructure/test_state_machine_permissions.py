"""Every state of every state machine is allowed what it makes Step Functions do.

The permissions come from the Step Functions Developer Guide ("IAM policies for integrated
services", "... for Distributed Map states", "Logging", "X-Ray") and are evaluated against the
machine's role in the synthesised template with the same evaluator the end-to-end tests use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from drac.aws import keys
from tests.e2e.authorization import Permission
from tests.e2e.guard import Authorizer
from tests.e2e.template import RoleSpec, StackModel, StackTemplate
from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import states

SAMPLE_NAME = "00000000-0000-4000-8000-000000000000"  # a generated execution name
# The one S3 object read by path: the re-plan manifest the Manifest function writes.
MANIFEST_KEY = keys.manifest_key(SAMPLE_NAME)
LOG_DELIVERY = (
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
)
TRACING = (
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
)


@dataclass(frozen=True)
class Subject:
    """A synthesised stack as the harness resolves it, and its artifacts bucket's name."""

    model: StackModel
    artifacts_bucket: str


def subject_of(synth: Synth) -> Subject:
    """Resolve a synthesised stack (an environment-agnostic stack's pseudo parameters get
    the harness's region and account)."""
    stack = synth.stack
    region = stack.region if not stack.region.startswith("${") else "us-east-1"
    account = stack.account if not stack.account.startswith("${") else "123456789012"
    model = StackModel(
        StackTemplate(stack.stack_name, synth.template.to_json(), {}, region, account)
    )
    return Subject(model, model.resolver.name(synth.logical_id(stack.storage.artifacts)))


def parameter(state_name: str, params: dict[str, Any], name: str, samples: dict[str, str]) -> str:
    """A static parameter, or the sample value of a JSONPath one (unknown paths fail)."""
    if name in params:
        return params[name]
    path = params[f"{name}.$"]
    assert path in samples, f"{state_name}: no sample value for {name}.$ = {path}"
    return samples[path]


def needed_permissions(subject: Subject, machine_id: str) -> dict[str, list[Permission]]:
    """State name -> what Step Functions does for it with the machine's role."""
    model = subject.model
    resolver = model.resolver
    asl = json.loads(model.state_machine_definition(machine_id))
    region, account = model.stack.region, model.stack.account
    own_name = resolver.name(machine_id)
    own_arn = resolver.get_att(machine_id, "Arn")
    samples = {"$.manifest.bucket": subject.artifacts_bucket, "$.manifest.key": MANIFEST_KEY}
    needed: dict[str, list[Permission]] = {}
    for name, state in states(asl):
        permissions: list[Permission] = []
        resource = state.get("Resource", "")
        params = state.get("Parameters", {})
        if state["Type"] == "Task" and resource == "arn:aws:states:::lambda:invoke":
            function = parameter(name, params, "FunctionName", samples)
            permissions.append(Permission("lambda:InvokeFunction", function))
        elif state["Type"] == "Task" and resource.startswith(
            "arn:aws:states:::states:startExecution"
        ):
            child = parameter(name, params, "StateMachineArn", samples)
            permissions.append(Permission("states:StartExecution", child))
            if resource.endswith((".sync", ".sync:2")):
                child_name = child.rsplit(":", 1)[1]
                execution = (
                    f"arn:aws:states:{region}:{account}:execution:{child_name}:{SAMPLE_NAME}"
                )
                permissions += [
                    Permission("states:DescribeExecution", execution),
                    Permission("states:StopExecution", execution),
                ]
                rule = (
                    f"arn:aws:events:{region}:{account}:rule/"
                    "StepFunctionsGetEventsForStepFunctionsExecutionRule"
                )
                permissions += [
                    Permission(a, rule)
                    for a in ("events:PutTargets", "events:PutRule", "events:DescribeRule")
                ]
        elif state["Type"] == "Task":
            raise AssertionError(f"{name}: integration {resource} is not checked here")
        if (
            state["Type"] == "Map"
            and state.get("ItemProcessor", {}).get("ProcessorConfig", {}).get("Mode")
            == "DISTRIBUTED"
        ):
            runs = f"arn:aws:states:{region}:{account}:execution:{own_name}/{SAMPLE_NAME}:x"
            permissions += [
                Permission("states:StartExecution", own_arn),
                Permission("states:DescribeExecution", runs),
                Permission("states:StopExecution", runs),
            ]
            permissions += item_reader_permissions(name, state.get("ItemReader"), samples)
            permissions += result_writer_permissions(name, state.get("ResultWriter"), samples)
        needed[name] = permissions
    return needed


def item_reader_permissions(
    name: str, reader: dict[str, Any] | None, samples: dict[str, str]
) -> list[Permission]:
    """s3:GetObject on the JSON/CSV file read, or s3:ListBucket for listObjectsV2."""
    if reader is None:
        return []
    params = reader["Parameters"]
    bucket = parameter(name, params, "Bucket", samples)
    if reader["Resource"] == "arn:aws:states:::s3:getObject":
        key = parameter(name, params, "Key", samples)
        return [Permission("s3:GetObject", f"arn:aws:s3:::{bucket}/{key}")]
    if reader["Resource"] == "arn:aws:states:::s3:listObjectsV2":
        return [Permission("s3:ListBucket", f"arn:aws:s3:::{bucket}")]
    raise AssertionError(f"{name}: ItemReader {reader['Resource']} is not checked here")


def result_writer_permissions(
    name: str, writer: dict[str, Any] | None, samples: dict[str, str]
) -> list[Permission]:
    """The ResultWriter writes its manifest and result files under the prefix (multipart)."""
    if writer is None:
        return []
    params = writer["Parameters"]
    bucket = parameter(name, params, "Bucket", samples)
    prefix = (
        parameter(name, params, "Prefix", samples)
        if ("Prefix" in params or "Prefix.$" in params)
        else ""
    )
    key = "/".join(part for part in (prefix.strip("/"), SAMPLE_NAME, "manifest.json") if part)
    obj = f"arn:aws:s3:::{bucket}/{key}"
    return [
        Permission(action, obj)
        for action in (
            "s3:PutObject",
            "s3:GetObject",
            "s3:ListMultipartUploadParts",
            "s3:AbortMultipartUpload",
        )
    ]


@pytest.fixture(scope="module", params=["synth", "pinned"])
def subject(request: pytest.FixtureRequest) -> Subject:
    """The stack environment-agnostic (`cdk synth`) and pinned (`cdk deploy`)."""
    return subject_of(request.getfixturevalue(request.param))


def role_of(model: StackModel, machine_id: str) -> RoleSpec:
    """The execution role of a state machine."""
    props = model.stack.resources[machine_id]["Properties"]
    return model.role_by_arn(model.resolver.resolve(props["RoleArn"]))


def machines(model: StackModel) -> dict[str, str]:
    """Logical id -> name of every state machine."""
    return {
        m: model.resolver.name(m) for m in model.stack.of_type("AWS::StepFunctions::StateMachine")
    }


def test_every_task_state_is_allowed_what_it_does(subject: Subject) -> None:
    model = subject.model
    authorizer = Authorizer(model)
    checked = 0
    for machine_id, name in machines(model).items():
        role = role_of(model, machine_id)
        for state, permissions in needed_permissions(subject, machine_id).items():
            for permission in permissions:
                result = authorizer.evaluate(role.arn, role.statements, permission)
                assert result.allowed, f"{name}.{state}: {role.logical_id} may not {permission}"
                checked += 1
    assert checked >= 20  # 12 Lambda tasks, two sync:2 sub-workflows, the Distributed Map


def test_every_machine_may_log_and_trace(subject: Subject) -> None:
    model = subject.model
    authorizer = Authorizer(model)
    for machine_id, name in machines(model).items():
        props = model.stack.resources[machine_id]["Properties"]
        role = role_of(model, machine_id)
        actions = [*LOG_DELIVERY, *(TRACING if props["TracingConfiguration"]["Enabled"] else ())]
        for action in actions:
            assert authorizer.evaluate(
                role.arn, role.statements, Permission(action, "*")
            ).allowed, f"{name}: {action}"


def test_a_machine_may_not_invoke_another_machines_functions(subject: Subject) -> None:
    """The check above is not vacuous: each role names only its own machine's functions."""
    model = subject.model
    authorizer = Authorizer(model)
    by_machine = {
        name: {
            p.resource
            for ps in needed_permissions(subject, m).values()
            for p in ps
            if p.action == "lambda:InvokeFunction"
        }
        for m, name in machines(model).items()
    }
    for machine_id, name in machines(model).items():
        role = role_of(model, machine_id)
        others = set().union(*(fns for other, fns in by_machine.items() if other != name))
        for function in others - by_machine[name]:
            permission = Permission("lambda:InvokeFunction", function)
            assert not authorizer.evaluate(role.arn, role.statements, permission).allowed, (
                f"{name} may invoke {function}"
            )


def test_rule_targets_may_start_their_state_machines(subject: Subject) -> None:
    model = subject.model
    authorizer = Authorizer(model)
    targets = 0
    for rule in model.stack.of_type("AWS::Events::Rule").values():
        for target in model.resolver.resolve(rule["Properties"]["Targets"]):
            if ":states:" not in target["Arn"]:
                continue
            role = model.role_by_arn(target["RoleArn"])
            permission = Permission("states:StartExecution", target["Arn"])
            assert authorizer.evaluate(role.arn, role.statements, permission).allowed
            targets += 1
    assert targets == 1  # Replan Requested -> re-plan machine
