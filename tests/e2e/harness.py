"""Run the real ASL on moto with Lambda invocations dispatched to the real handlers."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3

from drac.aws.runtime import AwsEnvironment, Runtime
from infra.asl import render_definition
from infra.pipeline import REPLAN_PATTERN, object_event_pattern

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/drac-test"
FUNCTIONS = ["starter", "register", "normalise", "render", "convert", "batch_failed", "parse",
             "section", "plan_section", "commit_plan", "finalise", "delete", "replan_manifest"]


def load_handler(name: str) -> ModuleType:
    """Import functions/<name>/handler.py as its own module."""
    module_name = f"drac_fn_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = ROOT / "functions" / name / "handler.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


class Context:
    """Enough of a Lambda context for Powertools."""

    function_name = "drac-test"
    function_version = "$LATEST"
    invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:drac-test"
    memory_limit_in_mb = 512
    aws_request_id = "req-1"
    log_group_name = "/aws/lambda/drac-test"
    log_stream_name = "stream"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


class FakeSession:
    """A boto3 session whose bedrock-runtime client is the fake (moto serves the rest)."""

    def __init__(self, bedrock: Any) -> None:
        self.real = boto3.session.Session(region_name=REGION)
        self.bedrock = bedrock

    def client(self, service: str, **kwargs: Any) -> Any:
        if service == "bedrock-runtime":
            return self.bedrock
        return self.real.client(service, **kwargs)

    def resource(self, service: str, **kwargs: Any) -> Any:
        return self.real.resource(service, **kwargs)


@dataclass
class Cloud:
    """The deployed-on-moto pipeline."""

    env: AwsEnvironment
    runtime: Runtime
    machines: dict[str, str]
    invocations: list[str] = field(default_factory=list)

    @property
    def sfn(self) -> Any:
        return boto3.client("stepfunctions", region_name=REGION)

    def executions(self, machine: str) -> list[dict[str, Any]]:
        return self.sfn.list_executions(stateMachineArn=self.machines[machine])["executions"]

    def wait(self, machine: str, timeout: float = 120) -> list[dict[str, Any]]:
        """Wait until every execution of a machine has finished; return them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = self.executions(machine)
            if runs and all(run["status"] != "RUNNING" for run in runs):
                return runs
            time.sleep(0.2)
        raise AssertionError(f"{machine} executions still running: {self.executions(machine)}")

    def history(self, arn: str) -> list[dict[str, Any]]:
        return self.sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]


def deploy(bedrock: Any, opensearch: Any, batch_size: int) -> Cloud:
    """Create buckets, tables, queues, bus, rules and machines like the stack does."""
    s3 = boto3.client("s3", region_name=REGION)
    ddb = boto3.client("dynamodb", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    events = boto3.client("events", region_name=REGION)
    sfn = boto3.client("stepfunctions", region_name=REGION)
    lam = boto3.client("lambda", region_name=REGION)
    iam = boto3.client("iam", region_name=REGION)
    iam.create_role(RoleName="drac-test", AssumeRolePolicyDocument="{}")
    for bucket in ("drac-documents", "drac-artifacts"):
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_notification_configuration(
        Bucket="drac-documents",
        NotificationConfiguration={"EventBridgeConfiguration": {}},
    )
    tables = {"drac-documents": ("document_id", None), "drac-elements": ("document_id", "seq"),
              "drac-plans": ("document_id", "version"), "drac-ledger": ("document_id", "entry")}
    for name, (pk, sk) in tables.items():
        attrs = [{"AttributeName": pk, "AttributeType": "S"}]
        schema = [{"AttributeName": pk, "KeyType": "HASH"}]
        if sk:
            attrs.append({"AttributeName": sk, "AttributeType": "S" if sk == "entry" else "N"})
            schema.append({"AttributeName": sk, "KeyType": "RANGE"})
        extra: dict[str, Any] = {}
        if name == "drac-documents":
            attrs.append({"AttributeName": "source_path", "AttributeType": "S"})
            extra["GlobalSecondaryIndexes"] = [{
                "IndexName": "by-source",
                "KeySchema": [{"AttributeName": "source_path", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"}}]
        ddb.create_table(TableName=name, AttributeDefinitions=attrs, KeySchema=schema,
                         BillingMode="PAY_PER_REQUEST", **extra)
    arn = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:"
    machines = {name: arn + f"Drac-{name}" for name in ("plan", "ingest", "replan")}
    env = AwsEnvironment(
        documents_bucket="drac-documents", artifacts_bucket="drac-artifacts",
        documents_table="drac-documents", elements_table="drac-elements",
        plans_table="drac-plans", ledger_table="drac-ledger",
        collection_endpoint="https://example.aoss.amazonaws.com", index_name="drac-chunks",
        batch_size=batch_size, default_strategy='{"name": "default", "planner": "rules"}',
        ingest_state_machine_arn=machines["ingest"], max_running_documents=10, region=REGION,
    )
    runtime = Runtime(env, FakeSession(bedrock), opensearch_client=opensearch)
    fn_arn = {name: f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:drac-{name}" for name in FUNCTIONS}
    for name in FUNCTIONS:
        lam.create_function(FunctionName=f"drac-{name}", Runtime="python3.12", Role=ROLE,
                            Handler="handler.handler", Code={"ZipFile": b"unused"})
        module = load_handler(name)
        module._runtime = lambda: runtime  # the handler's factory returns the test adapters
    strings = {
        "SectionFunctionArn": fn_arn["section"], "PlanSectionFunctionArn": fn_arn["plan_section"],
        "CommitPlanFunctionArn": fn_arn["commit_plan"],
        "RegisterFunctionArn": fn_arn["register"], "NormaliseFunctionArn": fn_arn["normalise"],
        "RenderFunctionArn": fn_arn["render"], "ConvertFunctionArn": fn_arn["convert"],
        "BatchFailedFunctionArn": fn_arn["batch_failed"], "ParseFunctionArn": fn_arn["parse"],
        "FinaliseFunctionArn": fn_arn["finalise"], "ManifestFunctionArn": fn_arn["replan_manifest"],
        "PlanStateMachineArn": machines["plan"], "ArtifactsBucket": "drac-artifacts",
    }
    numbers = {"SectionConcurrency": 10, "BatchConcurrency": 5, "ReplanConcurrency": 10}
    for name in ("plan", "ingest", "replan"):
        sfn.create_state_machine(name=f"Drac-{name}", roleArn=ROLE,
                                 definition=render_definition(name, numbers, strings))
    for rule, detail_type, queue in (("created", "Object Created", "ingest"),
                                     ("deleted", "Object Deleted", "delete")):
        url = sqs.create_queue(QueueName=f"drac-{queue}")["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        qarn = attributes["Attributes"]["QueueArn"]
        events.put_rule(Name=rule, EventPattern=json.dumps(
            object_event_pattern(detail_type, "drac-documents")))
        events.put_targets(Rule=rule, Targets=[{"Id": "q", "Arn": qarn}])
        target_fn = "starter" if queue == "ingest" else "delete"
        lam.create_event_source_mapping(EventSourceArn=qarn, FunctionName=fn_arn[target_fn],
                                        BatchSize=1)
    events.create_event_bus(Name="drac-bus")
    events.put_rule(Name="replan", EventBusName="drac-bus", EventPattern=json.dumps(REPLAN_PATTERN))
    events.put_targets(Rule="replan", EventBusName="drac-bus", Targets=[
        {"Id": "sfn", "Arn": machines["replan"], "RoleArn": ROLE, "InputPath": "$.detail"}])
    return Cloud(env=env, runtime=runtime, machines=machines)
