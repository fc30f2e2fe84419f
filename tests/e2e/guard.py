"""IAM enforcement for the functions of the end-to-end harness.

Every function gets its own boto3 session (as every Lambda has its own container and role).
A botocore hook on that session records each call and evaluates the permissions it needs
(`authorization.permissions_for`) against the function's role in the synthesised template and
the resource policies of the stack. A call the template does not allow raises an
AccessDenied-like error inside the call, as AWS would, and is recorded in the `AccessLog`, so a
test fails even when the handler swallows the error. The Bedrock and OpenSearch fakes are
wrapped the same way at their client boundary.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
import botocore.session
from botocore.exceptions import ClientError
from botocore.loaders import create_loader

from tests.e2e.authorization import (
    Caller,
    Permission,
    UnmappedCall,
    permissions_for,
    s3_bucket_arn,
)
from tests.e2e.iam import (
    Decision,
    Evaluation,
    Request,
    Statement,
    UnsupportedPolicy,
    action_matches,
    evaluate,
    resource_matches,
)
from tests.e2e.template import CollectionSpec, RoleSpec, StackModel

SECURE_TRANSPORT = {"aws:SecureTransport": ("true",)}


@dataclass(frozen=True)
class Call:
    """One API call a principal made, its parameters and the permissions it needed."""

    principal: str
    service: str
    operation: str
    permissions: tuple[Permission, ...]
    parameters: Mapping[str, Any] = field(default_factory=dict)
    """The call's parameters, payloads shortened to their size."""


