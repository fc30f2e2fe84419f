"""The synthesised stack as the end-to-end harness deploys it: physical names, intrinsics and
typed views of the resources (functions, roles and their policy statements, queues, ...).

CloudFormation names resources it creates `<stack>-<logical id>-<random suffix>`; the harness
uses `<stack>-<logical id>` (lower-cased and shortened where a service requires it) so names
are deterministic and still valid for each service. `Resolver` evaluates the intrinsics the
template uses (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split and the pseudo
parameters) against those names and fails on anything else.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tests.e2e.iam import Statement

REGION = "us-east-1"
ACCOUNT = "123456789012"
PARTITION = "aws"
URL_SUFFIX = "amazonaws.com"

# AWS managed policies the stack attaches, as AWS publishes them.
MANAGED_POLICIES: dict[str, list[dict[str, Any]]] = {
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": [{
        "Effect": "Allow",
        "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
        "Resource": "*",
    }],
    # AWS Managed Policy Reference, "AWSLambdaVPCAccessExecutionRole" (version 3): the
    # isolated converters' roles, so Lambda can manage their network interfaces.
    "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole": [{
        "Effect": "Allow",
        "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
                   "ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces",
                   "ec2:DescribeSubnets", "ec2:DeleteNetworkInterface",
                   "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"],
        "Resource": "*",
    }],
}


@dataclass(frozen=True)
class StackTemplate:
    """A synthesised stack: its template, plus the handler folder of each project function
    (which the template does not say: its code is a hashed asset)."""

    stack_name: str
    template: dict[str, Any]
    handler_dirs: dict[str, str]
    """Function logical id -> `functions/<dir>`."""
    region: str = REGION
    account: str = ACCOUNT

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        """Logical id -> resource."""
        return self.template["Resources"]

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        """The resources of one CloudFormation type."""
        return {k: v for k, v in self.resources.items() if v["Type"] == kind}

    def revoke(self, role_logical_id: str, action: str, resource: str = "") -> StackTemplate:
        """A copy whose policies attached to one role no longer grant `action` (a pattern as
        written in the policy, e.g. `s3:GetObject*`), in the statements whose resources name
        `resource` (a logical id or part of one; empty: every statement); statements left
        empty are dropped."""
        template = copy.deepcopy(self.template)
        found = False
        named = resource
        for resource in template["Resources"].values():
            if resource["Type"] != "AWS::IAM::Policy":
                continue
            if {"Ref": role_logical_id} not in resource["Properties"].get("Roles", []):
                continue
            document = resource["Properties"]["PolicyDocument"]
            kept = []
            for statement in document["Statement"]:
                actions = statement["Action"]
                actions = actions if isinstance(actions, list) else [actions]
                remaining = [a for a in actions if a != action]
                resources = statement["Resource"]
                resources = resources if isinstance(resources, list) else [resources]
                # CDK merges statements: the action stays granted on the other resources
                others = [r for r in resources if named not in json.dumps(r)]
                if len(remaining) == len(actions) or len(others) == len(resources):
                    kept.append(statement)
                    continue
                found = True
                if remaining:
                    kept.append({**statement, "Action": remaining})
                if others:
                    kept.append({**statement, "Action": [action], "Resource": others})
            document["Statement"] = kept
        if not found:
            raise KeyError(f"no policy of {role_logical_id} grants {action}")
        return StackTemplate(self.stack_name, template, self.handler_dirs, self.region,
                             self.account)


@dataclass(frozen=True)
class NameRule:
    """What a service accepts as a resource name."""

    pattern: str
    max_length: int
    lower: bool = False

    def valid(self, name: str) -> bool:
        """True when the service accepts the name."""
        return len(name) <= self.max_length and re.fullmatch(self.pattern, name) is not None


NAME_RULES: dict[str, NameRule] = {
    "AWS::S3::Bucket": NameRule(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", 63, lower=True),
    "AWS::DynamoDB::Table": NameRule(r"[A-Za-z0-9_.-]{3,255}", 255),
    "AWS::SQS::Queue": NameRule(r"[A-Za-z0-9_-]{1,80}", 80),
    "AWS::Lambda::Function": NameRule(r"[A-Za-z0-9_-]{1,64}", 64),
    "AWS::IAM::Role": NameRule(r"[\w+=,.@-]{1,64}", 64),
    "AWS::Events::Rule": NameRule(r"[.\-_A-Za-z0-9]{1,64}", 64),
    "AWS::Events::EventBus": NameRule(r"[/.\-_A-Za-z0-9]{1,256}", 256),
    "AWS::StepFunctions::StateMachine": NameRule(r"[A-Za-z0-9_-]{1,80}", 80),
    "AWS::Logs::LogGroup": NameRule(r"[.\-_/#A-Za-z0-9]{1,512}", 512),
    "AWS::Lambda::LayerVersion": NameRule(r"[A-Za-z0-9_-]{1,140}", 140),
    "AWS::OpenSearchServerless::Collection": NameRule(r"[a-z][a-z0-9-]{2,31}", 32, lower=True),
}
NAME_PROPERTIES = {
    "AWS::S3::Bucket": "BucketName",
    "AWS::DynamoDB::Table": "TableName",
    "AWS::SQS::Queue": "QueueName",
    "AWS::Lambda::Function": "FunctionName",
    "AWS::IAM::Role": "RoleName",
    "AWS::Events::Rule": "Name",
    "AWS::Events::EventBus": "Name",
    "AWS::StepFunctions::StateMachine": "StateMachineName",
    "AWS::Logs::LogGroup": "LogGroupName",
    "AWS::Lambda::LayerVersion": "LayerName",
    "AWS::OpenSearchServerless::Collection": "Name",
}


def generated_name(stack_name: str, logical_id: str, rule: NameRule) -> str:
    """`<stack>-<logical id>`, shortened with a digest of the full id when too long."""
    name = f"{stack_name}-{logical_id}"
    if rule.lower:
        name = name.lower()
    if len(name) > rule.max_length:
        digest = hashlib.sha256(logical_id.encode()).hexdigest()[:8]
        name = f"{name[: rule.max_length - 9]}-{digest}"
    return name


class UnsupportedTemplate(ValueError):
    """The template uses an intrinsic or resource attribute the harness does not model."""


class Resolver:
    """Evaluates a template's intrinsics to the values CloudFormation would give them."""

    def __init__(self, stack: StackTemplate) -> None:
        """Resolve against `stack`'s resources, region and account."""
        self.stack = stack
        self.pseudo = {
            "AWS::Region": stack.region, "AWS::AccountId": stack.account,
            "AWS::Partition": PARTITION, "AWS::StackName": stack.stack_name,
            "AWS::URLSuffix": URL_SUFFIX, "AWS::NoValue": None,
            "AWS::StackId": (f"arn:{PARTITION}:cloudformation:{stack.region}:{stack.account}:"
                             f"stack/{stack.stack_name}/00000000-0000-0000-0000-000000000000"),
        }

    def name(self, logical_id: str) -> str:
        """The physical name of a resource (its name property when the template sets one)."""
        resource = self.stack.resources[logical_id]
        kind = resource["Type"]
        rule = NAME_RULES.get(kind)
        if rule is None:
            raise UnsupportedTemplate(f"no naming rule for {kind} ({logical_id})")
        given = resource.get("Properties", {}).get(NAME_PROPERTIES[kind])
        name = self.resolve(given) if given is not None else generated_name(
            self.stack.stack_name, logical_id, rule)
        if not rule.valid(name):
            raise UnsupportedTemplate(f"{name!r} is not a valid {kind} name")
        return name

    def collection_id(self, logical_id: str) -> str:
        """An OpenSearch Serverless collection id (AWS generates 20 lowercase characters)."""
        return hashlib.sha256(f"{self.stack.stack_name}/{logical_id}".encode()).hexdigest()[:20]

    def arn(self, service: str, resource: str, region: bool = True, account: bool = True) -> str:
        """An ARN in the stack's partition, region and account."""
        return (f"arn:{PARTITION}:{service}:{self.stack.region if region else ''}:"
                f"{self.stack.account if account else ''}:{resource}")

    def ref(self, logical_id: str) -> Any:
        """What `{"Ref": logical_id}` returns."""
        if logical_id in self.pseudo:
            return self.pseudo[logical_id]
        if logical_id in self.stack.template.get("Parameters", {}):
            raise UnsupportedTemplate(f"parameter {logical_id} has no value in the harness")
        kind = self.stack.resources[logical_id]["Type"]
        refs: dict[str, Callable[[], Any]] = {
            "AWS::S3::Bucket": lambda: self.name(logical_id),
            "AWS::DynamoDB::Table": lambda: self.name(logical_id),
            "AWS::Lambda::Function": lambda: self.name(logical_id),
            "AWS::IAM::Role": lambda: self.name(logical_id),
            "AWS::Events::EventBus": lambda: self.name(logical_id),
            "AWS::Logs::LogGroup": lambda: self.name(logical_id),
            "AWS::SQS::Queue": lambda: (f"https://sqs.{self.stack.region}.{URL_SUFFIX}/"
                                        f"{self.stack.account}/{self.name(logical_id)}"),
            "AWS::StepFunctions::StateMachine": lambda: self.get_att(logical_id, "Arn"),
            "AWS::Lambda::LayerVersion": lambda: self.get_att(logical_id, "LayerVersionArn"),
            "AWS::OpenSearchServerless::Collection": lambda: self.collection_id(logical_id),
            "AWS::Events::Rule": lambda: self._rule_ref(logical_id),
        }
        if kind not in refs:
            raise UnsupportedTemplate(f"Ref of {kind} ({logical_id})")
        return refs[kind]()

    def _rule_ref(self, logical_id: str) -> str:
        bus = self._rule_bus(logical_id)
        name = self.name(logical_id)
        return name if bus == "default" else f"{bus}|{name}"

    def _rule_bus(self, logical_id: str) -> str:
        bus = self.stack.resources[logical_id]["Properties"].get("EventBusName")
        return self.resolve(bus) if bus is not None else "default"

    def get_att(self, logical_id: str, attribute: str) -> Any:
        """What `{"Fn::GetAtt": [logical_id, attribute]}` returns."""
        kind = self.stack.resources[logical_id]["Type"]
        key = (kind, attribute)
        if key == ("AWS::S3::Bucket", "Arn"):
            return f"arn:{PARTITION}:s3:::{self.name(logical_id)}"
        if key == ("AWS::DynamoDB::Table", "Arn"):
            return self.arn("dynamodb", f"table/{self.name(logical_id)}")
        if key == ("AWS::SQS::Queue", "Arn"):
            return self.arn("sqs", self.name(logical_id))
        if key == ("AWS::SQS::Queue", "QueueName"):
            return self.name(logical_id)
        if key == ("AWS::SQS::Queue", "QueueUrl"):
            return self.ref(logical_id)
        if key == ("AWS::Lambda::Function", "Arn"):
            return self.arn("lambda", f"function:{self.name(logical_id)}")
        if key == ("AWS::IAM::Role", "Arn"):
            return f"arn:{PARTITION}:iam::{self.stack.account}:role/{self.name(logical_id)}"
        if key == ("AWS::StepFunctions::StateMachine", "Arn"):
            return self.arn("states", f"stateMachine:{self.name(logical_id)}")
        if key == ("AWS::StepFunctions::StateMachine", "Name"):
            return self.name(logical_id)
        if key == ("AWS::Events::EventBus", "Arn"):
            return self.arn("events", f"event-bus/{self.name(logical_id)}")
        if key == ("AWS::Events::EventBus", "Name"):
            return self.name(logical_id)
        if key == ("AWS::Events::Rule", "Arn"):
            bus = self._rule_bus(logical_id)
            path = self.name(logical_id) if bus == "default" else f"{bus}/{self.name(logical_id)}"
            return self.arn("events", f"rule/{path}")
        if key == ("AWS::Logs::LogGroup", "Arn"):
            return self.arn("logs", f"log-group:{self.name(logical_id)}:*")
        if key == ("AWS::Lambda::LayerVersion", "LayerVersionArn"):
            return self.arn("lambda", f"layer:{self.name(logical_id)}:1")
        if key == ("AWS::OpenSearchServerless::Collection", "Arn"):
            return self.arn("aoss", f"collection/{self.collection_id(logical_id)}")
        if key == ("AWS::OpenSearchServerless::Collection", "CollectionEndpoint"):
            return f"https://{self.collection_id(logical_id)}.{self.stack.region}.aoss.{URL_SUFFIX}"
        if key == ("AWS::OpenSearchServerless::Collection", "Id"):
            return self.collection_id(logical_id)
        raise UnsupportedTemplate(f"Fn::GetAtt {attribute} of {kind} ({logical_id})")

    def resolve(self, value: Any) -> Any:
        """The value with every intrinsic function evaluated (recursively)."""
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return self.ref(argument)
            if key == "Fn::GetAtt":
                logical_id, attribute = (argument.split(".", 1) if isinstance(argument, str)
                                         else argument)
                return self.get_att(logical_id, attribute)
            if key == "Fn::Join":
                separator, parts = argument
                return separator.join(str(self.resolve(part)) for part in self.resolve(parts))
            if key == "Fn::Sub":
                return self._sub(argument)
            if key == "Fn::Select":
                index, items = argument
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Split":
                separator, text = argument
                return str(self.resolve(text)).split(separator)
            if key.startswith("Fn::") or key == "Condition":
                raise UnsupportedTemplate(f"intrinsic {key} is not modelled")
        return {key: self.resolve(item) for key, item in value.items()}

    def _sub(self, argument: Any) -> str:
        text, variables = (argument, {}) if isinstance(argument, str) else argument
        values = {name: self.resolve(v) for name, v in variables.items()}

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in values:
                return str(values[name])
            if "." in name and not name.startswith("AWS::"):
                return str(self.get_att(*name.split(".", 1)))
            return str(self.ref(name))

        return re.sub(r"\$\{([^}]+)\}", replace, text)


