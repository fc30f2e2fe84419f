"""The three state machines after substitution: maps, retries, catches, sub-workflow."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import definition, state, states

LAMBDA_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
}


def machine(synth: Synth, name: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(logical id, substituted ASL, DefinitionSubstitutions) of a pipeline machine."""
    construct = getattr(synth.stack.pipeline, f"{name}_machine")
    logical_id = synth.logical_id(construct)
    resource = synth.resources[logical_id]
    return logical_id, definition(resource), resource["Properties"]["DefinitionSubstitutions"]


def retry_for(task: dict[str, Any], error: str) -> dict[str, Any]:
    matches = [r for r in task.get("Retry", []) if error in r["ErrorEquals"]]
    assert len(matches) == 1, f"one retrier for {error}, got {task.get('Retry')}"
    return matches[0]


def assert_backoff(retrier: dict[str, Any]) -> None:
    assert retrier["JitterStrategy"] == "FULL"
    assert retrier["BackoffRate"] >= 2 and retrier["MaxAttempts"] >= 3
    assert retrier["IntervalSeconds"] >= 1


def test_three_standard_machines_with_tracing_and_logs(synth: Synth) -> None:
    machines = synth.of_type("AWS::StepFunctions::StateMachine")
    assert {m["Properties"]["StateMachineName"] for m in machines.values()} == {
        "Drac-ingest",
        "Drac-convert",
        "Drac-plan",
        "Drac-replan",
    }
    for resource in machines.values():
        props = resource["Properties"]
        assert props["StateMachineType"] == "STANDARD"
        assert props["TracingConfiguration"] == {"Enabled": True}
        assert props["LoggingConfiguration"]["Level"] == "ALL"
        assert props["LoggingConfiguration"]["IncludeExecutionData"] is False


def test_each_group_of_batches_is_a_child_execution(synth: Synth) -> None:
    """The ingest runs one convert execution per group (one after the other), so its own
    history grows by a few events per group, not per batch and retry."""
    convert_id, _, _ = machine(synth, "convert")
    _, ingest, subs = machine(synth, "ingest")
    groups = state(ingest, "ConvertGroups")
    assert groups["ItemsPath"] == "$.rendered.groups" and groups["MaxConcurrency"] == 1
    (step,) = groups["ItemProcessor"]["States"].values()
    assert step["Resource"] == "arn:aws:states:::states:startExecution.sync:2"
    assert step["Parameters"]["StateMachineArn"] == "SUB:ConvertStateMachineArn"
    assert subs["ConvertStateMachineArn"] == {"Ref": convert_id}
    assert not {"ConvertBatch", "MarkBatchFailed"} & {n for n, _ in states(ingest)}


def test_pages_are_rendered_in_parallel_slices_before_conversion(synth: Synth) -> None:
    """CountPages splits the batches into slices; one Render invocation per slice, at most
    renderConcurrency at once, all before the first conversion group."""
    _, ingest, subs = machine(synth, "ingest")
    count = state(ingest, "CountPages")
    assert count["Parameters"]["FunctionName"] == "SUB:RenderFunctionArn"
    assert count["ResultSelector"]["slices.$"] == "$.Payload.slices"
    assert count["Next"] == "RenderSlices"
    slices = state(ingest, "RenderSlices")
    assert slices["Type"] == "Map" and slices["ItemsPath"] == "$.rendered.slices"
    assert slices["MaxConcurrency"] == 10 and slices["Next"] == "FindScans"
    assert slices["ItemProcessor"]["ProcessorConfig"]["Mode"] == "INLINE"
    # $.rendered (counts, groups) passes through; what each slice found scanned goes beside it
    assert slices["ResultPath"] == "$.scanned"
    assert slices["ResultSelector"] == {"slices.$": "$", "flags.$": "$[*].has_scans"}
    task = state(ingest, "RenderSlice")
    assert task["Parameters"]["FunctionName"] == "SUB:RenderFunctionArn"
    assert task["Parameters"]["Payload"]["slice.$"] == "$.slice"
    assert slices["ItemSelector"]["slice.$"] == "$$.Map.Item.Value"
    for error in LAMBDA_ERRORS:
        assert_backoff(retry_for(task, error))
    assert retry_for(task, "Sandbox.Timedout")["MaxAttempts"] >= 1
    (catch,) = slices["Catch"]  # a slice that cannot render fails the document, unconverted
    assert catch["ErrorEquals"] == ["States.ALL"] and catch["Next"] == "MarkFailed"
    assert subs["RenderFunctionArn"] == {
        "Fn::GetAtt": [synth.logical_id(synth.stack.pipeline.stages.render), "Arn"]
    }


