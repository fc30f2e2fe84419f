"""Pipeline: Lambda stages, the three state machines, queues and EventBridge rules."""

from __future__ import annotations

import json

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.asl import render_definition
from infra.config import Settings, model_arns
from infra.functions import FunctionFactory
from infra.search import Search
from infra.storage import INCOMING_PREFIX, Storage

REPLAN_DETAIL_TYPE = "Replan Requested"
REPLAN_SOURCE = "drac.api"


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


REPLAN_PATTERN = {"source": [REPLAN_SOURCE], "detail-type": [REPLAN_DETAIL_TYPE]}


def _pattern(raw: dict) -> events.EventPattern:
    """The CDK form of a raw pattern."""
    return events.EventPattern(
        source=raw["source"], detail_type=raw["detail-type"], detail=raw.get("detail")
    )


class Pipeline(Construct):
    """The event-driven pipeline from an upload to indexed chunks."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        storage: Storage,
        search: Search,
        factory: FunctionFactory,
    ) -> None:
        """Create the functions with per-function grants, the machines and the event wiring."""
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.settings = settings
        self.storage = storage
        self.search = search
        self.bus = events.EventBus(self, "Bus", event_bus_name=f"{stack.stack_name}-bus")
        self.child_execution_arns: list[str] = []
        """Execution ARNs (with a wildcard name) that parent workflows describe and stop."""
        env = {
            "DOCUMENTS_BUCKET": storage.documents.bucket_name,
            "ARTIFACTS_BUCKET": storage.artifacts.bucket_name,
            "DOCUMENTS_TABLE": storage.documents_table.table_name,
            "ELEMENTS_TABLE": storage.elements_table.table_name,
            "PLANS_TABLE": storage.plans_table.table_name,
            "LEDGER_TABLE": storage.ledger_table.table_name,
            "COLLECTION_ENDPOINT": search.endpoint,
            "INDEX_NAME": settings.index_name,
            "CONVERSION_MODEL_ID": settings.conversion_model_id,
            "PLANNING_MODEL_ID": settings.planning_model_id,
            "EMBEDDING_MODEL_ID": settings.embedding_model_id,
            "EMBEDDING_DIMENSION": str(settings.embedding_dimension),
            "BATCH_SIZE": str(settings.batch_size),
            "DEFAULT_STRATEGY": json.dumps(settings.strategy, sort_keys=True),
        }
        factory.environment.update(env)
        s, d = storage, storage
        mk = factory.make

        self.register = mk("Register", "register")
        d.documents.grant_read(self.register)
        d.documents_table.grant_read_write_data(self.register)
        # A Markdown/text source is stored as its own converted batch in the artifacts.
        self.register.add_to_role_policy(iam.PolicyStatement(
            actions=["s3:PutObject"], resources=[d.artifacts.arn_for_objects("*")]))

        self.normalise = factory.make_image("Normalise", "normalise")
        d.documents.grant_read(self.normalise)
        d.artifacts.grant_put(self.normalise)
        d.documents_table.grant_read_write_data(self.normalise)

        self.render = mk("Render", "render", memory=2048, timeout=Duration.minutes(10))
        d.documents.grant_read(self.render)
        d.artifacts.grant_read_write(self.render)
        # Render records the page count on the document's record (get, then put).
        self.render.add_to_role_policy(iam.PolicyStatement(
            actions=["dynamodb:GetItem", "dynamodb:PutItem"],
            resources=[d.documents_table.table_arn]))

        self.convert = mk("Convert", "convert", memory=1024, timeout=Duration.minutes(5))
        s.artifacts.grant_read_write(self.convert)
        s.ledger_table.grant_write_data(self.convert)
        self._grant_models(self.convert, [settings.conversion_model_id])

        self.batch_failed = mk("BatchFailed", "batch_failed")
        s.artifacts.grant_read_write(self.batch_failed)

        self.parse = mk("Parse", "parse", memory=1024, timeout=Duration.minutes(5))
        s.artifacts.grant_read_write(self.parse)
        s.elements_table.grant_read_write_data(self.parse)
        s.documents_table.grant_read_write_data(self.parse)

        self.section = mk("Section", "section", memory=1024, timeout=Duration.minutes(5))
        s.artifacts.grant_read_write(self.section)
        s.elements_table.grant_read_data(self.section)

        self.plan_section = mk("PlanSection", "plan_section", timeout=Duration.minutes(5))
        s.artifacts.grant_read_write(self.plan_section)
        s.elements_table.grant_read_data(self.plan_section)
        s.plans_table.grant_read_write_data(self.plan_section)
        s.ledger_table.grant_write_data(self.plan_section)
        self._grant_models(self.plan_section, [settings.planning_model_id])

        self.commit = mk("CommitPlan", "commit_plan", memory=1024, timeout=Duration.minutes(15))
        s.artifacts.grant_read(self.commit)
        s.elements_table.grant_read_data(self.commit)
        s.plans_table.grant_read_write_data(self.commit)
        s.documents_table.grant_read_write_data(self.commit)
        s.ledger_table.grant_write_data(self.commit)
        self._grant_models(self.commit, [settings.embedding_model_id])
        search.grant_index_access(self.commit.role)

        self.finalise = mk("Finalise", "finalise")
        s.documents_table.grant_read_write_data(self.finalise)
        search.grant_index_access(self.finalise.role)

        self.delete = mk("Delete", "delete", timeout=Duration.minutes(2))
        s.documents_table.grant_read_write_data(self.delete)
        # Delete asks whether the object still has a current version (HeadObject): that
        # needs s3:GetObject, and s3:ListBucket for S3 to answer 404 rather than 403.
        self.delete.add_to_role_policy(iam.PolicyStatement(
            actions=["s3:GetObject"], resources=[s.documents.arn_for_objects("*")]))
        self.delete.add_to_role_policy(iam.PolicyStatement(
            actions=["s3:ListBucket"], resources=[s.documents.bucket_arn]))
        search.grant_index_access(self.delete.role)

        self.manifest = mk("Manifest", "replan_manifest", timeout=Duration.minutes(5))
        s.documents_table.grant_read_data(self.manifest)
        s.artifacts.grant_put(self.manifest)

        self.plan_machine = self._machine(
            "PlanMachine", "plan",
            [self.section, self.plan_section, self.commit],
            {"SectionFunctionArn": self.section.function_arn,
             "PlanSectionFunctionArn": self.plan_section.function_arn,
             "CommitPlanFunctionArn": self.commit.function_arn},
            {"SectionConcurrency": settings.section_concurrency},
        )
        self.ingest_machine = self._machine(
            "IngestMachine", "ingest",
            [self.register, self.normalise, self.render, self.convert, self.batch_failed,
             self.parse, self.finalise],
            {"RegisterFunctionArn": self.register.function_arn,
             "NormaliseFunctionArn": self.normalise.function_arn,
             "RenderFunctionArn": self.render.function_arn,
             "ConvertFunctionArn": self.convert.function_arn,
             "BatchFailedFunctionArn": self.batch_failed.function_arn,
             "ParseFunctionArn": self.parse.function_arn,
             "FinaliseFunctionArn": self.finalise.function_arn,
             "PlanStateMachineArn": self.plan_machine.state_machine_arn},
            {"BatchConcurrency": settings.batch_concurrency},
        )
        self.replan_machine = self._machine(
            "ReplanMachine", "replan",
            [self.manifest],
            {"ManifestFunctionArn": self.manifest.function_arn,
             "PlanStateMachineArn": self.plan_machine.state_machine_arn,
             "ArtifactsBucket": s.artifacts.bucket_name},
            {"ReplanConcurrency": settings.replan_concurrency},
        )
        for machine in (self.ingest_machine, self.replan_machine):
            self._grant_start_sync(machine, self.plan_machine)
        self._grant_distributed_map(self.replan_machine)

        self.starter = mk(
            "Starter", "starter",
            environment={
                "INGEST_STATE_MACHINE_ARN": self.ingest_machine.state_machine_arn,
                "MAX_RUNNING_DOCUMENTS": str(settings.max_running_documents),
            },
        )
        s.documents.grant_read(self.starter)
        s.documents_table.grant_read_data(self.starter)
        self.ingest_machine.grant_start_execution(self.starter)
        self.starter.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:ListExecutions"],
                resources=[self.ingest_machine.state_machine_arn],
            )
        )
        self._wire_events()

    def factory_functions(self) -> list[lambda_.IFunction]:
        """Every function a state machine or event source invokes."""
        return [
            self.register, self.normalise, self.render, self.convert, self.batch_failed,
            self.parse, self.section, self.plan_section, self.commit, self.finalise,
            self.delete, self.manifest, self.starter,
        ]

    def _machine(
        self,
        construct_id: str,
        name: str,
        functions: list[lambda_.IFunction],
        strings: dict[str, str],
        numbers: dict[str, int],
    ) -> sfn.StateMachine:
        """Return a standard state machine from `statemachine/<name>.asl.json`."""
        stack = Stack.of(self)
        log_group = logs.LogGroup(
            self, f"{construct_id}Logs",
            log_group_name=f"/aws/vendedlogs/states/{stack.stack_name}-{name}",
            retention=logs.RetentionDays.ONE_MONTH,
        )
        machine = sfn.StateMachine(
            self,
            construct_id,
            state_machine_name=f"{stack.stack_name}-{name}",
            definition_body=sfn.DefinitionBody.from_string(render_definition(name, numbers)),
            definition_substitutions=strings,
            state_machine_type=sfn.StateMachineType.STANDARD,
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
        )
        for fn in functions:
            fn.grant_invoke(machine)
        return machine

    def _grant_start_sync(self, parent: sfn.StateMachine, child: sfn.StateMachine) -> None:
        """Permissions for `states:startExecution.sync:2` from parent to child."""
        stack = Stack.of(self)
        child.grant_start_execution(parent)
        executions = stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{child.state_machine_name}:*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        self.child_execution_arns.append(executions)
        parent.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:DescribeExecution", "states:StopExecution"],
                resources=[executions],
            )
        )
        parent.add_to_role_policy(
            iam.PolicyStatement(
                actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
                resources=[
                    stack.format_arn(
                        service="events",
                        resource="rule",
                        resource_name="StepFunctionsGetEventsForStepFunctionsExecutionRule",
                    )
                ],
            )
        )

    def _grant_distributed_map(self, machine: sfn.StateMachine) -> None:
        """A Distributed Map starts child executions of its own machine and reads/writes S3."""
        stack = Stack.of(self)
        own_arn = stack.format_arn(
            service="states", resource="stateMachine",
            resource_name=f"{stack.stack_name}-replan",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        machine.add_to_role_policy(
            iam.PolicyStatement(actions=["states:StartExecution"], resources=[own_arn])
        )
        map_runs = stack.format_arn(
            service="states", resource="execution",
            resource_name=f"{stack.stack_name}-replan/*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        self.child_execution_arns.append(map_runs)
        machine.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:DescribeExecution", "states:StopExecution"], resources=[map_runs]
            )
        )
        self.storage.artifacts.grant_read_write(machine)

    def _grant_models(self, fn: lambda_.IFunction, model_ids: list[str]) -> None:
        """Allow bedrock:InvokeModel on exactly the configured models (Converse uses it too)."""
        stack = Stack.of(self)
        resources = [
            arn
            for model_id in model_ids
            for arn in model_arns(model_id, stack.region, stack.account, stack.partition)
        ]
        fn.add_to_role_policy(
            iam.PolicyStatement(actions=["bedrock:InvokeModel"], resources=resources)
        )

    def _queue(
        self, construct_id: str, visibility: Duration, max_receive_count: int = 5
    ) -> sqs.Queue:
        """Return a TLS-only, encrypted queue with a dead-letter queue after 5 receives."""
        dlq = sqs.Queue(
            self, f"{construct_id}Dlq",
            enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            retention_period=Duration.days(14),
        )
        queue = sqs.Queue(
            self, construct_id,
            enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            visibility_timeout=visibility,
            dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=max_receive_count),
        )
        return queue

    def _wire_events(self) -> None:
        """S3 created/deleted -> queues -> starter/delete; Replan Requested -> re-plan machine."""
        docs = self.storage.documents
        # Generous receive count: a full pipeline defers starts by returning messages.
        self.ingest_queue = self._queue("IngestQueue", Duration.minutes(2), max_receive_count=60)
        self.delete_queue = self._queue("DeleteQueue", Duration.minutes(12))
        self.created_rule = events.Rule(
            self, "ObjectCreated",
            description="Uploads under incoming/ start the ingest pipeline",
            event_pattern=_pattern(object_event_pattern("Object Created", docs.bucket_name)),
            targets=[targets.SqsQueue(self.ingest_queue)],
        )
        self.deleted_rule = events.Rule(
            self, "ObjectDeleted",
            description="Deleting an upload removes its chunks",
            event_pattern=_pattern(object_event_pattern("Object Deleted", docs.bucket_name)),
            targets=[targets.SqsQueue(self.delete_queue)],
        )
        self.starter.add_event_source(
            sources.SqsEventSource(
                self.ingest_queue,
                batch_size=5,
                max_concurrency=self.settings.starter_concurrency,
                report_batch_item_failures=True,
            )
        )
        self.delete.add_event_source(
            sources.SqsEventSource(
                self.delete_queue, batch_size=5, max_concurrency=2,
                report_batch_item_failures=True,
            )
        )
        self.replan_dlq = sqs.Queue(
            self, "ReplanTargetDlq", enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            retention_period=Duration.days(14),
        )
        self.replan_rule = events.Rule(
            self, "ReplanRequested",
            event_bus=self.bus,
            description="Replan Requested events start the re-plan state machine",
            event_pattern=_pattern(REPLAN_PATTERN),
            targets=[
                targets.SfnStateMachine(
                    self.replan_machine,
                    input=events.RuleTargetInput.from_event_path("$.detail"),
                    dead_letter_queue=self.replan_dlq,
                    retry_attempts=4,
                    max_event_age=Duration.hours(2),
                )
            ],
        )
        self.dead_letter_queues = [
            self.ingest_queue.dead_letter_queue.queue,
            self.delete_queue.dead_letter_queue.queue,
            self.replan_dlq,
        ]