def summarised(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters as recorded: bytes and long strings replaced by their size."""
    def short(value: Any) -> Any:
        if isinstance(value, bytes | bytearray) or hasattr(value, "read"):
            return f"<{len(value) if isinstance(value, bytes | bytearray) else '?'} bytes>"
        if isinstance(value, str) and len(value) > 200:
            return f"<{len(value)} characters>"
        if isinstance(value, Mapping):
            return {k: short(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [short(v) for v in value[:20]]
        return value

    return short(dict(params))


@dataclass(frozen=True)
class Denial:
    """A call (or delivery) the stack's policies do not allow."""

    principal: str
    """The function's logical id, or the service that delivers (EventBridge rule, ...)."""
    action: str
    resource: str
    reason: str

    def __str__(self) -> str:
        return f"{self.principal} may not {self.action} on {self.resource} ({self.reason})"


@dataclass
class AccessLog:
    """Every call and every denial of one deployment (shared by all threads)."""

    calls: list[Call] = field(default_factory=list)
    denials: list[Denial] = field(default_factory=list)
    deliveries: list[tuple[str, str]] = field(default_factory=list)
    """(target ARN, message body) of every event EventBridge delivered to a queue."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def deliver(self, target: str, body: str) -> None:
        """Remember an event delivered to a queue."""
        with self.lock:
            self.deliveries.append((target, body))

    def delivered(self, target: str) -> list[str]:
        """The bodies delivered to one queue, oldest first."""
        with self.lock:
            return [body for arn, body in self.deliveries if arn == target]

    def record(self, call: Call) -> None:
        """Remember an allowed call."""
        with self.lock:
            self.calls.append(call)

    def deny(self, denial: Denial) -> None:
        """Remember a denial."""
        with self.lock:
            self.denials.append(denial)

    limits: list[str] = field(default_factory=list)
    """Service limits a call exceeded (AWS would have refused the call)."""

    def over_limit(self, message: str) -> None:
        """Remember a call over a service limit."""
        with self.lock:
            self.limits.append(message)

    def take_denials(self) -> list[Denial]:
        """Return the denials so far and forget them (for tests that expect some)."""
        with self.lock:
            taken, self.denials = self.denials, []
        return taken

    def calls_of(self, principal: str) -> list[Call]:
        """The calls one principal made."""
        with self.lock:
            return [c for c in self.calls if c.principal == principal]


class Authorizer:
    """Decides requests of the stack's principals with the stack's own policies."""

    def __init__(self, model: StackModel) -> None:
        """Read the stack's resource policies once."""
        self.model = model
        self.caller = Caller(model.stack.region, model.stack.account)
        self.resource_policies = list(model.resource_policies())

    def evaluate(self, principal: str, identity: Iterable[Statement],
                 permission: Permission) -> Evaluation:
        """Evaluate one permission for a principal (role ARN or service principal) with its
        identity statements and the resource policies attached to the resource."""
        statements = list(identity)
        for patterns, policy in self.resource_policies:
            if any(resource_matches(p, permission.resource) for p in patterns):
                statements.extend(policy)
        context = {**SECURE_TRANSPORT, **permission.context}
        if principal.startswith("arn:"):  # a role's session: aws:PrincipalArn is the role
            context.setdefault("aws:PrincipalArn", (principal,))
        request = Request(action=permission.action, resource=permission.resource,
                          principal=principal, context=context)
        return evaluate(request, statements)


def access_denied(operation: str, service: str, message: str) -> ClientError:
    """The error AWS answers a denied call with (HEAD requests carry no error body)."""
    code = "AccessDenied" if service == "s3" else "AccessDeniedException"
    if operation == "HeadObject":
        code, message = "403", "Forbidden"
    return ClientError({"Error": {"Code": code, "Message": message},
                        "ResponseMetadata": {"HTTPStatusCode": 403}}, operation)


@dataclass
class FunctionPrincipal:
    """A function's identity: its role's statements, checked for every call it makes."""

    logical_id: str
    name: str
    role: RoleSpec
    authorizer: Authorizer
    log: AccessLog
    handler_dir: str | None = None
    implied: Mapping[tuple[str, str], tuple[Permission, ...]] = field(default_factory=dict)
    """(service, operation) -> permissions AWS requires beyond the call's own (Step Functions'
    .sync integrations need its managed EventBridge rule)."""

    @property
    def label(self) -> str:
        """How denials name the function: logical id and handler folder."""
        return (f"{self.logical_id} (functions/{self.handler_dir})" if self.handler_dir
                else self.logical_id)

    def check(self, service: str, operation: str, permissions: Iterable[Permission],
              parameters: Mapping[str, Any] | None = None) -> None:
        """Raise AccessDenied (and log the denial) unless every permission is allowed; log the
        call when it is."""
        permissions = tuple(permissions)
        for permission in permissions:
            try:
                result = self.evaluate(permission)
            except UnsupportedPolicy as exc:
                self.deny(permission, f"policy not modelled: {exc}")
                raise
            if not result.allowed:
                reason = (f"explicit deny in {result.statement}"
                          if result.decision is Decision.EXPLICIT_DENY
                          else f"not allowed by {result.statement}" if result.statement
                          else "no statement of its role allows it")
                message = self.deny(permission, reason)
                raise access_denied(operation, service, message)
        self.log.record(Call(self.label, service, operation, permissions,
                             summarised(parameters or {})))

    def evaluate(self, permission: Permission) -> Evaluation:
        """The decision on one permission: the role's statements and the resource policies."""
        return self.authorizer.evaluate(self.role.arn, self.role.statements, permission)

    def allowed(self, permission: Permission) -> bool:
        """True when the role may do this (no logging: for AWS-side behaviour like 404/403)."""
        return self.evaluate(permission).allowed

    def deny(self, permission: Permission, reason: str) -> str:
        """Log a denial; return AWS's message for it."""
        self.log.deny(Denial(self.label, permission.action, permission.resource, reason))
        return (f"User: arn:aws:sts::{self.authorizer.caller.account}:assumed-role/"
                f"{self.role.name}/{self.name} is not authorized to perform: {permission.action}"
                f" on resource: {permission.resource} ({reason})")

    def unmapped(self, service: str, operation: str, error: Exception) -> None:
        """Log a call the harness cannot authorise (so it is added to authorization.py)."""
        self.log.deny(Denial(self.label, f"{service}:{operation}", "?",
                             f"no IAM mapping in tests/e2e/authorization.py: {error}"))


NOT_FOUND = {"404", "NoSuchKey", "NotFound", "NoSuchVersion"}


_LOADER = create_loader()


DYNAMODB_ITEM_LIMIT = 400 * 1024


def dynamodb_item_size(item: Mapping[str, Any]) -> int:
    """An item's size as DynamoDB counts it, in the resource layer's Python form or in the
    wire form: attribute names plus values (strings in UTF-8, numbers about 21 bytes at
    most, binary as is, sets and containers as their members plus a few bytes each)."""

    def size(value: Any) -> int:
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _WIRE_TYPES:
            ((_type, inner),) = value.items()
            return size(inner)
        if isinstance(value, str):
            return len(value.encode("utf-8"))
        if isinstance(value, bytes | bytearray):
            return len(value)
        if isinstance(value, bool) or value is None:
            return 1
        if isinstance(value, int | float) or type(value).__name__ == "Decimal":
            return 21
        if isinstance(value, dict):
            return 3 + sum(len(str(k).encode()) + size(v) for k, v in value.items())
        if isinstance(value, list | tuple | set | frozenset):
            return 3 + sum(1 + size(v) for v in value)
        return len(str(value).encode())

    return sum(len(str(name).encode()) + size(value) for name, value in item.items())


_WIRE_TYPES = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}