def test_every_task_has_a_timeout_sized_from_its_function(synth: Synth) -> None:
    """A Lambda task waits its function's timeout plus a minute (a lost invocation is then
    retried like a timed-out one); a child execution task waits an hour longer than the
    child's own top-level timeout of a week, so the child times out first (its alarm)."""
    stages = synth.stack.pipeline.stages
    timeouts = {
        synth.logical_id(fn): synth.resources[synth.logical_id(fn)]["Properties"].get("Timeout", 3)
        for fn in stages.all()
    }
    checked = 0
    for name in ("ingest", "convert", "plan", "replan"):
        _, asl, subs = machine(synth, name)
        for state_name, task in states(asl):
            if task["Type"] != "Task":
                continue
            seconds = task["TimeoutSeconds"]
            assert isinstance(seconds, int), (name, state_name, seconds)
            if task["Resource"] == "arn:aws:states:::lambda:invoke":
                placeholder = task["Parameters"]["FunctionName"].removeprefix("SUB:")
                (function_id, _arn) = subs[placeholder]["Fn::GetAtt"]
                assert seconds == timeouts[function_id] + 60, (name, state_name)
                assert retry_for(task, "States.Timeout") == retry_for(task, "Sandbox.Timedout")
            else:
                assert task["Resource"] == "arn:aws:states:::states:startExecution.sync:2"
                assert seconds == 7 * 24 * 3600 + 3600, (name, state_name)
            checked += 1
    assert checked == 21  # every Task state of the four machines
    for name, timeout in {"convert": 7 * 24 * 3600, "plan": 7 * 24 * 3600,
                          "ingest": None, "replan": None}.items():  # fmt: skip
        assert machine(synth, name)[1].get("TimeoutSeconds") == timeout, name


def test_convert_map_bounds_concurrency_retries_and_degrades(synth: Synth) -> None:
    _, asl, subs = machine(synth, "convert")
    batch_range = state(asl, "BatchRange")
    assert batch_range["Parameters"]["items.$"] == (
        "States.ArrayRange($.group.first, $.group.last, 1)"
    )
    convert_map = state(asl, "ConvertBatches")
    assert convert_map["Type"] == "Map"
    assert convert_map["MaxConcurrency"] == 5
    assert convert_map["ItemProcessor"]["ProcessorConfig"]["Mode"] == "INLINE"
    task = state(asl, "ConvertBatch")
    assert task["Parameters"]["FunctionName"] == "SUB:ConvertFunctionArn"
    throttled = retry_for(task, "ModelThrottled")
    assert_backoff(throttled)
    assert throttled.get("MaxDelaySeconds", 0) >= 60
    assert_backoff(retry_for(task, "TransientError"))
    assert retry_for(task, "Sandbox.Timedout")["MaxAttempts"] >= 1  # a timed-out invocation
    for error in LAMBDA_ERRORS:
        assert_backoff(retry_for(task, error))
    (catch,) = task["Catch"]
    assert catch["ErrorEquals"] == ["States.ALL"] and catch["Next"] == "MarkBatchFailed"
    marker = state(asl, "MarkBatchFailed")
    assert marker["Parameters"]["FunctionName"] == "SUB:BatchFailedFunctionArn"
    assert marker["Parameters"]["Payload"]["error.$"] == "$.failure.Error"
    assert subs["ConvertFunctionArn"] == {
        "Fn::GetAtt": [synth.logical_id(synth.stack.pipeline.stages.convert), "Arn"]
    }


