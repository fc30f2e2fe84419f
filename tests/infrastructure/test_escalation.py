"""`-c escalateTo=bedrock:<model id>` adds the EscalatePages map to the convert machine, its
Escalate function and that function's grant on the second model alone; without it the
template has none of them (the default synth)."""

from __future__ import annotations

from typing import Any

from drac.settings import SETTINGS_VARIABLE, Settings
from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import definition, flatten, state, statements, states
from tests.infrastructure.test_security import model_grants, role_id
from tests.infrastructure.test_state_machines import assert_backoff, retry_for

SECOND = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
ESCALATED_STATES = {
    "FindDoubtful",
    "AnyDoubtful",
    "ListDoubtful",
    "NoneDoubtful",
    "EscalatePages",
    "EscalateBatch",
    "KeepFirstAnswers",
}


def _convert(synth: Synth) -> tuple[dict[str, Any], dict[str, Any]]:
    """(substituted ASL, DefinitionSubstitutions) of the convert machine."""
    resource = synth.resources[synth.logical_id(synth.stack.pipeline.convert_machine)]
    return definition(resource), resource["Properties"]["DefinitionSubstitutions"]


def test_the_map_over_escalated_pages_follows_the_convert_map(alternate: Synth) -> None:
    asl, subs = _convert(alternate)
    convert = state(asl, "ConvertBatches")
    assert convert["ResultSelector"] == {"batches.$": "$", "flags.$": "$[*].doubtful"}
    assert convert["ResultPath"] == "$.escalated" and convert["Next"] == "FindDoubtful"
    assert "End" not in convert
    # the batches' lists are flattened ("[*][*]", as the ASL documents for an array of
    # arrays: Developer Guide, "Using JSONPath paths") only when one is doubtful, so the path
    # always matches; otherwise the map gets an empty list and runs no iteration
    assert state(asl, "AnyDoubtful")["Choices"] == [
        {"Variable": "$.escalated.any", "BooleanEquals": True, "Next": "ListDoubtful"}
    ]
    assert state(asl, "AnyDoubtful")["Default"] == "NoneDoubtful"
    assert state(asl, "NoneDoubtful")["Result"] == {"items": []}
    for name in ("ListDoubtful", "NoneDoubtful"):
        assert state(asl, name)["Next"] == "EscalatePages"
    escalate = state(asl, "EscalatePages")
    assert escalate["Type"] == "Map" and escalate["End"] is True
    # ItemsPath is a reference path to the array the Map iterates over; MaxConcurrency
    # bounds the iterations in flight (Developer Guide, "Map state", Inline mode fields)
    assert escalate["ItemsPath"] == "$.escalated.items"
    assert escalate["MaxConcurrency"] == 3  # batchConcurrency: the Bedrock calls in flight
    assert escalate["ItemProcessor"]["ProcessorConfig"] == {"Mode": "INLINE"}
    assert escalate["ResultPath"] is None  # the answers are in S3, not the payload
    task = state(asl, "EscalateBatch")
    assert task["Parameters"]["FunctionName"] == "SUB:EscalateFunctionArn"
    escalate_fn = alternate.stack.pipeline.stages.escalate
    assert subs["EscalateFunctionArn"] == {"Fn::GetAtt": [alternate.logical_id(escalate_fn), "Arn"]}
    # its own retry: throttles back off (Retry's IntervalSeconds, BackoffRate, MaxAttempts,
    # MaxDelaySeconds, JitterStrategy: Developer Guide, "Handling errors in Step Functions
    # workflows"), then the batch keeps its first answers (Catch -> KeepFirstAnswers)
    for error in ("ModelThrottled", "TransientError", "Lambda.TooManyRequestsException"):
        assert_backoff(retry_for(task, error))
    assert retry_for(task, "ModelThrottled")["MaxDelaySeconds"] == 900
    assert retry_for(task, "States.Timeout")["MaxAttempts"] == 2
    assert task["TimeoutSeconds"] == 15 * 60 + 60
    (catch,) = task["Catch"]
    assert catch["ErrorEquals"] == ["States.ALL"] and catch["Next"] == "KeepFirstAnswers"
    keep = state(asl, "KeepFirstAnswers")
    assert keep["Parameters"]["FunctionName"] == "SUB:EscalateFunctionArn"
    assert "ModelThrottled" not in {e for r in keep["Retry"] for e in r["ErrorEquals"]}
    assert_backoff(retry_for(keep, "Lambda.TooManyRequestsException"))


def test_without_escalation_there_is_no_extra_state_function_or_grant(synth: Synth) -> None:
    asl, subs = _convert(synth)
    assert not ESCALATED_STATES & {name for name, _ in states(asl)}
    assert state(asl, "ConvertBatches")["End"] is True
    assert state(asl, "ConvertBatches")["ResultPath"] is None
    assert "EscalateFunctionArn" not in subs
    assert synth.stack.pipeline.stages.escalate is None
    seconds = {r for grants in model_grants(synth).values() for r in grants if "claude" in r}
    assert not seconds


def test_only_the_escalate_function_may_call_the_second_model(alternate: Synth) -> None:
    stages = alternate.stack.pipeline.stages
    grants = model_grants(alternate)
    profile = (
        f"arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/{SECOND}"
    )
    model = (
        "arn:<AWS::Partition>:bedrock:*::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0"
    )
    assert grants[role_id(alternate, stages.escalate)] == {profile, model}
    first = {
        "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:"
        "inference-profile/us.google.gemma-3-12b-it",
        "arn:<AWS::Partition>:bedrock:*::foundation-model/google.gemma-3-12b-it",
    }
    assert grants[role_id(alternate, stages.convert)] == first
    others = {
        role: arns for role, arns in grants.items() if role != role_id(alternate, stages.escalate)
    }
    assert not {profile, model} & {arn for arns in others.values() for arn in arns}
    props = alternate.resources[alternate.logical_id(stages.escalate)]["Properties"]
    settings = Settings.from_json(props["Environment"]["Variables"][SETTINGS_VARIABLE])
    assert settings.models.escalate_to == f"bedrock:{SECOND}"
    # its storage: the artifacts bucket and ledger writes, as Convert's
    escalate_role = role_id(alternate, stages.escalate)
    actions = {
        action
        for policy_id, statement in statements(alternate.resources)
        if escalate_role
        in [r["Ref"] for r in alternate.resources[policy_id]["Properties"]["Roles"]]
        for action in (
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        )
    }
    assert "dynamodb:PutItem" in actions and "s3:PutObject" in actions
    assert not {a for a in actions if a.startswith(("states:", "aoss:", "sts:"))}
    assert flatten(props["Timeout"]) == "900"