def _written_items(operation: str, params: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if operation == "PutItem":
        return [params["Item"]]
    if operation == "BatchWriteItem":
        return [request["PutRequest"]["Item"] for requests in params["RequestItems"].values()
                for request in requests if "PutRequest" in request]
    if operation == "UpdateItem":  # the values it sets, a lower bound of the item's size
        return [dict(params.get("ExpressionAttributeValues", {}))]
    return []


AssumedHook = Callable[[FunctionPrincipal, Mapping[str, Any], Mapping[str, Any]], None]
"""Called after an allowed sts:AssumeRole: (caller, request parameters, parsed answer)."""


def guarded_session(principal: FunctionPrincipal, region: str,
                    on_assumed: AssumedHook | None = None) -> boto3.session.Session:
    """A boto3 session whose every call is authorised against the principal's role;
    `on_assumed` learns of every role the session assumes (and with which session policy)."""
    core = botocore.session.get_session()
    # one loader for all sessions: service models are parsed once, not per container
    core.register_component("data_loader", _LOADER)
    session = boto3.session.Session(region_name=region, botocore_session=core)
    caller = principal.authorizer.caller

    def before(params: Mapping[str, Any], model: Any, context: dict[str, Any],
               **_: Any) -> None:
        service = model.service_model.service_name
        context["drac_bucket"] = params.get("Bucket")
        try:
            needed = permissions_for(service, model.name, params, caller)
        except UnmappedCall as exc:
            principal.unmapped(service, model.name, exc)
            raise
        needed = [*needed, *principal.implied.get((service, model.name), ())]
        principal.check(service, model.name, needed, params)
        if service == "sts" and model.name == "AssumeRole":
            context["drac_assume"] = dict(params)
        if service == "dynamodb":
            for item in _written_items(model.name, params):
                size = dynamodb_item_size(item)
                if size > DYNAMODB_ITEM_LIMIT:
                    principal.log.over_limit(
                        f"{principal.label}: {model.name} of a {size:,}-byte item (DynamoDB's"
                        f" limit is {DYNAMODB_ITEM_LIMIT:,})")

    def after(parsed: Mapping[str, Any], model: Any, context: dict[str, Any],
              **_: Any) -> None:
        # S3 answers a read of a missing key with 404 only to a caller that may list the
        # bucket; everyone else gets 403, so "not found" cannot leak (HeadObject permissions).
        code = str(parsed.get("Error", {}).get("Code", ""))
        if model.name in {"GetObject", "HeadObject"} and code in NOT_FOUND:
            bucket = context["drac_bucket"]
            listing = Permission("s3:ListBucket", s3_bucket_arn(bucket, caller))
            if not principal.allowed(listing):
                message = principal.deny(listing, "a missing key answers 403 without it")
                raise access_denied(model.name, "s3", message)

    def assumed(parsed: Mapping[str, Any], context: dict[str, Any], **_: Any) -> None:
        if on_assumed is not None and "Credentials" in parsed:
            on_assumed(principal, context["drac_assume"], parsed)

    session.events.register("before-parameter-build", before)
    session.events.register("after-call.s3", after)
    session.events.register("after-call.sts.AssumeRole", assumed)
    return session


@dataclass
class GuardedBedrock:
    """The Bedrock runtime fake behind the function's permission check."""

    fake: Any
    principal: FunctionPrincipal

    def _call(self, operation: str, request: Mapping[str, Any]) -> Any:
        needed = permissions_for("bedrock-runtime", operation, request,
                                 self.principal.authorizer.caller)
        self.principal.check("bedrock-runtime", operation, needed,
                             {k: v for k, v in request.items() if k != "messages"})
        method = {"Converse": "converse", "InvokeModel": "invoke_model"}[operation]
        return getattr(self.fake, method)(**request)

    def converse(self, **request: Any) -> Any:
        """Bedrock Converse, authorised as bedrock:InvokeModel on the model."""
        return self._call("Converse", request)

    def invoke_model(self, **request: Any) -> Any:
        """Bedrock InvokeModel."""
        return self._call("InvokeModel", request)


# The data-plane permission of each call the pipeline makes on a collection.
OPENSEARCH_PERMISSIONS = {"bulk": "aoss:WriteDocument", "search": "aoss:ReadDocument",
                          "exists": "aoss:DescribeIndex", "create": "aoss:CreateIndex",
                          "delete_by_query": "aoss:WriteDocument"}


class GuardedOpenSearch:
    """The OpenSearch fake behind OpenSearch Serverless authorisation: the role needs
    aoss:APIAccessAll on the collection (IAM) and the data-access policy must name it with
    the index permission the call needs."""

    def __init__(self, fake: Any, principal: FunctionPrincipal, endpoint: str,
                 collections: Mapping[str, CollectionSpec]) -> None:
        """Resolve the collection the endpoint names (an unknown endpoint cannot connect)."""
        self.fake = fake
        self.principal = principal
        self.endpoint = endpoint
        self.collection = next((c for c in collections.values()
                                if c.endpoint.rstrip("/") == endpoint.rstrip("/")), None)
        self.indices = _GuardedIndices(self)

    def authorise(self, call: str, index: str) -> None:
        """Raise AuthorizationException (403) unless IAM and the data-access policy allow."""
        from opensearchpy.exceptions import AuthorizationException, ConnectionError

        if self.collection is None:
            raise ConnectionError("N/A", f"no collection at {self.endpoint}", None)
        collection = self.collection
        try:
            self.principal.check("aoss", call, [Permission("aoss:APIAccessAll", collection.arn)])
        except ClientError as exc:
            raise AuthorizationException(403, "security_exception", str(exc)) from exc
        permission = OPENSEARCH_PERMISSIONS[call]
        resource = f"index/{collection.name}/{index}"
        if not data_access_allows(collection, self.principal.role.arn, permission, resource):
            self.principal.log.deny(Denial(self.principal.label, permission, resource,
                                           "the collection's data-access policy does not "
                                           "grant it to the role"))
            raise AuthorizationException(403, "security_exception",
                                         f"{permission} on {resource} denied")

    def bulk(self, body: list[dict[str, Any]], **kwargs: Any) -> Any:
        """_bulk: write access to every index an action names."""
        for index in sorted({next(iter(a.values())).get("_index", "") for a in body
                             if set(a) & {"index", "create", "update", "delete"}}):
            self.authorise("bulk", index)
        return self.fake.bulk(body=body, **kwargs)

    def search(self, index: str, body: dict[str, Any], **kwargs: Any) -> Any:
        """_search: read access to the index."""
        self.authorise("search", index)
        return self.fake.search(index=index, body=body, **kwargs)

    def delete_by_query(self, index: str, body: dict[str, Any], **kwargs: Any) -> Any:
        """_delete_by_query (which vector collections refuse)."""
        self.authorise("delete_by_query", index)
        return self.fake.delete_by_query(index=index, body=body, **kwargs)


class _GuardedIndices:
    def __init__(self, client: GuardedOpenSearch) -> None:
        self.client = client

    def exists(self, index: str, **kwargs: Any) -> bool:
        self.client.authorise("exists", index)
        return self.client.fake.indices.exists(index=index, **kwargs)

    def create(self, index: str, body: dict[str, Any], **kwargs: Any) -> Any:
        self.client.authorise("create", index)
        return self.client.fake.indices.create(index=index, body=body, **kwargs)

    def get_mapping(self, index: str, **kwargs: Any) -> Any:
        self.client.authorise("exists", index)  # GET <index>/_mapping: aoss:DescribeIndex
        return self.client.fake.indices.get_mapping(index=index, **kwargs)


def data_access_allows(collection: CollectionSpec, role_arn: str, permission: str,
                       resource: str) -> bool:
    """True when a data-access policy of the collection names the role and grants the
    permission (`aoss:*` patterns allowed) on the index or collection resource."""
    for principals, rules in collection.data_rules:
        if role_arn not in principals:
            continue
        for rule in rules:
            if rule["ResourceType"] != resource.split("/")[0]:
                continue
            if not any(resource_matches(pattern, resource) for pattern in rule["Resource"]):
                continue
            if any(action_matches(p, permission) for p in rule["Permission"]):
                return True
    return False
