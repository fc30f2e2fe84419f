"""IAM scoping, Lambda packaging and the cdk-nag AwsSolutions report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import as_list, flatten, role_of_policy, statements

ROOT = Path(__file__).resolve().parents[2]

SERVICE_WILDCARD = re.compile(r"^[a-z0-9-]+:\*$")
# Actions that have no resource-level permissions, each with the reason it needs Resource "*".
STAR_RESOURCE_ACTIONS = {
    "xray:PutTraceSegments": "X-Ray accepts no resource",
    "xray:PutTelemetryRecords": "X-Ray accepts no resource",
    "xray:GetSamplingRules": "X-Ray accepts no resource",
    "xray:GetSamplingTargets": "X-Ray accepts no resource",
    "logs:CreateLogDelivery": "vended log delivery has no resource-level permissions",
    "logs:GetLogDelivery": "same",
    "logs:UpdateLogDelivery": "same",
    "logs:DeleteLogDelivery": "same",
    "logs:ListLogDeliveries": "same",
    "logs:PutResourcePolicy": "same",
    "logs:DescribeResourcePolicies": "same",
    "logs:DescribeLogGroups": "same",
}
MODEL_ARN = "arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/{}"


def test_no_wildcard_actions(synth: Synth) -> None:
    for policy_id, statement in statements(synth.resources):
        for action in as_list(statement["Action"]):
            assert action != "*", policy_id
            assert not SERVICE_WILDCARD.match(action), f"{policy_id}: {action}"


def test_star_resources_only_for_actions_without_resource_permissions(synth: Synth) -> None:
    for policy_id, statement in statements(synth.resources):
        if "*" in as_list(statement["Resource"]):
            extra = set(as_list(statement["Action"])) - set(STAR_RESOURCE_ACTIONS)
            assert not extra, f"{policy_id} grants {extra} on every resource"


def model_grants(synth: Synth) -> dict[str, set[str]]:
    """Role logical id -> the resources of its bedrock:InvokeModel statements."""
    grants: dict[str, set[str]] = {}
    for policy_id, statement in statements(synth.resources):
        actions = as_list(statement["Action"])
        if any(a.startswith("bedrock:") for a in actions):
            assert actions == ["bedrock:InvokeModel"], actions
            for role in role_of_policy(synth.resources[policy_id]):
                grants.setdefault(role, set()).update(
                    flatten(r) for r in as_list(statement["Resource"])
                )
    return grants


def role_id(synth: Synth, fn) -> str:
    return synth.stack.resolve(synth.stack.get_logical_id(fn.role.node.default_child))


def test_bedrock_is_granted_on_exactly_the_configured_models(synth: Synth) -> None:
    stages = synth.stack.pipeline.stages
    assert model_grants(synth) == {
        role_id(synth, stages.convert): {MODEL_ARN.format("google.gemma-3-27b-it")},
        role_id(synth, stages.plan_section): {MODEL_ARN.format("google.gemma-3-12b-it")},
        role_id(synth, stages.index_chunks): {MODEL_ARN.format("amazon.titan-embed-text-v2:0")},
        role_id(synth, stages.retrieve): {MODEL_ARN.format("amazon.titan-embed-text-v2:0")},
    }


def test_starter_may_only_start_and_list_the_ingest_and_replan_machines(synth: Synth) -> None:
    pipeline = synth.stack.pipeline
    starter_role = role_id(synth, pipeline.stages.starter)
    # the ARN is built from the machine's name (the machine is created after its functions)
    ingest = {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":states:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                ":stateMachine:Drac-ingest",
            ],
        ]
    }
    machine = synth.resources[synth.logical_id(pipeline.ingest_machine)]["Properties"]
    assert machine["StateMachineName"] == "Drac-ingest"
    state_actions = {}
    for policy_id, statement in statements(synth.resources):
        if starter_role in role_of_policy(synth.resources[policy_id]):
            for action in as_list(statement["Action"]):
                if action.startswith("states:"):
                    state_actions[action] = as_list(statement["Resource"])
    replan = json.loads(json.dumps(ingest).replace("Drac-ingest", "Drac-replan"))
    # ingest per upload; re-plan when a document's metadata changes later
    assert state_actions == {
        "states:StartExecution": [ingest, replan],
        "states:ListExecutions": [ingest, replan],
    }


def test_project_functions_carry_both_layers_and_tracing(synth: Synth) -> None:
    factory = synth.stack.factory
    layers = [
        {"Ref": synth.logical_id(factory.core_layer)},
        {"Ref": synth.logical_id(factory.deps_layer)},
    ]
    project = {
        k: v
        for k, v in synth.of_type("AWS::Lambda::Function").items()
        if v["Properties"].get("Handler") == "handler.handler"
    }
    assert len(project) == 17  # 16 zip pipeline functions + the index custom resource
    for logical_id, resource in project.items():
        props = resource["Properties"]
        assert props["Layers"] == layers, logical_id
        assert props["Runtime"] == "python3.12"
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert props["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == "drac"
    for image in (
        synth.stack.pipeline.stages.normalise,
        synth.stack.pipeline.stages.read_spreadsheet,
        synth.stack.pipeline.stages.read_scans,
    ):
        assert synth.resources[synth.logical_id(image)]["Properties"]["PackageType"] == "Image"


def test_each_image_context_holds_only_what_the_dockerfile_copies(synth: Synth) -> None:
    """Normalise and ReadSpreadsheet share one Dockerfile, ReadScans has its own; each build
    copies its own handler."""
    handlers = {
        source["dockerBuildArgs"]["FUNCTION"]: Path(source["directory"]).name
        for source in synth.docker_sources
    }
    assert set(handlers) == {"normalise", "read_spreadsheet", "read_scans"}
    for source, context in zip(synth.docker_sources, synth.docker_contexts, strict=True):
        function = source["dockerBuildArgs"]["FUNCTION"]
        image = "read_scans" if function == "read_scans" else "normalise"
        assert source["dockerFile"] == f"functions/{image}/Dockerfile"
        assert (context / f"functions/{image}/Dockerfile").is_file()
        assert (context / f"functions/{function}/handler.py").is_file()
        assert (context / "src/drac/aws/stages/conversion.py").is_file()
        assert (context / "pyproject.toml").is_file() and (context / "README.md").is_file()
        assert not (context / "layers").exists(), "the 100 MB deps layer is not image input"
        assert not (context / "tests").exists() and not (context / ".venv").exists()
        others = {p.name for p in (context / "functions").iterdir()} - {image, function}
        assert not others, others
    dockerfile = (ROOT / "functions/normalise/Dockerfile").read_text()
    assert "COPY functions/${FUNCTION}/handler.py /var/task/handler.py" in dockerfile


@pytest.mark.parametrize("variant", ["synth", "pinned"])
def test_cdk_nag_reports_no_unacknowledged_findings(
    variant: str, request: pytest.FixtureRequest
) -> None:
    """Environment-agnostic (`cdk synth`) and pinned to an account and region (`cdk deploy`
    with credentials sets CDK_DEFAULT_ACCOUNT/REGION), cdk-nag has nothing unacknowledged."""
    synth: Synth = request.getfixturevalue(variant)
    reports = {r["pluginName"]: r for r in synth.report["pluginReports"]}
    report = reports["AwsSolutions"]
    assert report["violations"] == [], [v["ruleName"] for v in report["violations"]]
    assert report["conclusion"] == "success"
    # The acknowledgements are used (not stale) and each one says why.
    acknowledged = {v["ruleName"] for v in report["suppressedViolations"]}
    assert acknowledged
    from infra.nag import acknowledgements

    reasons = acknowledgements(synth.stack)
    assert acknowledged <= set(reasons)
    assert all(len(reason) > 40 for reason in reasons.values())


def test_no_wildcard_action_acknowledgement_beyond_s3_grant_helpers(synth: Synth) -> None:
    from infra.nag import acknowledgements

    actions = [k for k in acknowledgements(synth.stack) if "[Action::" in k]
    assert all(k.split("Action::")[1].startswith("s3:") for k in actions), actions
