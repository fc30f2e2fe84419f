"""Intake: S3 events to queues to the starter and delete functions; re-plan requests on the
project's event bus to the re-plan machine."""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from drac.aws.identity import REPLAN_ADMIN_SOURCE, tenant_source
from drac.metadata import SIDECAR_SUFFIX
from drac.settings import Settings
from infra.stages import Stages
from infra.storage import INCOMING_PREFIX, Storage

REPLAN_DETAIL_TYPE = "Replan Requested"


def replan_sources(settings: Settings) -> dict[str, list[str]]:
    """Each `source` a re-plan may be sent with -> the principals the bus lets send it: one
    per configured tenant (its mapped principals) and the admin source (the admins)."""
    sources: dict[str, list[str]] = {REPLAN_ADMIN_SOURCE: list(settings.cloud.admin_principals)}
    for arn, tenant in settings.cloud.tenant_principals.items():
        sources.setdefault(tenant_source(tenant), []).append(arn)
    return sources


def replan_pattern(settings: Settings) -> dict:
    """EventBridge pattern of the re-plan requests the deployment accepts."""
    return {"source": sorted(replan_sources(settings)), "detail-type": [REPLAN_DETAIL_TYPE]}


INGEST_RECEIVES = 5
"""Receives before an upload goes to the dead-letter queue. Waiting (a full pipeline, a
throttled call) burns none: the starter sends a delayed copy and deletes the original; only
failures are received again, so a broken start is dead-lettered within about 2.5 hours
(five receives, 30 minutes apart), not days."""


def object_event_pattern(detail_type: str, bucket_name: str) -> dict:
    """EventBridge pattern for S3 `detail_type` events under incoming/ of one bucket."""
    return {
        "source": ["aws.s3"],
        "detail-type": [detail_type],
        "detail": {
            "bucket": {"name": [bucket_name]},
            "object": {"key": [{"prefix": INCOMING_PREFIX}]},
        },
    }


TAG_DETAIL_TYPES = ("Object Tags Added", "Object Tags Deleted")
"""S3's EventBridge events of PutObjectTagging and DeleteObjectTagging (S3 User Guide, "Using
EventBridge"): a document's drac- tags changed."""


def tags_event_pattern(bucket_name: str) -> dict:
    """EventBridge pattern for tag changes of objects under incoming/ of one bucket."""
    pattern = object_event_pattern(TAG_DETAIL_TYPES[0], bucket_name)
    pattern["detail-type"] = list(TAG_DETAIL_TYPES)
    return pattern


def sidecar_deleted_pattern(bucket_name: str) -> dict:
    """EventBridge pattern for deleted sidecars (`*.metadata.json`, any case) of one bucket:
    their documents' metadata changes (the starter checks the incoming/ prefix: a key field
    takes one of prefix or suffix)."""
    return {
        "source": ["aws.s3"],
        "detail-type": ["Object Deleted"],
        "detail": {
            "bucket": {"name": [bucket_name]},
            "object": {"key": [{"suffix": {"equals-ignore-case": SIDECAR_SUFFIX}}]},
        },
    }


def _pattern(raw: dict) -> events.EventPattern:
    """The CDK form of a raw pattern."""
    return events.EventPattern(
        source=raw["source"], detail_type=raw["detail-type"], detail=raw.get("detail")
    )


