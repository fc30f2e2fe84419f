"""The four Standard state machines, from the ASL files of `statemachine/`."""

from __future__ import annotations

from aws_cdk import ArnFormat, Fn, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from drac.settings import Settings
from infra.asl import render_definition, task_timeouts
from infra.config import removal_policy
from infra.stages import Stages, executions_arn, machine_name
from infra.storage import Storage


class Workflows(Construct):
    """Ingest (per upload), convert (per group of batches of an upload), plan (per planning
    run, shared) and re-plan (per request)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        stages: Stages,
        storage: Storage,
    ) -> None:
        """Create the machines; each role may invoke exactly its functions."""
        super().__init__(scope, construct_id)
        self.settings = settings
        self.child_execution_arns: list[str] = []
        """Execution ARNs (with a wildcard name) that parent workflows describe and stop."""
        st = stages
        self.plan_machine = self._machine(
            "PlanMachine",
            "plan",
            {
                "SectionFunctionArn": st.section,
                "PlanSectionFunctionArn": st.plan_section,
                "PreparePlanFunctionArn": st.prepare,
                "IndexChunksFunctionArn": st.index_chunks,
                "ActivatePlanFunctionArn": st.activate,
                "AbandonPlanFunctionArn": st.abandon,
            },
            {
                "SectionConcurrency": settings.deploy.section_concurrency,
                "IndexConcurrency": settings.deploy.index_concurrency,
            },
        )
        # One child execution per group of batches: each history holds one group's batches.
        # With escalation (escalateTo) it goes on to EscalatePages (escalate.asl.json).
        escalate = {"EscalateFunctionArn": st.escalate} if st.escalate else {}
        self.convert_machine = self._machine(
            "ConvertMachine",
            "convert",
            {
                "ConvertFunctionArn": st.convert,
                "BatchFailedFunctionArn": st.batch_failed,
                **escalate,
            },
            {"BatchConcurrency": settings.conversion.batch_concurrency},
            extensions=("escalate",) if escalate else (),
        )
        self.ingest_machine = self._machine(
            "IngestMachine",
            "ingest",
            {
                "RegisterFunctionArn": st.register,
                "NormaliseFunctionArn": st.normalise,
                "ReadSpreadsheetFunctionArn": st.read_spreadsheet,
                "RenderFunctionArn": st.render,
                "ReadScansFunctionArn": st.read_scans,
                "ParseFunctionArn": st.parse,
                "FinaliseFunctionArn": st.finalise,
            },
            {"RenderConcurrency": settings.conversion.render_concurrency},
            {
                "PlanStateMachineArn": self.plan_machine.state_machine_arn,
                "ConvertStateMachineArn": self.convert_machine.state_machine_arn,
            },
        )
        self.replan_machine = self._machine(
            "ReplanMachine",
            "replan",
            {"ManifestFunctionArn": st.manifest},
            {"ReplanConcurrency": settings.deploy.replan_concurrency},
            {
                "PlanStateMachineArn": self.plan_machine.state_machine_arn,
                "ArtifactsBucket": storage.artifacts.bucket_name,
            },
        )
        for machine in (self.ingest_machine, self.replan_machine):
            self._grant_start_sync(machine, self.plan_machine, "plan")
        self._grant_start_sync(self.ingest_machine, self.convert_machine, "convert")
        self._grant_distributed_map(self.replan_machine, storage)

    def _machine(
        self,
        construct_id: str,
        name: str,
        functions: dict[str, lambda_.IFunction],
        numbers: dict[str, int],
        strings: dict[str, str] | None = None,
        extensions: tuple[str, ...] = (),
    ) -> sfn.StateMachine:
        """A Standard state machine from `statemachine/<name>.asl.json` (and its
        `extensions`), logging to its own log group."""
        stack = Stack.of(self)
        # The vended-logs prefix keeps Step Functions off the size-limited logs resource
        # policy; the stack's UUID makes the name new for every stack, so a retained group
        # of a destroyed (or rolled back) stack never blocks the next create.
        stack_uuid = Fn.select(2, Fn.split("/", stack.stack_id))
        log_group = logs.LogGroup(
            self,
            f"{construct_id}Logs",
            log_group_name=Fn.join(
                "", [f"/aws/vendedlogs/states/{machine_name(stack, name)}-", stack_uuid]
            ),
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=removal_policy(self.settings),
        )
        substitutions = {key: fn.function_arn for key, fn in functions.items()}
        timeouts = task_timeouts(
            {key.removesuffix("FunctionArn"): _timeout_s(fn) for key, fn in functions.items()}
        )
        machine = sfn.StateMachine(
            self,
            construct_id,
            state_machine_name=machine_name(stack, name),
            definition_body=sfn.DefinitionBody.from_string(
                render_definition(name, {**numbers, **timeouts}, extensions=extensions)
            ),
            definition_substitutions={**substitutions, **(strings or {})},
            state_machine_type=sfn.StateMachineType.STANDARD,
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
        )
        for fn in functions.values():
            fn.grant_invoke(machine)
        return machine

    def _grant_start_sync(
        self, parent: sfn.StateMachine, child: sfn.StateMachine, child_name: str
    ) -> None:
        """Permissions for `states:startExecution.sync:2` from parent to child."""
        stack = Stack.of(self)
        child.grant_start_execution(parent)
        executions = executions_arn(stack, child_name)
        if executions not in self.child_execution_arns:
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

    def _grant_distributed_map(self, machine: sfn.StateMachine, storage: Storage) -> None:
        """A Distributed Map starts child executions of its own machine and reads/writes S3."""
        stack = Stack.of(self)
        own = stack.format_arn(
            service="states",
            resource="stateMachine",
            resource_name=machine_name(stack, "replan"),
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        machine.add_to_role_policy(
            iam.PolicyStatement(actions=["states:StartExecution"], resources=[own])
        )
        map_runs = stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{machine_name(stack, 'replan')}/*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        self.child_execution_arns.append(map_runs)
        machine.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:DescribeExecution", "states:StopExecution"],
                resources=[map_runs],
            )
        )
        # only its own objects: the Manifest stage's manifest (ItemReader) and the Map's
        # results (ResultWriter, Prefix runs/replan-results in replan.asl.json)
        storage.artifacts.grant_read(machine, "runs/replan/*")
        storage.artifacts.grant_read_write(machine, "runs/replan-results/*")


def _timeout_s(fn: lambda_.IFunction) -> int:
    """A function's timeout in seconds (Lambda's default, 3 s, when it sets none)."""
    timeout = getattr(fn, "timeout", None)
    return int(timeout.to_seconds()) if timeout is not None else 3
