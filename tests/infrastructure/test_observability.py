"""Operators are told: every alarm notifies the alarm topic, and an alarm watches each failure
signal (executions failed, child executions timed out, dead letters on every queue, the
ingest queue's oldest message, failed starts, Lambda errors of the functions no state machine
retries and throttles per function, the retrieval API's 5xx, PARTIAL documents, Bedrock and
OpenSearch throttling, OpenSearch Serverless 5xx, refused late metadata), each documented in
docs/aws.md; every asynchronous EventBridge target has a dead-letter queue."""

from __future__ import annotations

import re
from typing import Any

from infra.observability import SCANNED_UNREAD_THRESHOLD
from tests.infrastructure.conftest import ROOT, Synth


def alarms(synth: Synth) -> dict[str, dict[str, Any]]:
    return {k: a["Properties"] for k, a in synth.of_type("AWS::CloudWatch::Alarm").items()}


def _dimension(alarm: dict[str, Any], name: str) -> Any:
    return next(d["Value"] for d in alarm.get("Dimensions", []) if d["Name"] == name)


def test_every_alarm_notifies_the_encrypted_alarm_topic(synth: Synth, alternate: Synth) -> None:
    topic = synth.logical_id(synth.stack.observability.topic)
    assert alarms(synth)
    for logical_id, alarm in alarms(synth).items():
        assert alarm["AlarmActions"] == [{"Ref": topic}], logical_id
        assert alarm["TreatMissingData"] == "notBreaching"
    (props,) = [t["Properties"] for t in synth.of_type("AWS::SNS::Topic").values()]
    assert "KmsMasterKeyId" in props
    assert not synth.of_type("AWS::SNS::Subscription")
    (subscription,) = alternate.of_type("AWS::SNS::Subscription").values()
    assert (subscription["Properties"]["Protocol"], subscription["Properties"]["Endpoint"]) == (
        "email",
        "oncall@example.com",
    )


def test_executions_failed_per_machine_timed_out_per_machine_with_a_timeout(
    synth: Synth,
) -> None:
    import json

    pipeline = synth.stack.pipeline
    machines = {
        synth.logical_id(m): m
        for m in (
            pipeline.ingest_machine,
            pipeline.convert_machine,
            pipeline.plan_machine,
            pipeline.replan_machine,
        )
    }

    def watched(metric: str) -> set[str]:
        return {
            _dimension(a, "StateMachineArn")["Ref"]
            for a in alarms(synth).values()
            if a.get("MetricName") == metric and a.get("Namespace") == "AWS/States"
        }

    assert watched("ExecutionsFailed") == set(machines)
    # an ExecutionsTimedOut alarm only where it can fire: on a machine with a top-level timeout
    timed = set()
    for logical_id in machines:
        text = synth.resources[logical_id]["Properties"]["DefinitionString"]
        parts = text["Fn::Join"][1] if isinstance(text, dict) else [text]
        asl = json.loads("".join(p if isinstance(p, str) else '"x"' for p in parts))
        if isinstance(asl.get("TimeoutSeconds"), int):
            timed.add(logical_id)
    assert timed == {synth.logical_id(pipeline.convert_machine),
                     synth.logical_id(pipeline.plan_machine)}  # fmt: skip
    assert watched("ExecutionsTimedOut") == timed