def test_plan_machine_maps_over_sections(synth: Synth) -> None:
    _, asl, subs = machine(synth, "plan")
    plan_map = state(asl, "PlanSections")
    assert plan_map["Type"] == "Map" and plan_map["MaxConcurrency"] == 10
    task = state(asl, "PlanSection")
    assert_backoff(retry_for(task, "ModelThrottled"))
    assert_backoff(retry_for(task, "Lambda.TooManyRequestsException"))
    assert set(subs) == {
        "SectionFunctionArn",
        "PlanSectionFunctionArn",
        "PreparePlanFunctionArn",
        "IndexChunksFunctionArn",
        "ActivatePlanFunctionArn",
        "AbandonPlanFunctionArn",
    }
    # the plan is saved before indexing; a failed index or activation deletes its chunks
    assert state(asl, "Prepare")["Next"] == "IndexGroups"
    assert state(asl, "IndexGroups")["Next"] == "Activate"
    for failing in ("IndexGroups", "Activate"):
        (catch,) = state(asl, failing)["Catch"]
        assert catch["Next"] == "Abandon"
    assert state(asl, "Abandon")["Next"] == "PlanFailed"
    indexing = state(asl, "IndexChunks")
    assert_backoff(retry_for(indexing, "ModelThrottled"))
    assert state(asl, "IndexRanges")["MaxConcurrency"] == 4


@pytest.mark.parametrize(("name", "task"), [("ingest", "Plan"), ("replan", "PlanDocument")])
def test_planning_is_one_sub_workflow_started_sync(synth: Synth, name: str, task: str) -> None:
    plan_id, _, _ = machine(synth, "plan")
    _, asl, subs = machine(synth, name)
    step = state(asl, task)
    assert step["Resource"] == "arn:aws:states:::states:startExecution.sync:2"
    assert step["Parameters"]["StateMachineArn"] == "SUB:PlanStateMachineArn"
    assert subs["PlanStateMachineArn"] == {"Ref": plan_id}
    # Nothing of the planning machine is copied into the caller.
    assert not {"PlanSections", "Prepare", "Activate"} & {n for n, _ in states(asl)}


def test_ingest_failures_mark_the_document_failed(synth: Synth) -> None:
    _, asl, _ = machine(synth, "ingest")
    failing = [
        name
        for name, s in asl["States"].items()
        if s["Type"] in {"Task", "Map"} and name not in {"MarkFailed"}
    ]
    assert {
        "Register",
        "Normalise",
        "CountPages",
        "RenderSlices",
        "ConvertGroups",
        "Parse",
        "Plan",
        "Finalise",
    } <= set(failing)
    for name in failing:
        catches = asl["States"][name].get("Catch", [])
        assert any(
            c["ErrorEquals"] == ["States.ALL"] and c["Next"] == "MarkFailed" for c in catches
        ), name


