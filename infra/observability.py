"""Observability: an SNS topic operators subscribe to, alarms with actions on every failure
signal, and a CloudWatch dashboard."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from drac.settings import Settings
from infra.pipeline import Pipeline
from infra.search import Search

NAMESPACE = "Drac"
FIVE_MINUTES = Duration.minutes(5)
SCANNED_UNREAD_THRESHOLD = 5
"""Scanned pages left unread by OCR in five minutes that raise the alarm."""
INGEST_QUEUE_AGE_S = 3600
"""Age of the oldest upload message that raises the alarm. A waiting upload is a fresh copy
at most 15 minutes old (the starter's longest delay); a failing one is received again every
30 minutes: an hour-old message means nothing has taken it from the queue twice running."""
TIMED_MACHINES = ("Convert", "Plan")
"""The machines with a top-level TimeoutSeconds (the child workflows, whose parents catch
their failure). Ingest and re-plan have none: every state of theirs is bounded (each task's
timeout and retries, each child's timeout), so they end by themselves, and a machine timeout
would end them without their cleanup (MarkFailed)."""
# Alarm name (construct id) prefix -> what it means and what to do (docs/aws.md repeats it).
MEANINGS = {
    "ExecutionsFailed": "a state machine execution failed (a document FAILED, or a re-plan)",
    "ExecutionsTimedOut": "a child execution ran past its machine's timeout",
    "DeadLetters": "messages or events wait in a dead-letter queue: redrive them",
    "Errors": "a function Step Functions does not invoke (starter, delete, retrieve) crashed",
    "StartsFailed": "an upload could not be started (not a wait): it goes to the dead letters",
    "IngestQueueAge": "an upload message waited over an hour in the ingest queue",
    "Throttles": "a Lambda function was throttled (concurrency limits)",
    "RetrieveUrl5xx": "the retrieval API answered 5xx to callers",
    "DocumentsPartial": "a document was indexed with pages that could not be converted",
    "BedrockThrottling": "Bedrock throttled model calls (sustained): ask for quota",
    "SearchErrors": "OpenSearch Serverless answered 5xx",
    "SearchThrottling": "OpenSearch Serverless answered 429 (sustained): raise its OCU limit",
    "UploadsNotFound": "an upload event named an object found under no form of its key",
    "MetadataRefused": "a late sidecar or tag change broke a metadata limit and was refused",
    "ScannedPagesUnread": "scanned pages OCR could not read: their conversion went unchecked",
}


class Observability(Construct):
    """Alarm topic, alarms (each with the topic as its alarm action) and dashboard."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        pipeline: Pipeline,
        search: Search,
        settings: Settings,
    ) -> None:
        """Create the topic, the alarms and the dashboard."""
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        # CloudWatch can publish to an encrypted topic only with a customer managed key
        # whose policy lets cloudwatch.amazonaws.com use it (the AWS managed key cannot).
        self.key = kms.Key(
            self,
            "AlarmTopicKey",
            enable_key_rotation=True,
            description="encrypts the drac alarm topic",
            removal_policy=RemovalPolicy.DESTROY,
        )  # it encrypts no data at rest
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],
                conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
            )
        )
        self.topic = sns.Topic(
            self,
            "AlarmTopic",
            display_name=f"{stack.stack_name} alarms",
            master_key=self.key,
            enforce_ssl=True,
        )
        if settings.deploy.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.deploy.alarm_email))
        self.action = cw_actions.SnsAction(self.topic)
        self.alarms: list[cw.Alarm] = []

        machines = {
            "Ingest": pipeline.ingest_machine,
            "Convert": pipeline.convert_machine,
            "Plan": pipeline.plan_machine,
            "Replan": pipeline.replan_machine,
        }
        for label, machine in machines.items():
            self._alarm(f"ExecutionsFailed{label}", machine.metric_failed(period=FIVE_MINUTES))
        for label in TIMED_MACHINES:
            self._alarm(
                f"ExecutionsTimedOut{label}", machines[label].metric_timed_out(period=FIVE_MINUTES)
            )
        for queue in pipeline.dead_letter_queues:
            self._alarm(
                f"DeadLetters{queue.node.id}",
                queue.metric_approximate_number_of_messages_visible(period=FIVE_MINUTES),
            )
        age = pipeline.intake.ingest_queue.metric_approximate_age_of_oldest_message(
            period=FIVE_MINUTES, statistic="Maximum"
        )
        self._alarm("IngestQueueAge", age, threshold=INGEST_QUEUE_AGE_S)
        self._alarm("StartsFailed", _emf("StartsFailed", None, FIVE_MINUTES))
        functions = pipeline.stages.all()
        # A function a state machine invokes raises retryable errors by design (throttles,
        # TransientError): its Lambda Errors metric counts each retried try. What Step
        # Functions does not retry fails the execution (ExecutionsFailed, above) or makes a
        # PARTIAL document (DocumentsPartial); only the other functions alarm on Errors.
        stages = pipeline.stages
        for consumer in (stages.starter, stages.delete, stages.retrieve):
            self._alarm(f"Errors{consumer.node.id}", consumer.metric_errors(period=FIVE_MINUTES))
        for fn in functions:
            self._alarm(
                f"Throttles{fn.node.id}",
                fn.metric_throttles(period=FIVE_MINUTES),
                threshold=5,
                periods=2,
            )
        retrieve = pipeline.stages.retrieve
        url_errors = cw.Metric(
            namespace="AWS/Lambda",
            metric_name="Url5xxCount",
            statistic="Sum",
            period=FIVE_MINUTES,
            dimensions_map={"FunctionName": retrieve.function_name},
        )
        self._alarm("RetrieveUrl5xx", url_errors)
        partial = _emf("DocumentsPartial", None, FIVE_MINUTES)
        self._alarm("DocumentsPartial", partial)
        self._alarm("UploadsNotFound", _emf("UploadsNotFound", None, FIVE_MINUTES))
        self._alarm("MetadataRefused", _emf("MetadataRefused", None, FIVE_MINUTES))
        # a blank separator sheet is an unread scan too: a handful in five minutes is normal,
        # a batch of scans OCR cannot read (a broken image, a worker limit) is not
        unread = _emf("ScannedPagesUnread", None, FIVE_MINUTES)
        self._alarm("ScannedPagesUnread", unread, threshold=SCANNED_UNREAD_THRESHOLD)
        throttled = _emf("ModelThrottled", None, FIVE_MINUTES)
        self._alarm("BedrockThrottling", throttled, threshold=20, periods=3)
        search_errors = cw.Metric(
            namespace="AWS/AOSS",
            metric_name="5xx",
            statistic="Sum",
            period=FIVE_MINUTES,
            dimensions_map={
                "ClientId": stack.account,
                "CollectionId": search.collection.attr_id,
                "CollectionName": search.collection_name,
            },
        )
        self._alarm("SearchErrors", search_errors)
        # AWS/AOSS counts 4xx answers together (a 404 or 403 too): the pipeline's index client
        # counts the 429s it is answered, which Step Functions then retries
        search_throttled = _emf("SearchThrottled", None, FIVE_MINUTES)
        self._alarm("SearchThrottling", search_throttled, threshold=20, periods=3)

        hour = Duration.hours(1)
        self.dashboard = cw.Dashboard(self, "Dashboard")
        self.dashboard.add_widgets(
            cw.AlarmStatusWidget(title="Alarms", alarms=self.alarms, width=24),
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Executions",
                left=[m.metric_succeeded() for m in machines.values()]
                + [m.metric_failed() for m in machines.values()],
            ),
            cw.GraphWidget(
                title="Documents",
                left=[
                    _emf("DocumentsIndexed", "indexed", hour),
                    _emf("DocumentsPartial", "partial", hour),
                    _emf("DocumentsFailed", "failed", hour),
                ],
            ),
            cw.GraphWidget(
                title="Conversion",
                left=[
                    _emf("PagesRendered", "pages rendered", hour),
                    _emf("BatchesConverted", "batches converted", hour),
                    _emf("BatchesFailed", "batches failed", hour),
                ],
                right=[
                    _emf("ScannedPagesRead", "scanned pages read", hour),
                    _emf("ScannedPagesUnread", "scanned pages unread", hour),
                ],
            ),
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Tokens",
                left=[
                    _emf("InputTokens", "input tokens", hour),
                    _emf("OutputTokens", "output tokens", hour),
                ],
                right=[_emf("CostUSD", "estimated cost (USD)", hour)],
            ),
            cw.GraphWidget(title="Chunks indexed", left=[_emf("ChunksIndexed", "chunks", hour)]),
            cw.GraphWidget(
                title="Throttling",
                left=[throttled, search_throttled],
                right=[fn.metric_throttles() for fn in functions[:10]],
            ),
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(title="Lambda errors", left=[fn.metric_errors() for fn in functions]),
            cw.GraphWidget(
                title="Retrieval API",
                left=[retrieve.metric_invocations(), url_errors],
                right=[retrieve.metric_duration()],
            ),
            cw.GraphWidget(
                title="Dead-letter queues",
                left=[
                    q.metric_approximate_number_of_messages_visible()
                    for q in pipeline.dead_letter_queues
                ],
            ),
        )

    def _alarm(
        self, construct_id: str, metric: cw.Metric, *, threshold: float = 1, periods: int = 1
    ) -> cw.Alarm:
        """An alarm at `threshold` over `periods` five-minute periods, notifying the topic."""
        kind = next(k for k in MEANINGS if construct_id.startswith(k))
        alarm = metric.create_alarm(
            self,
            construct_id,
            alarm_description=f"{MEANINGS[kind]} ({construct_id}; see docs/aws.md, Alarms)",
            threshold=threshold,
            evaluation_periods=periods,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(self.action)
        self.alarms.append(alarm)
        return alarm


def _emf(name: str, label: str | None, period: Duration) -> cw.Metric:
    """A metric the functions publish with Powertools (namespace Drac, service drac); alarms
    take it without a label (a labelled metric becomes metric math)."""
    return cw.Metric(
        namespace=NAMESPACE,
        metric_name=name,
        statistic="Sum",
        dimensions_map={"service": "drac"},
        label=label,
        period=period,
    )
