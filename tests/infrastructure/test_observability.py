"""Dashboard and alarms: failed executions, dead-letter queue depth, throttling."""

from __future__ import annotations

from tests.infrastructure.conftest import Synth


def alarms(synth: Synth) -> list[dict]:
    return [a["Properties"] for a in synth.of_type("AWS::CloudWatch::Alarm").values()]


def test_failed_execution_alarm_per_machine(synth: Synth) -> None:
    pipeline = synth.stack.pipeline
    watched = {a["Dimensions"][0]["Value"]["Ref"] for a in alarms(synth)
               if a.get("MetricName") == "ExecutionsFailed" and a["Namespace"] == "AWS/States"}
    assert watched == {synth.logical_id(m) for m in (
        pipeline.ingest_machine, pipeline.plan_machine, pipeline.replan_machine)}


def test_every_dead_letter_queue_has_a_depth_alarm(synth: Synth) -> None:
    pipeline = synth.stack.pipeline
    watched = {a["Dimensions"][0]["Value"]["Fn::GetAtt"][0] for a in alarms(synth)
               if a.get("MetricName") == "ApproximateNumberOfMessagesVisible"}
    assert watched == {synth.logical_id(q) for q in pipeline.dead_letter_queues}
    # ...and each redrive target really is a DLQ of a source queue (or the rule target's)
    queues = synth.of_type("AWS::SQS::Queue")
    redrive = {q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
               for q in queues.values() if "RedrivePolicy" in q["Properties"]}
    assert redrive | {synth.logical_id(pipeline.intake.replan_dlq)} == watched


def test_throttling_alarms(synth: Synth) -> None:
    model = [a for a in alarms(synth) if a.get("MetricName") == "ModelThrottled"]
    assert len(model) == 1 and model[0]["Namespace"] == "Drac"
    lambda_throttles = [a for a in alarms(synth) if "Metrics" in a and any(
        m.get("MetricStat", {}).get("Metric", {}).get("MetricName") == "Throttles"
        for m in a["Metrics"])]
    # an alarm's metric math takes at most 10 metrics: every function, in groups of 10
    assert all(len([m for m in a["Metrics"] if "MetricStat" in m]) <= 10
               for a in lambda_throttles)
    functions = {m["MetricStat"]["Metric"]["Dimensions"][0]["Value"]["Ref"]
                 for a in lambda_throttles for m in a["Metrics"] if "MetricStat" in m}
    assert functions == {synth.logical_id(fn) for fn in synth.stack.pipeline.stages.all()}


def test_dashboard_shows_pipeline_metrics(synth: Synth) -> None:
    (dashboard,) = synth.of_type("AWS::CloudWatch::Dashboard").values()
    body = str(dashboard["Properties"]["DashboardBody"])
    for metric in ("PagesRendered", "BatchesConverted", "BatchesFailed", "InputTokens",
                   "OutputTokens", "ChunksIndexed", "ModelThrottled", "ExecutionsFailed"):
        assert metric in body, metric