@dataclass(frozen=True)
class RoleSpec:
    """An IAM role and every statement granted to it (inline, attached and managed)."""

    logical_id: str
    name: str
    arn: str
    statements: tuple[Statement, ...]


@dataclass(frozen=True)
class FunctionSpec:
    """A Lambda function as deployed: names, handler folder, role and environment."""

    logical_id: str
    name: str
    arn: str
    handler_dir: str | None
    role: RoleSpec
    environment: dict[str, str]
    timeout_s: int
    memory_mb: int


@dataclass(frozen=True)
class QueueSpec:
    """An SQS queue with its resolved attributes."""

    logical_id: str
    name: str
    url: str
    arn: str
    attributes: dict[str, str]


@dataclass(frozen=True)
class EventSourceSpec:
    """An SQS event source mapping of a function."""

    logical_id: str
    queue: QueueSpec
    function: FunctionSpec
    batch_size: int
    max_concurrency: int
    report_batch_item_failures: bool


@dataclass(frozen=True)
class CollectionSpec:
    """An OpenSearch Serverless collection and the principals its data-access policies name."""

    logical_id: str
    name: str
    arn: str
    endpoint: str
    data_rules: tuple[tuple[tuple[str, ...], tuple[dict[str, Any], ...]], ...] = field(default=())
    """(principals, rules) of each data-access policy naming the collection."""