def test_replan_uses_a_distributed_map_over_an_s3_manifest(synth: Synth) -> None:
    _, asl, subs = machine(synth, "replan")
    dmap = state(asl, "ReplanDocuments")
    assert dmap["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
    assert dmap["ItemReader"]["Resource"] == "arn:aws:states:::s3:getObject"
    assert dmap["ItemReader"]["Parameters"] == {
        "Bucket.$": "$.manifest.bucket",
        "Key.$": "$.manifest.key",
    }
    assert dmap["MaxConcurrency"] == 10
    assert dmap["ResultWriter"]["Parameters"]["Bucket"] == "SUB:ArtifactsBucket"
    assert subs["ArtifactsBucket"] == {"Ref": synth.logical_id(synth.stack.storage.artifacts)}
    # the manifest read by Step Functions itself (S3 throttling, a 5xx) is retried for hours
    # like a task; nothing has run yet, so retrying the whole map repeats no planning
    (reader,) = dmap["Retry"]
    assert reader["ErrorEquals"] == ["States.ItemReaderFailed"]
    assert (reader["MaxAttempts"], reader["MaxDelaySeconds"]) == (40, 900)
    # one document's failure is caught inside the item, not failing the whole run
    item = state(asl, "PlanDocument")
    assert any(c["ErrorEquals"] == ["States.ALL"] for c in item["Catch"])


def test_payloads_carry_only_keys_and_counts(synth: Synth) -> None:
    """Lambda results are narrowed by ResultSelector so no document text rides the state."""
    for name in ("ingest", "convert", "plan", "replan"):
        _, asl, _ = machine(synth, name)
        for state_name, step in states(asl):
            if step.get("Resource") == "arn:aws:states:::lambda:invoke":
                assert "ResultSelector" in step, f"{name}.{state_name} passes its whole result"
                fields = {k.removesuffix(".$") for k in step["ResultSelector"]}
                assert not fields & {"text", "markdown", "chunks_text", "elements_data"}


# A VPC function Lambda reclaimed the network interfaces of, or one short of interfaces or
# addresses, fails its invocation with these until the function is Active again (AWS Lambda
# Developer Guide, "Configuring a Lambda function to access resources in a VPC")
VPC_NOT_READY = {
    "Lambda.ResourceNotReadyException",
    "Lambda.EC2ThrottledException",
    "Lambda.ENILimitReachedException",
    "Lambda.SubnetIPAddressLimitReachedException",
}
BACKPRESSURE = {
    "ModelThrottled",
    "TransientError",
    *LAMBDA_ERRORS,
    *VPC_NOT_READY,
    "Lambda.ClientExecutionTimeoutException",
}
HORIZON_S = 3 * 3600


def expected_wait_s(retrier: dict[str, Any]) -> float:
    """The mean total wait of a retrier's retries with full jitter: each wait is uniform
    between 0 and min(MaxDelaySeconds, IntervalSeconds x BackoffRate^n)."""
    cap = retrier.get("MaxDelaySeconds", float("inf"))
    return sum(
        min(cap, retrier["IntervalSeconds"] * retrier["BackoffRate"] ** n) / 2
        for n in range(retrier["MaxAttempts"])
    )


def test_backpressure_is_retried_for_hours_on_every_task(synth: Synth) -> None:
    """Throttling and transient errors never fail a document within hours: every Lambda task
    retries all of them with backoff and full jitter, each wait at most 15 minutes, for an
    expected 3 hours or more (the ASL limits: MaxDelaySeconds below 31,622,401)."""
    tasks = 0
    for name in ("ingest", "convert", "plan", "replan"):
        _, asl, _ = machine(synth, name)
        for state_name, task in states(asl):
            if task.get("Resource") != "arn:aws:states:::lambda:invoke":
                continue
            tasks += 1
            (retrier,) = [r for r in task["Retry"] if BACKPRESSURE & set(r["ErrorEquals"])]
            assert set(retrier["ErrorEquals"]) == BACKPRESSURE, state_name
            assert_backoff(retrier)
            assert retrier["MaxDelaySeconds"] == 900
            assert expected_wait_s(retrier) >= HORIZON_S, (state_name, expected_wait_s(retrier))
    assert tasks >= 15


def test_the_retrieval_api_has_reserved_concurrency(synth: Synth) -> None:
    retrieve = synth.resources[synth.logical_id(synth.stack.pipeline.stages.retrieve)]
    assert retrieve["Properties"]["ReservedConcurrentExecutions"] == 10
    others = [
        f
        for f in synth.stack.pipeline.stages.all()
        if f is not synth.stack.pipeline.stages.retrieve
    ]
    assert all(
        "ReservedConcurrentExecutions" not in synth.resources[synth.logical_id(f)]["Properties"]
        for f in others
    )
