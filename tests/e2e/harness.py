"""Deploy the synthesised stack on moto and run its functions in-process, each with its role.

`deploy` creates what CloudFormation would create from the template (roles, buckets with their
versioning and EventBridge notifications, tables with their key schemas and indexes, queues,
the event bus, rules and targets, the project functions with their resolved environment, the
three state machines from their substituted definitions) and runs the custom resource that
creates the chunk index. `Cloud` then plays the Lambda service: each function has warm
containers (its handler module and its own guarded runtime, built by `runtime_for`), SQS
event sources are polled like Lambda's pollers, and invocations from Step Functions are
dispatched to the handlers.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import threading
import time
import traceback
import uuid
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
from botocore.exceptions import ClientError

from drac.aws.runtime import CloudResources, Runtime
from drac.settings import SETTINGS_VARIABLE, Settings
from tests.e2e.authorization import Permission
from tests.e2e.faults import VISIBILITY_TIME_SCALE, InjectedFaults, register_faults
from tests.e2e.guard import (
    AccessLog,
    Authorizer,
    FunctionPrincipal,
    GuardedBedrock,
    GuardedOpenSearch,
    guarded_session,
)
from tests.e2e.iam import Statement
from tests.e2e.sessions import AssumedSessions
from tests.e2e.template import FunctionSpec, RoleSpec, StackModel

ROOT = Path(__file__).resolve().parents[2]
# Step Functions refuses state input or output over 256 KiB (States.DataLimitExceeded).
STATE_PAYLOAD_LIMIT = 256 * 1024
# A message whose processing failed becomes visible again after the queue's visibility
# timeout; the harness compresses that time by VISIBILITY_TIME_SCALE so retries happen within
# a test (and the delay a function sends a message with, the same way: faults.py).
# Resource types `deploy` does not create, and why that is faithful enough.
NOT_DEPLOYED = {
    "AWS::IAM::Policy": "evaluated by the harness, not by moto",
    "AWS::S3::BucketPolicy": "evaluated by the harness (resource policies)",
    "AWS::SQS::QueuePolicy": "evaluated by the harness when EventBridge delivers",
    "AWS::Lambda::EventSourceMapping": "polled by the harness (EventSourcePoller)",
    "AWS::Lambda::LayerVersion": "handlers import drac from the test environment",
    "AWS::Logs::LogGroup": "logs are not asserted",
    "AWS::CloudWatch::Alarm": "not evaluated",
    "AWS::CloudWatch::Dashboard": "not evaluated",
    "AWS::OpenSearchServerless::Collection": "faked (FakeOpenSearch behind GuardedOpenSearch)",
    "AWS::OpenSearchServerless::SecurityPolicy": "encryption/network: nothing to enforce",
    "AWS::OpenSearchServerless::AccessPolicy": "enforced by GuardedOpenSearch",
    "AWS::OpenSearchServerless::CollectionGroup": "capacity limits: nothing to enforce",
    "AWS::OpenSearchServerless::VpcEndpoint": "privateCollection: the calls of the functions "
    "in its subnets are checked against it (tests/e2e/test_network.py)",
    "AWS::Lambda::Url": "the retrieval API's handler is invoked in-process (function URL event)",
    "AWS::Lambda::Permission": "evaluated by the harness (function URL callers)",
    "AWS::Events::EventBusPolicy": "evaluated by the harness (guarded PutEvents callers)",
    "AWS::SNS::Topic": "alarm notifications: alarms are not evaluated",
    "AWS::SNS::TopicPolicy": "alarm notifications: alarms are not evaluated",
    "AWS::SNS::Subscription": "alarm notifications: alarms are not evaluated",
    "AWS::KMS::Key": "encrypts the alarm topic only",
    **dict.fromkeys(
        ("AWS::Route53Resolver::FirewallDomainList", "AWS::Route53Resolver::FirewallRuleGroup",
         "AWS::Route53Resolver::FirewallRuleGroupAssociation"),
        "the VPC's DNS Firewall: no name is resolved in the harness; tests/infrastructure/"
        "test_network.py holds its allowed names to the VPC's endpoints"),
    **dict.fromkeys(
        ("AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::RouteTable",
         "AWS::EC2::SubnetRouteTableAssociation", "AWS::EC2::VPCEndpoint",
         "AWS::EC2::SecurityGroup", "AWS::EC2::SecurityGroupIngress", "AWS::EC2::FlowLog"),
        "the converters' network: every call they make is checked against its subnets' "
        "routes and endpoint policies (tests/e2e/test_network.py)"),
}


class LambdaThrottled(Exception):
    """Lambda refused an invocation: no concurrency left (HTTP 429)."""


def load_handler(handler_dir: str, instance: int = 0) -> ModuleType:
    """Import functions/<handler_dir>/handler.py as a fresh module (one per container)."""
    path = ROOT / "functions" / handler_dir / "handler.py"
    spec = importlib.util.spec_from_file_location(f"drac_fn_{handler_dir}_{instance}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class LambdaContext:
    """The context object the Lambda runtime passes to a handler."""

    function: FunctionSpec
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"

    @property
    def function_name(self) -> str:
        """The deployed function name."""
        return self.function.name

    @property
    def invoked_function_arn(self) -> str:
        """The function's ARN."""
        return self.function.arn

    @property
    def memory_limit_in_mb(self) -> int:
        """Configured memory."""
        return self.function.memory_mb

    @property
    def log_group_name(self) -> str:
        """The function's log group."""
        return f"/aws/lambda/{self.function.name}"

    log_stream_name = "harness"

    def get_remaining_time_in_millis(self) -> int:
        """The configured timeout (invocations are not timed out)."""
        return self.function.timeout_s * 1000