def test_every_dead_letter_queue_has_a_depth_alarm(synth: Synth) -> None:
    pipeline = synth.stack.pipeline
    watched = {
        _dimension(a, "QueueName")["Fn::GetAtt"][0]
        for a in alarms(synth).values()
        if a.get("MetricName") == "ApproximateNumberOfMessagesVisible"
    }
    assert watched == {synth.logical_id(q) for q in pipeline.dead_letter_queues}
    # every queue's redrive target and every rule target's dead-letter queue is watched
    queues = synth.of_type("AWS::SQS::Queue")
    redrive = {
        q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        for q in queues.values()
        if "RedrivePolicy" in q["Properties"]
    }
    targets = [
        t
        for rule in synth.of_type("AWS::Events::Rule").values()
        for t in rule["Properties"]["Targets"]
    ]
    assert targets and all("DeadLetterConfig" in t for t in targets)
    rule_dlqs = {t["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0] for t in targets}
    assert redrive | rule_dlqs == watched


def test_throttles_alarm_per_function_errors_where_no_state_machine_retries(
    synth: Synth,
) -> None:
    stages = synth.stack.pipeline.stages
    functions = {synth.logical_id(fn) for fn in stages.all()}

    def watched(metric: str) -> set[str]:
        return {
            _dimension(a, "FunctionName")["Ref"]
            for a in alarms(synth).values()
            if a.get("MetricName") == metric and a.get("Namespace") == "AWS/Lambda"
        }

    assert watched("Throttles") == functions
    # a function a state machine invokes raises retried errors by design (its Errors metric
    # counts every retried try): what is not retried fails the execution, alarmed above
    invoked = set()
    for machine in synth.of_type("AWS::StepFunctions::StateMachine").values():
        for value in machine["Properties"].get("DefinitionSubstitutions", {}).values():
            if isinstance(value, dict) and "Fn::GetAtt" in value:
                invoked.add(value["Fn::GetAtt"][0])
    assert watched("Errors") == functions - invoked
    assert watched("Errors") == {synth.logical_id(fn)
                                 for fn in (stages.starter, stages.delete, stages.retrieve)}


def test_the_ingest_queue_age_and_failed_starts_alarm(synth: Synth) -> None:
    from infra.intake import INGEST_RECEIVES
    from infra.observability import INGEST_QUEUE_AGE_S

    intake = synth.stack.pipeline.intake
    (age,) = [a for a in alarms(synth).values()
              if a.get("MetricName") == "ApproximateAgeOfOldestMessage"]  # fmt: skip
    assert _dimension(age, "QueueName") == {
        "Fn::GetAtt": [synth.logical_id(intake.ingest_queue), "QueueName"]}
    assert (age["Statistic"], age["Threshold"], age["EvaluationPeriods"]) == (
        "Maximum", INGEST_QUEUE_AGE_S, 1)
    # a waiting upload is a copy at most 15 minutes old: the alarm is past two receives
    assert INGEST_QUEUE_AGE_S >= 2 * 30 * 60
    (failed,) = [a for a in alarms(synth).values() if a.get("MetricName") == "StartsFailed"]
    assert (failed["Namespace"], failed["Threshold"], failed["EvaluationPeriods"]) == (
        "Drac", 1, 1)
    # a failed start is dead-lettered after a few receives, not days of them
    (queue,) = [q["Properties"] for k, q in synth.of_type("AWS::SQS::Queue").items()
                if k == synth.logical_id(intake.ingest_queue)]  # fmt: skip
    assert queue["RedrivePolicy"]["maxReceiveCount"] == INGEST_RECEIVES <= 5


def test_retrieval_partial_documents_bedrock_and_opensearch_alarms(synth: Synth) -> None:
    by_metric = {(a.get("Namespace"), a.get("MetricName")): a for a in alarms(synth).values()}
    retrieve = synth.logical_id(synth.stack.pipeline.stages.retrieve)
    assert _dimension(by_metric[("AWS/Lambda", "Url5xxCount")], "FunctionName") == {"Ref": retrieve}
    for name in ("DocumentsPartial", "ModelThrottled", "UploadsNotFound", "MetadataRefused",
                 "ScannedPagesUnread", "SearchThrottled", "StartsFailed"):  # fmt: skip
        assert _dimension(by_metric[("Drac", name)], "service") == "drac"
    throttled = by_metric[("Drac", "SearchThrottled")]
    assert (throttled["Threshold"], throttled["EvaluationPeriods"]) == (20, 3)
    # the metric the index client publishes is the one alarmed
    source = (ROOT / "src" / "drac" / "aws" / "runtime.py").read_text()
    assert '"SearchThrottled"' in source
    search = by_metric[("AWS/AOSS", "5xx")]
    stack = synth.stack
    collection = stack.resolve(stack.get_logical_id(stack.search.collection))
    assert _dimension(search, "CollectionId") == {"Fn::GetAtt": [collection, "Id"]}


def test_dashboard_shows_pipeline_metrics(synth: Synth) -> None:
    (dashboard,) = synth.of_type("AWS::CloudWatch::Dashboard").values()
    body = str(dashboard["Properties"]["DashboardBody"])
    for metric in (
        "PagesRendered",
        "BatchesConverted",
        "BatchesFailed",
        "InputTokens",
        "OutputTokens",
        "ChunksIndexed",
        "ModelThrottled",
        "ExecutionsFailed",
        "DocumentsPartial",
        "Url5xxCount",
        "Errors",
        "ScannedPagesRead",
        "ScannedPagesUnread",
    ):
        assert metric in body, metric


def test_a_refused_late_metadata_change_alarms_at_the_first_one(synth: Synth) -> None:
    topic = synth.logical_id(synth.stack.observability.topic)
    (alarm,) = [a for a in alarms(synth).values() if a.get("MetricName") == "MetadataRefused"]
    assert (alarm["Namespace"], alarm["Statistic"], alarm["Period"]) == ("Drac", "Sum", 300)
    assert (alarm["Threshold"], alarm["EvaluationPeriods"]) == (1, 1)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["AlarmActions"] == [{"Ref": topic}]
    assert "refused" in alarm["AlarmDescription"] and "docs/aws.md" in alarm["AlarmDescription"]


def test_every_kind_of_alarm_has_a_row_in_the_operators_table() -> None:
    from pathlib import Path

    from infra.observability import MEANINGS

    table = (Path(__file__).resolve().parents[2] / "docs" / "aws.md").read_text()
    missing = [kind for kind in MEANINGS if f"| `{kind}" not in table]
    assert missing == []


def test_scanned_pages_ocr_left_unread_alarm_past_a_handful(synth: Synth) -> None:
    # the metric ReadScans publishes (functions/read_scans/handler.py) is the one alarmed
    handler = (ROOT / "functions" / "read_scans" / "handler.py").read_text()
    assert 'name="ScannedPagesUnread"' in handler
    topic = synth.logical_id(synth.stack.observability.topic)
    (alarm,) = [a for a in alarms(synth).values() if a.get("MetricName") == "ScannedPagesUnread"]
    assert (alarm["Namespace"], alarm["Statistic"], alarm["Period"]) == ("Drac", "Sum", 300)
    assert (alarm["Threshold"], alarm["EvaluationPeriods"]) == (SCANNED_UNREAD_THRESHOLD, 1)
    assert SCANNED_UNREAD_THRESHOLD > 1  # one blank separator sheet wakes nobody
    assert alarm["AlarmActions"] == [{"Ref": topic}]
    assert "OCR" in alarm["AlarmDescription"] and "docs/aws.md" in alarm["AlarmDescription"]


def test_the_alarm_count_the_docs_and_the_cost_model_state_is_the_stacks(synth: Synth) -> None:
    count = len(alarms(synth))
    docs = (ROOT / "docs" / "aws.md").read_text()
    assert re.search(rf"\b{count} alarms at \$0\.10 per standard alarm-month", docs), count
    cost_model = (ROOT / "bench" / "cloud_throughput.py").read_text()
    assert re.search(rf"alarms: int = {count}\b", cost_model), count
    costs = (ROOT / "BENCHMARKS.md").read_text()
    assert f"| CloudWatch alarms ({count}) |" in costs, count