class StackModel:
    """Typed, resolved views over a synthesised stack."""

    def __init__(self, stack: StackTemplate) -> None:
        """Resolve against `stack`."""
        self.stack = stack
        self.resolver = Resolver(stack)

    def _props(self, logical_id: str) -> dict[str, Any]:
        return self.stack.resources[logical_id].get("Properties", {})

    def logical_id_of(self, kind: str, name_or_arn: str) -> str:
        """The logical id of the resource of one type with this physical name or ARN."""
        for logical_id in self.stack.of_type(kind):
            if name_or_arn in {self.resolver.name(logical_id),
                               self.resolver.get_att(logical_id, "Arn")}:
                return logical_id
        raise KeyError(f"no {kind} named {name_or_arn}")

    @cached_property
    def roles(self) -> dict[str, RoleSpec]:
        """Logical id -> role with its statements."""
        attached: dict[str, list[Statement]] = {}
        for policy_id, policy in self.stack.of_type("AWS::IAM::Policy").items():
            props = policy["Properties"]
            document = self.resolver.resolve(props["PolicyDocument"])
            for role in props.get("Roles", []):
                attached.setdefault(role["Ref"], []).extend(
                    Statement.from_json(s, f"{policy_id}[{i}]")
                    for i, s in enumerate(document["Statement"]))
        roles = {}
        for logical_id, role in self.stack.of_type("AWS::IAM::Role").items():
            props = role["Properties"]
            statements = list(attached.get(logical_id, []))
            for inline in props.get("Policies", []):
                document = self.resolver.resolve(inline["PolicyDocument"])
                statements.extend(Statement.from_json(s, f"{logical_id}.{inline['PolicyName']}")
                                  for s in document["Statement"])
            for arn in self.resolver.resolve(props.get("ManagedPolicyArns", [])):
                if arn not in MANAGED_POLICIES:
                    raise UnsupportedTemplate(f"managed policy {arn} is not modelled")
                statements.extend(Statement.from_json(s, arn) for s in MANAGED_POLICIES[arn])
            roles[logical_id] = RoleSpec(logical_id, self.resolver.name(logical_id),
                                         self.resolver.get_att(logical_id, "Arn"),
                                         tuple(statements))
        return roles

    def role_by_arn(self, arn: str) -> RoleSpec:
        """The role with this ARN."""
        for role in self.roles.values():
            if role.arn == arn:
                return role
        raise KeyError(f"no role {arn}")

    @cached_property
    def functions(self) -> dict[str, FunctionSpec]:
        """Logical id -> every project function (those with a handler folder)."""
        functions = {}
        for logical_id, handler_dir in self.stack.handler_dirs.items():
            props = self._props(logical_id)
            role_ref = props["Role"]["Fn::GetAtt"][0]
            variables = self.resolver.resolve(props.get("Environment", {}).get("Variables", {}))
            functions[logical_id] = FunctionSpec(
                logical_id=logical_id,
                name=self.resolver.name(logical_id),
                arn=self.resolver.get_att(logical_id, "Arn"),
                handler_dir=handler_dir,
                role=self.roles[role_ref],
                environment={k: str(v) for k, v in variables.items()},
                timeout_s=int(props.get("Timeout", 3)),
                memory_mb=int(props.get("MemorySize", 128)),
            )
        return functions

    def function_named(self, name_or_arn: str) -> FunctionSpec:
        """The project function with this name or ARN (a qualifier is ignored)."""
        name = name_or_arn.split(":function:")[-1].split(":")[0]
        for function in self.functions.values():
            if function.name == name:
                return function
        raise KeyError(f"no project function {name_or_arn}")

    def function_for(self, handler_dir: str) -> FunctionSpec:
        """The project function whose code is `functions/<handler_dir>`."""
        (function,) = (f for f in self.functions.values() if f.handler_dir == handler_dir)
        return function

    @cached_property
    def queues(self) -> dict[str, QueueSpec]:
        """Logical id -> queue."""
        attribute_names = {"VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds",
                           "ReceiveMessageWaitTimeSeconds", "MaximumMessageSize",
                           "SqsManagedSseEnabled", "FifoQueue", "ContentBasedDeduplication"}
        queues = {}
        for logical_id in self.stack.of_type("AWS::SQS::Queue"):
            props = self.resolver.resolve(self._props(logical_id))
            attributes = {k: str(v).lower() if isinstance(v, bool) else str(v)
                          for k, v in props.items() if k in attribute_names}
            if "RedrivePolicy" in props:
                attributes["RedrivePolicy"] = json.dumps(props["RedrivePolicy"])
            unknown = set(props) - attribute_names - {"RedrivePolicy", "QueueName", "Tags"}
            if unknown:
                raise UnsupportedTemplate(f"queue {logical_id}: {sorted(unknown)}")
            queues[logical_id] = QueueSpec(logical_id, self.resolver.name(logical_id),
                                           self.resolver.ref(logical_id),
                                           self.resolver.get_att(logical_id, "Arn"), attributes)
        return queues

    def queue_by_arn(self, arn: str) -> QueueSpec:
        """The queue with this ARN."""
        (queue,) = (q for q in self.queues.values() if q.arn == arn)
        return queue

    @cached_property
    def event_sources(self) -> list[EventSourceSpec]:
        """The SQS event source mappings of project functions."""
        sources = []
        for logical_id in self.stack.of_type("AWS::Lambda::EventSourceMapping"):
            props = self.resolver.resolve(self._props(logical_id))
            sources.append(EventSourceSpec(
                logical_id=logical_id,
                queue=self.queue_by_arn(props["EventSourceArn"]),
                function=self.function_named(props["FunctionName"]),
                batch_size=int(props.get("BatchSize", 10)),
                max_concurrency=int(props.get("ScalingConfig", {}).get("MaximumConcurrency", 2)),
                report_batch_item_failures="ReportBatchItemFailures" in props.get(
                    "FunctionResponseTypes", []),
            ))
        return sources

    def resource_policies(self) -> Iterator[tuple[list[str], list[Statement]]]:
        """(resource ARN patterns the policy is attached to, its statements) for every bucket
        policy, queue policy, event bus policy and Lambda permission."""
        for logical_id, policy in self.stack.of_type("AWS::Events::EventBusPolicy").items():
            props = self.resolver.resolve(policy["Properties"])
            bus = props.get("EventBusName", "default")
            arn = bus if bus.startswith("arn:") else (
                f"arn:{PARTITION}:events:{self.stack.region}:{self.stack.account}:event-bus/{bus}")
            yield [arn], [Statement.from_json({"Sid": props.get("StatementId"),
                                               **props["Statement"]}, logical_id)]
        for logical_id, permission in self.stack.of_type("AWS::Lambda::Permission").items():
            yield from self._lambda_permission(logical_id, permission)
        for logical_id, policy in self.stack.of_type("AWS::S3::BucketPolicy").items():
            props = self.resolver.resolve(policy["Properties"])
            bucket = f"arn:{PARTITION}:s3:::{props['Bucket']}"
            yield [bucket, f"{bucket}/*"], [Statement.from_json(s, f"{logical_id}[{i}]")
                                            for i, s in enumerate(
                                                props["PolicyDocument"]["Statement"])]
        for logical_id, policy in self.stack.of_type("AWS::SQS::QueuePolicy").items():
            props = self.resolver.resolve(policy["Properties"])
            arns = [q.arn for q in self.queues.values() if q.url in props["Queues"]]
            yield arns, [Statement.from_json(s, f"{logical_id}[{i}]")
                         for i, s in enumerate(props["PolicyDocument"]["Statement"])]

    def _lambda_permission(self, logical_id: str, permission: dict[str, Any]
                           ) -> Iterator[tuple[list[str], list[Statement]]]:
        """An AWS::Lambda::Permission as the statement of the function's resource policy."""
        props = self.resolver.resolve(permission["Properties"])
        name = props["FunctionName"]
        try:
            arn = name if name.startswith("arn:") else self.function_named(name).arn
        except KeyError:  # a CDK helper function (no project code), not called by the tests
            return
        principal = props["Principal"]
        kind = "Service" if principal.endswith(".amazonaws.com") else "AWS"
        conditions: dict[str, dict[str, Any]] = {}
        if "FunctionUrlAuthType" in props:
            conditions["StringEquals"] = {
                "lambda:FunctionUrlAuthType": props["FunctionUrlAuthType"]}
        if props.get("InvokedViaFunctionUrl"):
            conditions["Bool"] = {"lambda:InvokedViaFunctionUrl": "true"}
        if "SourceArn" in props:
            conditions["ArnLike"] = {"aws:SourceArn": props["SourceArn"]}
        if "SourceAccount" in props:
            conditions.setdefault("StringEquals", {})["aws:SourceAccount"] = props["SourceAccount"]
        statement = {"Effect": "Allow", "Principal": {kind: principal},
                     "Action": props["Action"], "Resource": arn, "Condition": conditions}
        yield [arn], [Statement.from_json(statement, logical_id)]

    @cached_property
    def collections(self) -> dict[str, CollectionSpec]:
        """Logical id -> OpenSearch Serverless collection with its data-access rules."""
        policies = [self.resolver.resolve(p["Properties"]) for p in
                    self.stack.of_type("AWS::OpenSearchServerless::AccessPolicy").values()]
        collections = {}
        for logical_id in self.stack.of_type("AWS::OpenSearchServerless::Collection"):
            name = self.resolver.name(logical_id)
            rules = []
            for policy in policies:
                if policy["Type"] != "data":
                    raise UnsupportedTemplate(f"access policy type {policy['Type']}")
                for entry in json.loads(policy["Policy"]):
                    resources = [r for rule in entry["Rules"] for r in rule["Resource"]]
                    if any(r.split("/")[1] == name or r.split("/")[1] == "*" for r in resources):
                        rules.append((tuple(entry["Principal"]), tuple(entry["Rules"])))
            collections[logical_id] = CollectionSpec(
                logical_id, name, self.resolver.get_att(logical_id, "Arn"),
                self.resolver.get_att(logical_id, "CollectionEndpoint"), tuple(rules))
        return collections

    def state_machine_definition(self, logical_id: str) -> str:
        """A state machine's ASL with its DefinitionSubstitutions filled in."""
        props = self._props(logical_id)
        text = self.resolver.resolve(props["DefinitionString"])
        for name, value in self.resolver.resolve(props.get("DefinitionSubstitutions", {})).items():
            text = text.replace("${" + name + "}", str(value))
        left = re.findall(r"\$\{([A-Za-z0-9_]+)\}", text)
        if left:
            raise UnsupportedTemplate(f"{logical_id}: placeholders without a value: {left}")
        json.loads(text)
        return text

