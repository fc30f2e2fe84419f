"""Observability: a CloudWatch dashboard and alarms for failures, DLQ depth and throttling."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cw
from constructs import Construct

from infra.pipeline import Pipeline

NAMESPACE = "Drac"
ALARM_METRICS = 10


class Observability(Construct):
    """Dashboard of the pipeline's metrics (Powertools EMF) and its alarms."""

    def __init__(self, scope: Construct, construct_id: str, *, pipeline: Pipeline) -> None:
        """Create the alarms and the dashboard."""
        super().__init__(scope, construct_id)
        self.alarms: list[cw.Alarm] = []
        machines = {
            "Ingest": pipeline.ingest_machine,
            "Plan": pipeline.plan_machine,
            "Replan": pipeline.replan_machine,
        }
        for label, machine in machines.items():
            self.alarms.append(
                machine.metric_failed(period=Duration.minutes(5)).create_alarm(
                    self, f"{label}ExecutionsFailed",
                    alarm_description=f"{label} state machine executions failed",
                    threshold=1, evaluation_periods=1,
                    treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                )
            )
        for index, queue in enumerate(pipeline.dead_letter_queues):
            self.alarms.append(
                queue.metric_approximate_number_of_messages_visible(
                    period=Duration.minutes(5)
                ).create_alarm(
                    self, f"DeadLetters{index}",
                    alarm_description=f"Messages in dead-letter queue {index}",
                    threshold=1, evaluation_periods=1,
                    treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                )
            )
        throttles = cw.Metric(
            namespace=NAMESPACE, metric_name="ModelThrottled", statistic="Sum",
            period=Duration.minutes(5), dimensions_map={"service": "drac"},
        )
        self.alarms.append(
            throttles.create_alarm(
                self, "BedrockThrottling",
                alarm_description="Bedrock throttled model calls (sustained)",
                threshold=20, evaluation_periods=3,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
        )
        # An alarm's metric math may use at most 10 metrics: one alarm per 10 functions.
        functions = pipeline_functions(pipeline)
        lambda_throttles = []
        for group, start in enumerate(range(0, len(functions), ALARM_METRICS)):
            throttles_sum = cw.MathExpression(
                expression="SUM(METRICS())",
                using_metrics={
                    f"t{start + i}": fn.metric_throttles(period=Duration.minutes(5))
                    for i, fn in enumerate(functions[start : start + ALARM_METRICS])
                },
                label=f"Lambda throttles ({group + 1})",
                period=Duration.minutes(5),
            )
            lambda_throttles.append(throttles_sum)
            self.alarms.append(
                throttles_sum.create_alarm(
                    self, f"LambdaThrottling{group + 1}",
                    alarm_description="Lambda invocations throttled",
                    threshold=5, evaluation_periods=2,
                    treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                )
            )

        def emf(name: str, label: str) -> cw.Metric:
            return cw.Metric(namespace=NAMESPACE, metric_name=name, statistic="Sum",
                             dimensions_map={"service": "drac"}, label=label,
                             period=Duration.hours(1))

        self.dashboard = cw.Dashboard(self, "Dashboard")
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Executions",
                left=[m.metric_succeeded() for m in machines.values()]
                + [m.metric_failed() for m in machines.values()],
            ),
            cw.GraphWidget(
                title="Conversion",
                left=[emf("PagesRendered", "pages rendered"),
                      emf("BatchesConverted", "batches converted"),
                      emf("BatchesFailed", "batches failed")],
            ),
            cw.GraphWidget(
                title="Tokens",
                left=[emf("InputTokens", "input tokens"), emf("OutputTokens", "output tokens")],
                right=[emf("CostUSD", "estimated cost (USD)")],
            ),
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(title="Chunks indexed", left=[emf("ChunksIndexed", "chunks")]),
            cw.GraphWidget(title="Throttling", left=[throttles], right=lambda_throttles),
            cw.GraphWidget(
                title="Dead-letter queues",
                left=[q.metric_approximate_number_of_messages_visible()
                      for q in pipeline.dead_letter_queues],
            ),
        )


def pipeline_functions(pipeline: Pipeline) -> list:
    """Return the pipeline's Lambda functions (for aggregate metrics)."""
    return pipeline.stages.all()