class _PerThread(MutableMapping[str, Any]):
    """A dict of which each thread sees its own contents."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _mine(self) -> dict[str, Any]:
        if not hasattr(self._local, "items"):
            self._local.items = {}
        items: dict[str, Any] = self._local.items
        return items

    def __getitem__(self, key: str) -> Any:
        return self._mine()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._mine()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._mine()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._mine()))

    def __len__(self) -> int:
        return len(self._mine())


def metrics_per_invocation() -> None:
    """Give each harness thread its own Powertools metric set.

    Powertools keeps one metric set per process (class attributes, shared by every Metrics
    object) and flushes it at the end of each handler. Lambda runs one invocation at a time in
    an environment; the harness runs many in threads of one process, where one invocation's
    flush took another's metrics mid-flight ("Must contain at least one metric", a batch
    failed that no real Lambda would fail)."""
    from drac.aws.lambda_support import metrics

    provider = metrics.provider
    if isinstance(provider.metric_set, _PerThread):
        return
    for name in ("metric_set", "dimension_set", "metadata_set"):
        setattr(provider, name, _PerThread())


@dataclass
class Container:
    """One warm execution environment of a function: its module, runtime and lock."""

    module: ModuleType
    lock: threading.Lock = field(default_factory=threading.Lock)


class FunctionPool:
    """The containers of one function: an invocation takes a free one or starts another, so
    concurrent invocations never share module state, as in Lambda."""

    def __init__(self, function: FunctionSpec, cloud: Cloud) -> None:
        """No container yet (cold)."""
        self.function = function
        self.cloud = cloud
        self.containers: list[Container] = []
        self.lock = threading.Lock()
        self.counter = itertools.count()

    def _acquire(self) -> Container:
        with self.lock:
            for container in self.containers:
                if container.lock.acquire(blocking=False):
                    return container
            module = load_handler(self.function.handler_dir or "", next(self.counter))
            if hasattr(module, "_runtime"):
                runtime = self.cloud.runtime_for(self.function)
                module._runtime = lambda: runtime
            container = Container(module)
            container.lock.acquire()
            self.containers.append(container)
            return container

    def invoke(self, event: Any) -> Any:
        """Run the handler on a free container; exceptions propagate."""
        container = self._acquire()
        try:
            return container.module.handler(event, LambdaContext(self.function))
        finally:
            container.lock.release()


class EventSourcePoller:
    """Lambda's SQS poller for one event source mapping: receives batches, invokes the
    function, deletes what succeeded and lets failed messages return (partial batch
    responses honoured), with the function role's SQS permissions checked."""

    def __init__(self, cloud: Cloud, source: Any) -> None:
        """One thread per allowed concurrent batch (ScalingConfig.MaximumConcurrency)."""
        self.cloud = cloud
        self.source = source
        self.stop = threading.Event()
        self.busy = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, daemon=True,
                                         name=f"poller-{source.function.name}-{i}")
                        for i in range(source.max_concurrency)]

    def start(self) -> None:
        """Start polling, if the function's role may read the queue (else log the denial)."""
        principal = self.cloud.principal(self.source.function)
        needed = [Permission(action, self.source.queue.arn) for action in (
            "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")]
        denied = [p for p in needed if not principal.allowed(p)]
        for permission in denied:
            principal.deny(permission, "Lambda polls the queue with the function's role")
        if not denied:
            for thread in self.threads:
                thread.start()

    def close(self) -> None:
        """Stop polling and wait for the threads."""
        self.stop.set()
        for thread in self.threads:
            if thread.is_alive():
                thread.join(timeout=30)

    def _run(self) -> None:
        sqs = boto3.client("sqs", region_name=self.cloud.region)
        url = self.source.queue.url
        visibility = int(self.source.queue.attributes.get("VisibilityTimeout", "30"))
        retry_after = max(1, round(visibility * VISIBILITY_TIME_SCALE))
        while not self.stop.is_set():
            messages = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=self.source.batch_size,
                AttributeNames=["All"], MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                self.stop.wait(0.1)
                continue
            with self.lock:
                self.busy += 1
            try:
                failed = self._invoke(messages)
                for message in messages:
                    if message["MessageId"] in failed:
                        sqs.change_message_visibility(
                            QueueUrl=url, ReceiptHandle=message["ReceiptHandle"],
                            VisibilityTimeout=retry_after)
                    else:
                        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            finally:
                with self.lock:
                    self.busy -= 1

    def _invoke(self, messages: list[dict[str, Any]]) -> set[str]:
        """Invoke with one batch; return the ids of the messages to retry."""
        event = {"Records": [{
            "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
            "attributes": m.get("Attributes", {}),
            "messageAttributes": {name: {"stringValue": value.get("StringValue"),
                                         "dataType": value["DataType"]}
                                  for name, value in m.get("MessageAttributes", {}).items()},
            "md5OfBody": m["MD5OfBody"], "eventSource": "aws:sqs",
            "eventSourceARN": self.source.queue.arn, "awsRegion": self.cloud.region,
        } for m in messages]}
        ids = {m["MessageId"] for m in messages}
        try:
            result = self.cloud.pool(self.source.function).invoke(event)
        except Exception:
            self.cloud.errors.append(f"{self.source.function.logical_id}: "
                                     f"{traceback.format_exc(limit=3)}")
            return ids
        if self.source.report_batch_item_failures and isinstance(result, dict):
            return {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
        return set()


class Cloud:
    """The deployed-on-moto stack: resources, function pools, pollers and the access log."""

    def __init__(self, model: StackModel, bedrock: Any, opensearch: Any) -> None:
        """Prepare (deploy() creates the resources)."""
        metrics_per_invocation()
        self.model = model
        self.region = model.stack.region
        self.bedrock = bedrock
        self.opensearch = opensearch
        self.log = AccessLog()
        self.authorizer = Authorizer(model)
        self.pools: dict[str, FunctionPool] = {}
        self.pools_lock = threading.Lock()
        self.pollers: list[EventSourcePoller] = []
        self.errors: list[str] = []
        """Handler exceptions an event source swallowed (Lambda would only log them)."""
        self.invocations: list[str] = []
        self.violations: list[str] = []
        """Service limits the run exceeded (AWS would have failed there)."""
        self.throttles: dict[str, int] = {}
        """Handler folder -> invocations from Step Functions Lambda refuses with 429
        (TooManyRequestsException), as when the account's concurrency is exhausted."""
        self.throttle_first_tries: set[str] = set()
        """Handler folders whose first invocation with each distinct payload Lambda refuses
        with 429 (every task of theirs is retried once)."""
        self._tried: set[tuple[str, str]] = set()
        self.custom_resource_errors: dict[str, str] = {}
        """Custom resources whose Create failed (logical id -> error)."""
        self.bedrock_configs: list[Any] = []
        """The botocore Config each bedrock-runtime client was made with."""
        self.faults = InjectedFaults()
        """Errors the functions' next AWS calls are answered with (tests fill it)."""
        machines = model.stack.of_type("AWS::StepFunctions::StateMachine")
        prefix = f"{model.stack.stack_name}-"
        self.machines = {model.resolver.name(m).removeprefix(prefix):
                         model.resolver.get_att(m, "Arn") for m in machines}
        starter = model.function_for("starter")
        # The tests' own view of the data (unguarded): the environment every function gets.
        self.runtime = Runtime(*self.environment(starter), _PlainSession(self.region, bedrock),
                               opensearch_client=opensearch)

    # --- the functions ----------------------------------------------------------------------

    def environment(self, function: FunctionSpec) -> tuple[CloudResources, Settings]:
        """The resource names and settings a function reads from its environment in Lambda."""
        variables = {**function.environment, "AWS_REGION": self.region}
        return (CloudResources.from_environ(variables),
                Settings.from_json(variables[SETTINGS_VARIABLE]))

    def principal(self, function: FunctionSpec) -> FunctionPrincipal:
        """The function's identity: its role's statements and the shared access log."""
        return FunctionPrincipal(function.logical_id, function.name, function.role,
                                 self.authorizer, self.log, function.handler_dir)

    def runtime_for(self, function: FunctionSpec) -> Runtime:
        """The adapters one container of `function` uses: its own boto3 session, guarded by
        its role, and the Bedrock and OpenSearch fakes behind the same role."""
        resources, settings = self.environment(function)
        principal = self.principal(function)
        boto_session = guarded_session(principal, self.region, self.sessions.note)
        session = self._function_session(boto_session, principal)
        index = GuardedOpenSearch(self.opensearch, principal, resources.collection_endpoint,
                                  self.model.collections)
        return Runtime(resources, settings, session, opensearch_client=index,
                       session_for=self.sessions.session_for)

    def _function_session(self, boto_session: boto3.session.Session,
                          principal: FunctionPrincipal) -> _FunctionSession:
        """A function's guarded session with its injected faults and the Bedrock fake."""
        register_faults(boto_session, self.faults, principal.handler_dir or principal.logical_id)
        return _FunctionSession(boto_session, GuardedBedrock(self.bedrock, principal),
                                self.bedrock_configs)

    @cached_property
    def sessions(self) -> AssumedSessions:
        """The role sessions the functions assume (the converters' per-document access)."""
        return AssumedSessions(self.model, self.region, self._function_session)

    def pool(self, function: FunctionSpec) -> FunctionPool:
        """The containers of a function."""
        with self.pools_lock:
            if function.logical_id not in self.pools:
                self.pools[function.logical_id] = FunctionPool(function, self)
            return self.pools[function.logical_id]

    def dispatch(self, function_name: str, payload: str) -> tuple[bytes, bool]:
        """Run an invocation from Step Functions; errors as Lambda reports them. Payloads over
        the state size limit are recorded as violations: keys and counts travel, not content."""
        function = self.model.function_named(function_name)
        self.invocations.append(function.handler_dir or function.logical_id)
        with self.pools_lock:
            if self.throttles.get(function.handler_dir or "", 0) > 0:
                self.throttles[function.handler_dir or ""] -= 1
                raise LambdaThrottled(function.name)
            tried = (function.handler_dir or "", payload)
            if tried[0] in self.throttle_first_tries and tried not in self._tried:
                self._tried.add(tried)
                raise LambdaThrottled(function.name)
        if len(payload.encode()) > STATE_PAYLOAD_LIMIT:
            self.violations.append(f"{function.logical_id}: state input of {len(payload)} bytes")
        try:
            result = self.pool(function).invoke(json.loads(payload))
        except Exception as exc:  # the Lambda runtime reports the class name as errorType
            body = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
            return json.dumps(body).encode(), True
        response = json.dumps(result).encode()
        if len(response) > STATE_PAYLOAD_LIMIT:
            self.violations.append(f"{function.logical_id}: result of {len(response)} bytes")
        return response, False

    # --- the state machines' roles ------------------------------------------------------------

    @cached_property
    def machine_principals(self) -> dict[str, FunctionPrincipal]:
        """State machine ARN -> its role as a principal. A `.sync` startExecution is polled
        with DescribeExecution, which in AWS also needs the managed rule Step Functions puts
        on EventBridge (Developer Guide, "IAM policies for ... Step Functions executions")."""
        account, region = self.model.stack.account, self.region
        rule = (f"arn:aws:events:{region}:{account}:rule/"
                "StepFunctionsGetEventsForStepFunctionsExecutionRule")
        sync = tuple(Permission(action, rule) for action in (
            "events:PutTargets", "events:PutRule", "events:DescribeRule"))
        principals = {}
        for logical_id, machine in self.model.stack.of_type(
                "AWS::StepFunctions::StateMachine").items():
            role = self.model.role_by_arn(self.model.resolver.resolve(
                machine["Properties"]["RoleArn"]))
            arn = self.model.resolver.get_att(logical_id, "Arn")
            name = self.model.resolver.name(logical_id)
            principals[arn] = FunctionPrincipal(
                f"{logical_id} (state machine {name})", name, role, self.authorizer, self.log,
                implied={("stepfunctions", "DescribeExecution"): sync})
        return principals

    def machine_session(self, machine_arn: str) -> boto3.session.Session:
        """A boto3 session guarded by the role of the state machine (or of the Distributed
        Map run of it) with this ARN."""
        for arn, principal in self.machine_principals.items():
            if machine_arn == arn or machine_arn.startswith(f"{arn}/"):
                return guarded_session(principal, self.region)
        raise KeyError(f"no state machine {machine_arn}")

    # --- callers from outside the stack -------------------------------------------------------

    def caller(self, role_arn: str, statements: tuple[Statement, ...] = ()) -> FunctionPrincipal:
        """An IAM role outside the stack (a tenant's application, an operator) with these
        identity statements; its calls are checked like the functions' calls."""
        name = role_arn.rsplit("/", 1)[-1]
        role = RoleSpec(f"caller {name}", name, role_arn, statements)
        return FunctionPrincipal(f"caller {name}", name, role, self.authorizer, self.log)

    def caller_session(self, caller: FunctionPrincipal) -> boto3.session.Session:
        """A boto3 session whose calls are authorised as the caller's."""
        return guarded_session(caller, self.region)

    def invoke_url(self, function: FunctionSpec, caller: FunctionPrincipal,
                   body: Any) -> dict[str, Any]:
        """POST `body` to the function's URL (AWS_IAM auth) as `caller`: Lambda checks
        lambda:InvokeFunctionUrl and lambda:InvokeFunction against the caller's policies and
        the function's resource policy (403 "Forbidden" otherwise), then invokes the handler
        with a function URL event naming the caller's session."""
        context = {"lambda:FunctionUrlAuthType": ("AWS_IAM",),
                   "lambda:InvokedViaFunctionUrl": ("true",)}
        needed = [Permission(action, function.arn, context)
                  for action in ("lambda:InvokeFunctionUrl", "lambda:InvokeFunction")]
        try:
            caller.check("lambda", "InvokeFunctionUrl", needed)
        except ClientError:
            return {"statusCode": 403, "body": json.dumps({"Message": "Forbidden"})}
        account = self.model.stack.account
        session_arn = (f"arn:aws:sts::{account}:assumed-role/{caller.role.name}/session"
                       if ":role/" in caller.role.arn else caller.role.arn)
        event = function_url_event(body, session_arn, account)
        try:
            return self.pool(function).invoke(event)
        except Exception:  # an unhandled error: the function URL answers 502
            self.errors.append(f"{function.logical_id}: {traceback.format_exc(limit=3)}")
            return {"statusCode": 502, "body": json.dumps({"Message": "Internal Server Error"})}

    # --- observing ----------------------------------------------------------------------------

    @cached_property
    def sfn(self) -> Any:
        """An unguarded Step Functions client (the test's own)."""
        return boto3.client("stepfunctions", region_name=self.region)

    @cached_property
    def sqs(self) -> Any:
        """An unguarded SQS client (the test's own)."""
        return boto3.client("sqs", region_name=self.region)

    @property
    def documents_bucket(self) -> str:
        """The uploads bucket."""
        return self.runtime.resources.documents_bucket

    @property
    def bus_name(self) -> str:
        """The project's event bus."""
        (bus,) = self.model.stack.of_type("AWS::Events::EventBus")
        return self.model.resolver.name(bus)

    def executions(self, machine: str, status: str | None = None) -> list[dict[str, Any]]:
        """Executions of one machine (newest first), optionally of one status."""
        kwargs = {"statusFilter": status} if status else {}
        pages = self.sfn.get_paginator("list_executions").paginate(
            stateMachineArn=self.machines[machine], **kwargs)
        return [run for page in pages for run in page["executions"]]

    def busy(self) -> list[str]:
        """What is still in flight: poller batches, queued messages, running executions."""
        pending = [f"poller {p.source.function.name}" for p in self.pollers if p.busy]
        for poller in self.pollers:
            attributes = self.sqs.get_queue_attributes(
                QueueUrl=poller.source.queue.url,
                # A message waiting its turn is sent back with a delay: while delayed it is
                # counted only as Delayed (SQS Developer Guide, "Amazon SQS delay queues").
                AttributeNames=["ApproximateNumberOfMessages",
                                "ApproximateNumberOfMessagesNotVisible",
                                "ApproximateNumberOfMessagesDelayed"])["Attributes"]
            if any(int(v) for v in attributes.values()):
                pending.append(f"queue {poller.source.queue.name}: {attributes}")
        for machine in self.machines:
            running = self.executions(machine, "RUNNING")
            if running:
                pending.append(f"{len(running)} {machine} executions running")
        return pending

    def settle(self, timeout: float = 180) -> None:
        """Wait until nothing is in flight (twice in a row, to bridge hand-overs)."""
        deadline = time.monotonic() + timeout
        quiet = 0
        while quiet < 2:
            pending = self.busy()
            quiet = 0 if pending else quiet + 1
            if time.monotonic() > deadline:
                raise AssertionError(f"still busy after {timeout}s: {pending}")
            time.sleep(0.2)

    def wait(self, machine: str, timeout: float = 180) -> list[dict[str, Any]]:
        """Wait until the stack is idle; return the executions of one machine."""
        self.settle(timeout)
        return self.executions(machine)

    def history(self, arn: str) -> list[dict[str, Any]]:
        """The events of one execution."""
        return self.sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]

    def dead_letters(self) -> dict[str, int]:
        """Messages in every queue that is some queue's dead-letter queue."""
        targets = {json.loads(q.attributes["RedrivePolicy"])["deadLetterTargetArn"]
                   for q in self.model.queues.values() if "RedrivePolicy" in q.attributes}
        counts = {}
        for queue in self.model.queues.values():
            if queue.arn in targets:
                attributes = self.sqs.get_queue_attributes(
                    QueueUrl=queue.url, AttributeNames=["ApproximateNumberOfMessages"])
                counts[queue.name] = int(attributes["Attributes"]["ApproximateNumberOfMessages"])
        return {name: count for name, count in counts.items() if count}

    def start(self) -> None:
        """Start the event source pollers."""
        self.pollers = [EventSourcePoller(self, source) for source in self.model.event_sources]
        for poller in self.pollers:
            poller.start()

    def close(self) -> None:
        """Stop the pollers."""
        for poller in self.pollers:
            poller.close()