class Intake(Construct):
    """Queues with dead-letter queues between EventBridge and the functions it feeds."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        storage: Storage,
        stages: Stages,
        replan_machine: sfn.IStateMachine,
    ) -> None:
        """Create the queues, rules and event sources."""
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.bus = events.EventBus(self, "Bus", event_bus_name=f"{stack.stack_name}-bus")
        docs = storage.documents
        # Visibility at least six times the consumer's 5-minute timeout, as Lambda's SQS
        # event source guidance asks (a batch still running is not received twice).
        self.ingest_queue, self.ingest_dlq = self._queue(
            "IngestQueue", Duration.minutes(30), max_receive_count=INGEST_RECEIVES
        )
        # a waiting upload is sent again, delayed, by the starter itself
        self.ingest_queue.grant_send_messages(stages.starter)
        self.delete_queue, self.delete_dlq = self._queue("DeleteQueue", Duration.minutes(30))
        # Events EventBridge cannot deliver to a queue (its policy, a throttle) are kept in a
        # dead-letter queue instead of being dropped after its retries.
        self.object_events_dlq = self._dead_letter_queue("ObjectEventsDlq")
        self.created_rule = events.Rule(
            self,
            "ObjectCreated",
            description="Uploads under incoming/ start the ingest pipeline",
            event_pattern=_pattern(object_event_pattern("Object Created", docs.bucket_name)),
            targets=[
                targets.SqsQueue(
                    self.ingest_queue,
                    dead_letter_queue=self.object_events_dlq,
                    retry_attempts=185,
                    max_event_age=Duration.hours(24),
                )
            ],
        )
        self.deleted_rule = events.Rule(
            self,
            "ObjectDeleted",
            description="Deleting an upload removes its chunks",
            event_pattern=_pattern(object_event_pattern("Object Deleted", docs.bucket_name)),
            targets=[
                targets.SqsQueue(
                    self.delete_queue,
                    dead_letter_queue=self.object_events_dlq,
                    retry_attempts=185,
                    max_event_age=Duration.hours(24),
                )
            ],
        )
        # Metadata that changes after its document (drac.aws.stages.late_metadata): tag
        # changes and deleted sidecars go to the starter too (a new or replaced sidecar is an
        # Object Created event already).
        self.tags_rule = events.Rule(
            self,
            "ObjectTagsChanged",
            description="Tag changes under incoming/ update the document's metadata",
            event_pattern=_pattern(tags_event_pattern(docs.bucket_name)),
            targets=[
                targets.SqsQueue(
                    self.ingest_queue,
                    dead_letter_queue=self.object_events_dlq,
                    retry_attempts=185,
                    max_event_age=Duration.hours(24),
                )
            ],
        )
        self.sidecar_deleted_rule = events.Rule(
            self,
            "SidecarDeleted",
            description="A deleted metadata sidecar updates its document's metadata",
            event_pattern=_pattern(sidecar_deleted_pattern(docs.bucket_name)),
            targets=[
                targets.SqsQueue(
                    self.ingest_queue,
                    dead_letter_queue=self.object_events_dlq,
                    retry_attempts=185,
                    max_event_age=Duration.hours(24),
                )
            ],
        )
        stages.starter.add_event_source(
            sources.SqsEventSource(
                self.ingest_queue,
                batch_size=5,
                max_concurrency=settings.deploy.starter_concurrency,
                report_batch_item_failures=True,
            )
        )
        stages.delete.add_event_source(
            sources.SqsEventSource(
                self.delete_queue,
                batch_size=5,
                max_concurrency=2,
                report_batch_item_failures=True,
            )
        )
        self.replan_dlq = self._dead_letter_queue("ReplanTargetDlq")
        self._restrict_replan_senders(settings)
        # A role of its own (not CDK's shared events role), so the deployment can name the
        # principals allowed to start the re-plan machine (drac.aws.access_audit).
        self.replan_target_role = iam.Role(
            self, "ReplanTargetRole", assumed_by=iam.ServicePrincipal("events.amazonaws.com")
        )
        self.replan_rule = events.Rule(
            self,
            "ReplanRequested",
            event_bus=self.bus,
            description="Replan Requested events start the re-plan state machine",
            event_pattern=_pattern(replan_pattern(settings)),
            targets=[
                targets.SfnStateMachine(
                    replan_machine,
                    role=self.replan_target_role,
                    # the whole event: the Manifest stage holds the detail to its source's scope
                    input=events.RuleTargetInput.from_event_path("$"),
                    dead_letter_queue=self.replan_dlq,
                    retry_attempts=4,
                    max_event_age=Duration.hours(2),
                )
            ],
        )
        self.dead_letter_queues = [
            self.ingest_dlq,
            self.delete_dlq,
            self.object_events_dlq,
            self.replan_dlq,
        ]

    def _restrict_replan_senders(self, settings: Settings) -> None:
        """Bus policy: an explicit Deny (which wins over any identity policy of the account)
        for a PutEvents of a re-plan source by anyone but the principals mapped to it."""
        for index, (source, principals) in enumerate(sorted(replan_sources(settings).items())):
            conditions: dict[str, dict[str, object]] = {"StringEquals": {"events:source": source}}
            if principals:
                conditions["StringNotEquals"] = {"aws:PrincipalArn": sorted(principals)}
            self.bus.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=f"OnlyMappedPrincipalsSendReplanSource{index}",
                    effect=iam.Effect.DENY,
                    principals=[iam.AnyPrincipal()],
                    actions=["events:PutEvents"],
                    resources=[self.bus.event_bus_arn],
                    conditions=conditions,
                )
            )

    def _dead_letter_queue(self, construct_id: str) -> sqs.Queue:
        """A TLS-only, encrypted dead-letter queue keeping messages 14 days."""
        return sqs.Queue(
            self,
            construct_id,
            enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            retention_period=Duration.days(14),
        )

    def _queue(
        self, construct_id: str, visibility: Duration, max_receive_count: int = 5
    ) -> tuple[sqs.Queue, sqs.Queue]:
        """A TLS-only, encrypted queue keeping messages 14 days, and its dead-letter queue."""
        dlq = self._dead_letter_queue(f"{construct_id}Dlq")
        queue = sqs.Queue(
            self,
            construct_id,
            enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            visibility_timeout=visibility,
            retention_period=Duration.days(14),
            dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=max_receive_count),
        )
        return queue, dlq