def function_url_event(body: Any, caller_arn: str, account: str) -> dict[str, Any]:
    """A function URL request event (payload version 2.0) as Lambda builds it for an AWS_IAM
    URL: the caller's identity in requestContext.authorizer.iam (AWS Lambda Developer Guide,
    "Invoking Lambda function URLs", request payload format)."""
    return {
        "version": "2.0", "routeKey": "$default", "rawPath": "/", "rawQueryString": "",
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "accountId": "anonymous", "apiId": "url-id", "domainName": "url-id.lambda-url.aws",
            "domainPrefix": "url-id", "requestId": str(uuid.uuid4()), "routeKey": "$default",
            "stage": "$default", "time": "01/Dec/2026:00:00:00 +0000", "timeEpoch": 0,
            "http": {"method": "POST", "path": "/", "protocol": "HTTP/1.1",
                     "sourceIp": "127.0.0.1", "userAgent": "tests"},
            "authorizer": {"iam": {
                "accessKey": "ASIATESTING", "accountId": account, "callerId": "AROATESTING",
                "cognitoIdentity": None, "principalOrgId": None, "userArn": caller_arn,
                "userId": "AROATESTING:session"}},
        },
        "body": body if isinstance(body, str) else json.dumps(body), "isBase64Encoded": False,
    }


class _FunctionSession:
    """What the Runtime asks of a boto3 session, with Bedrock answered by the guarded fake
    (the client configuration the function asked for is recorded)."""

    def __init__(self, session: boto3.session.Session, bedrock: Any,
                 configs: list[Any] | None = None) -> None:
        self.session = session
        self.bedrock = bedrock
        self.configs = configs if configs is not None else []

    def client(self, service: str, **kwargs: Any) -> Any:
        if service == "bedrock-runtime":
            self.configs.append(kwargs.get("config"))
            return self.bedrock
        return self.session.client(service, **kwargs)

    def resource(self, service: str, **kwargs: Any) -> Any:
        return self.session.resource(service, **kwargs)

    def get_credentials(self) -> Any:
        return self.session.get_credentials()


class _PlainSession(_FunctionSession):
    def __init__(self, region: str, bedrock: Any) -> None:
        super().__init__(boto3.session.Session(region_name=region), bedrock)


# --- deploying --------------------------------------------------------------------------------

def deploy(cloud: Cloud) -> None:
    """Create the stack's resources on moto from the template, then run its custom resources."""
    model, resolver, region = cloud.model, cloud.model.resolver, cloud.region
    stack = model.stack
    handled = set(NOT_DEPLOYED) | {
        "AWS::IAM::Role", "AWS::S3::Bucket", "AWS::DynamoDB::Table", "AWS::SQS::Queue",
        "AWS::Events::EventBus", "AWS::Events::Rule", "AWS::Lambda::Function",
        "AWS::StepFunctions::StateMachine", "Custom::S3BucketNotifications"}
    unknown = {r["Type"] for r in stack.resources.values()} - handled
    unknown = {t for t in unknown if not (t.startswith("Custom::") and _custom_handler(
        model, t))}
    assert not unknown, f"the harness does not deploy {sorted(unknown)}"

    iam = boto3.client("iam", region_name=region)
    for role in model.roles.values():
        trust = resolver.resolve(stack.resources[role.logical_id]["Properties"]
                                 ["AssumeRolePolicyDocument"])
        iam.create_role(RoleName=role.name, AssumeRolePolicyDocument=json.dumps(trust))

    s3 = boto3.client("s3", region_name=region)
    for logical_id, bucket in stack.of_type("AWS::S3::Bucket").items():
        name = resolver.name(logical_id)
        s3.create_bucket(Bucket=name)
        versioning = bucket["Properties"].get("VersioningConfiguration")
        if versioning:
            s3.put_bucket_versioning(Bucket=name, VersioningConfiguration=versioning)
    for resource in stack.of_type("Custom::S3BucketNotifications").values():
        props = resolver.resolve(resource["Properties"])
        s3.put_bucket_notification_configuration(
            Bucket=props["BucketName"],
            NotificationConfiguration=props["NotificationConfiguration"])

    _create_tables(model, region)

    sqs = boto3.client("sqs", region_name=region)
    queues = sorted(model.queues.values(), key=lambda q: "RedrivePolicy" in q.attributes)
    for queue in queues:  # dead-letter queues first
        created = sqs.create_queue(QueueName=queue.name, Attributes=queue.attributes)
        assert created["QueueUrl"] == queue.url, (created["QueueUrl"], queue.url)

    events = boto3.client("events", region_name=region)
    for logical_id in stack.of_type("AWS::Events::EventBus"):
        events.create_event_bus(Name=resolver.name(logical_id))

    lam = boto3.client("lambda", region_name=region)
    for function in model.functions.values():
        props = stack.resources[function.logical_id]["Properties"]
        code = resolver.resolve(props["Code"])
        image = "ImageUri" in code
        lam.create_function(
            FunctionName=function.name, Role=function.role.arn,
            **({"PackageType": "Image", "Code": {"ImageUri": code["ImageUri"]}} if image else
               {"Runtime": props["Runtime"], "Handler": props["Handler"],
                "Code": {"ZipFile": b"code is run in-process by the harness"}}),
            Timeout=function.timeout_s, MemorySize=function.memory_mb,
            Environment={"Variables": function.environment})

    sfn = boto3.client("stepfunctions", region_name=region)
    for logical_id, machine in stack.of_type("AWS::StepFunctions::StateMachine").items():
        props = resolver.resolve({k: v for k, v in machine["Properties"].items()
                                  if k not in {"DefinitionString", "DefinitionSubstitutions"}})
        created = sfn.create_state_machine(
            name=resolver.name(logical_id), roleArn=props["RoleArn"],
            definition=model.state_machine_definition(logical_id),
            type=props.get("StateMachineType", "STANDARD"))
        assert created["stateMachineArn"] == resolver.get_att(logical_id, "Arn")

    for logical_id, rule in stack.of_type("AWS::Events::Rule").items():
        props = resolver.resolve(rule["Properties"])
        bus = props.get("EventBusName", "default")
        events.put_rule(Name=resolver.name(logical_id), EventBusName=bus,
                        EventPattern=json.dumps(props["EventPattern"]),
                        State=props.get("State", "ENABLED"))
        events.put_targets(Rule=resolver.name(logical_id), EventBusName=bus,
                           Targets=props["Targets"])
        arn = events.describe_rule(Name=resolver.name(logical_id), EventBusName=bus)["Arn"]
        assert arn == resolver.get_att(logical_id, "Arn"), (arn, logical_id)

    for logical_id, resource in stack.resources.items():
        if resource["Type"].startswith("Custom::") and resource["Type"] != (
                "Custom::S3BucketNotifications"):
            try:
                _run_custom_resource(cloud, logical_id)
            except Exception as exc:  # CloudFormation would roll back; tests/e2e asserts it
                cloud.custom_resource_errors[logical_id] = f"{type(exc).__name__}: {exc}"


TABLE_PROPERTIES = {"AttributeDefinitions", "KeySchema", "BillingMode", "GlobalSecondaryIndexes",
                    "LocalSecondaryIndexes", "ProvisionedThroughput"}
IGNORED_TABLE_PROPERTIES = {"PointInTimeRecoverySpecification", "SSESpecification",
                            "TableName", "Tags"}
TTL_PROPERTY = "TimeToLiveSpecification"
"""Deployed by a second call (UpdateTimeToLive), as CloudFormation does."""


def _create_tables(model: StackModel, region: str) -> None:
    ddb = boto3.client("dynamodb", region_name=region)
    for logical_id, table in model.stack.of_type("AWS::DynamoDB::Table").items():
        props = model.resolver.resolve(table["Properties"])
        unknown = set(props) - TABLE_PROPERTIES - IGNORED_TABLE_PROPERTIES - {TTL_PROPERTY}
        assert not unknown, f"table {logical_id}: {sorted(unknown)} not deployed"
        name = model.resolver.name(logical_id)
        ddb.create_table(TableName=name,
                         **{k: v for k, v in props.items() if k in TABLE_PROPERTIES})
        if TTL_PROPERTY in props:
            ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=props[TTL_PROPERTY])


def _custom_handler(model: StackModel, kind: str) -> FunctionSpec | None:
    """The project function behind a custom resource type (through CDK's provider)."""
    for resource in model.stack.resources.values():
        if resource["Type"] == kind:
            token = resource["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
            provider = model.stack.resources[token]["Properties"]
            variables = provider.get("Environment", {}).get("Variables", {})
            target = model.resolver.resolve(variables.get("USER_ON_EVENT_FUNCTION_ARN", ""))
            try:
                return model.function_named(target or model.resolver.name(token))
            except KeyError:
                return None
    return None


def _run_custom_resource(cloud: Cloud, logical_id: str) -> None:
    """Send the Create event to the custom resource's function, with its OpenSearch client
    (built from its endpoint and credentials in AWS) behind its role."""
    model = cloud.model
    resource = model.stack.resources[logical_id]
    function = _custom_handler(model, resource["Type"])
    assert function is not None, f"no project function handles {resource['Type']}"
    properties = model.resolver.resolve(resource["Properties"])
    principal = cloud.principal(function)

    def make_client(endpoint: str, region: str, credentials: Any, timeout: int = 60) -> Any:
        return GuardedOpenSearch(cloud.opensearch, principal, endpoint, model.collections)

    event = {"RequestType": "Create", "ResourceType": resource["Type"],
             "LogicalResourceId": logical_id, "RequestId": str(uuid.uuid4()),
             "StackId": model.resolver.pseudo["AWS::StackId"],
             "ResourceProperties": properties}
    with _patched(make_client):
        cloud.pool(function).invoke(event)


@contextmanager
def _patched(make_client: Any) -> Iterator[None]:
    import drac.aws.opensearch as opensearch

    original = opensearch.make_client
    opensearch.make_client = make_client
    try:
        yield
    finally:
        opensearch.make_client = original
