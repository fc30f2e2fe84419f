"""Where moto behaves unlike AWS, patched so the pipeline sees what the services really send.

- S3 -> EventBridge: events carry the object key URL-encoded as S3 sends it ("red flower.pdf"
  arrives as "red+flower.pdf"), `etag`, `reason`, and for deletions `deletion-type`; deleting
  an object of a versioned bucket emits "Delete Marker Created", deleting a version emits
  "Permanently Deleted" (moto emits nothing for a delete marker, and for versions only when
  the last one goes). "Object Tags Added" / "Object Tags Deleted" come from PutObjectTagging
  and DeleteObjectTagging only (S3 User Guide, "Using EventBridge"; moto tags every upload),
  their object naming key, etag and version-id but no size or sequencer (S3 sets a sequencer
  for PUTs and DELETEs only). Events go to the default bus only, as S3 sends them.
- EventBridge targets: SQS targets are delivered only if the queue policy lets
  events.amazonaws.com send for this rule (aws:SourceArn); Step Functions targets (which moto
  does not deliver) are started with the target's role, which must allow
  states:StartExecution; `InputPath` is applied. A refused delivery is logged as a denial.
- Step Functions `startExecution.sync:2`: moto passes the ASL's PascalCase parameters to boto3
  unchanged and answers in camelCase; converted both ways. An execution started without a
  name gets a unique one, as in AWS (moto names them all "None", so a second child execution
  collides).
- Lambda: invocations are dispatched in-process to the harness (see harness.py).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote_plus

import pytest

from tests.e2e.authorization import Permission
from tests.e2e.guard import AccessLog, Authorizer, Denial
from tests.e2e.template import StackModel

Dispatch = Callable[[str, str], tuple[bytes, bool]]
"""(function name or ARN, JSON payload) -> (response payload, whether the function failed)."""

_quiet = threading.local()


def s3_event_key(key: str) -> str:
    """An object key as S3 writes it into event notifications (form-URL-encoded, "/" kept)."""
    return quote_plus(key, safe="/")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def s3_event(
    bucket: Any,
    detail_type: str,
    obj: dict[str, Any],
    reason: str | None,
    account: str,
    **extra: str,
) -> dict[str, Any]:
    """An S3 event as EventBridge delivers it (S3 User Guide, "EventBridge message structure")."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": detail_type,
        "source": "aws.s3",
        "account": account,
        "time": _now(),
        "region": bucket.region_name,
        "resources": [bucket.arn],
        "detail": {
            "version": "0",
            "bucket": {"name": bucket.name},
            "object": obj,
            "request-id": uuid.uuid4().hex[:16].upper(),
            "requester": account,
            "source-ip-address": "203.0.113.7",
            **({"reason": reason} if reason else {}),
            **extra,
        },
    }


def _deliver_to_default_bus(account: str, region: str, event: dict[str, Any]) -> None:
    from moto.events.models import events_backends

    bus = events_backends[account][region].event_buses.get("default")
    for rule in list(bus.rules.values()) if bus else []:
        rule.send_to_targets(event)


_SEQUENCER = itertools.count(0x005F0000000000000)


def _next_sequencer() -> str:
    """S3's sequencer grows with the order of the operations on a key (one counter for all
    keys is a valid such order)."""
    return f"{next(_SEQUENCER):018X}"


def patch_s3_notifications(monkeypatch: pytest.MonkeyPatch) -> None:
    """Send S3 events to EventBridge the way S3 does (see the module docstring)."""
    from moto.s3 import notifications
    from moto.s3.models import S3Backend
    from moto.s3.responses import S3Response

    def created(account_id: str, bucket: Any, event_name: str, key: Any) -> None:
        if getattr(_quiet, "active", False):
            return
        detail_type = notifications._detail_type(event_name)
        if detail_type in {"Object Tags Added", "Object Tags Deleted"}:
            if getattr(_tagging_call, "active", False):  # PutObjectTagging, DeleteObjectTagging
                obj = {"key": s3_event_key(key.name), "etag": key.etag.replace('"', "")}
                if key.version_id and key.version_id != "null":
                    obj["version-id"] = key.version_id
                _deliver_to_default_bus(
                    account_id,
                    bucket.region_name,
                    s3_event(bucket, detail_type, obj, None, account_id),
                )
            return  # moto tags every put, even without tags: S3 sends no tag event for that
        if detail_type != "Object Created":
            raise NotImplementedError(f"S3 event {event_name} is not modelled")
        reason = {
            "Put": "PutObject",
            "Post": "POST Object",
            "Copy": "CopyObject",
            "CompleteMultipartUpload": "CompleteMultipartUpload",
        }[event_name.split(":")[2]]
        obj = {
            "key": s3_event_key(key.name),
            "size": key.size,
            "etag": key.etag.replace('"', ""),
            "sequencer": _next_sequencer(),
        }
        if key.version_id and key.version_id != "null":
            obj["version-id"] = key.version_id
        _deliver_to_default_bus(
            account_id, bucket.region_name, s3_event(bucket, detail_type, obj, reason, account_id)
        )

    original_delete = S3Backend.delete_object

    def delete_object(
        self: Any,
        bucket_name: str,
        key_name: str,
        version_id: str | None = None,
        bypass: bool = False,
    ) -> Any:
        _quiet.active = True
        try:
            success, meta = original_delete(self, bucket_name, key_name, version_id, bypass)
        finally:
            _quiet.active = False
        bucket = self.get_bucket(bucket_name)
        if (
            success
            and bucket.notification_configuration is not None
            and (bucket.notification_configuration.event_bridge is not None)
        ):
            marker = version_id is None and meta.get("delete-marker") == "true"
            obj = {"key": s3_event_key(key_name), "sequencer": _next_sequencer()}
            if meta.get("version-id"):
                obj["version-id"] = meta["version-id"]
            deletion = "Delete Marker Created" if marker else "Permanently Deleted"
            _deliver_to_default_bus(
                self.account_id,
                bucket.region_name,
                s3_event(
                    bucket,
                    "Object Deleted",
                    obj,
                    "DeleteObject",
                    self.account_id,
                    **{"deletion-type": deletion},
                ),
            )
        return success, meta

    monkeypatch.setattr(notifications, "_send_event_bridge_message", created)
    monkeypatch.setattr(S3Backend, "delete_object", delete_object)
    for api in ("put_object_tagging", "delete_object_tagging"):
        monkeypatch.setattr(S3Response, api, _tagging_api(getattr(S3Response, api)))


_tagging_call = threading.local()


def _tagging_api(handler: Callable[..., Any]) -> Callable[..., Any]:
    """An S3 tagging API handler that marks its tag event as one S3 sends."""

    def tagged(self: Any, *args: Any, **kwargs: Any) -> Any:
        _tagging_call.active = True
        try:
            return handler(self, *args, **kwargs)
        finally:
            _tagging_call.active = False

    return tagged


def _input_path(event: dict[str, Any], path: str | None) -> Any:
    if path in (None, "$"):
        return event
    if path.startswith("$.") and "[" not in path:
        value: Any = event
        for part in path[2:].split("."):
            value = value[part]
        return value
    raise NotImplementedError(f"InputPath {path!r} is not modelled")


def patch_eventbridge_targets(
    monkeypatch: pytest.MonkeyPatch, model: StackModel, authorizer: Authorizer, log: AccessLog
) -> None:
    """Deliver rule targets like EventBridge, with the permissions AWS checks."""
    import boto3
    from moto.events.models import Rule
    from moto.sqs.models import sqs_backends

    def send_to_targets(
        self: Any, original_event: dict[str, Any], transform_input: bool = True
    ) -> None:
        if not self.event_pattern.matches_event(original_event):
            return
        event = dict(original_event)
        if isinstance(event.get("time"), int | float):  # PutEvents: moto keeps a Unix time
            event["time"] = datetime.fromtimestamp(float(event["time"]), UTC).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            )
        for target in self.targets:
            if {"Input", "InputTransformer"} & set(target):
                raise NotImplementedError(f"target input of {target} is not modelled")
            payload = _input_path(event, target.get("InputPath"))
            arn = target["Arn"]
            principal = f"EventBridge rule {self.name}"
            if ":sqs:" in arn:
                permission = Permission(
                    "sqs:SendMessage",
                    arn,
                    {"aws:SourceArn": (self.arn,), "aws:SourceAccount": (self.account_id,)},
                )
                result = authorizer.evaluate("events.amazonaws.com", [], permission)
                if not result.allowed:
                    log.deny(
                        Denial(
                            principal,
                            permission.action,
                            arn,
                            "the queue policy does not let this rule send",
                        )
                    )
                    continue
                body = json.dumps(payload)
                log.deliver(arn, body)
                sqs_backends[self.account_id][self.region_name].send_message(
                    queue_name=arn.rsplit(":", 1)[1], message_body=body
                )
            elif ":states:" in arn:
                role = model.role_by_arn(target["RoleArn"])
                permission = Permission("states:StartExecution", arn)
                if not authorizer.evaluate(role.arn, role.statements, permission).allowed:
                    log.deny(
                        Denial(
                            f"{principal} (role {role.logical_id})",
                            permission.action,
                            arn,
                            "the target role does not allow it",
                        )
                    )
                    continue
                boto3.client("stepfunctions", region_name=self.region_name).start_execution(
                    stateMachineArn=arn, input=json.dumps(payload)
                )
            else:
                raise NotImplementedError(f"EventBridge target {arn} is not modelled")

    monkeypatch.setattr(Rule, "send_to_targets", send_to_targets)


def patch_step_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sync:2 parameter/response casing, unique names of unnamed executions, and an
    execution RUNNING from the moment StartExecution creates it."""
    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_sfn as sfn_service,
    )
    from moto.stepfunctions.parser.backend.execution import Execution
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend

    service = sfn_service.StateTaskServiceSfn
    original_parameters = service._normalise_parameters
    original_response = service._normalise_response
    original_start = StepFunctionsParserBackend.start_execution

    def normalise(self, parameters, boto_service_name=None, service_action_name=None):
        original_parameters(self, parameters, boto_service_name, service_action_name)
        for key in list(parameters):
            if key[:1].isupper():
                parameters[key[0].lower() + key[1:]] = parameters.pop(key)

    def normalise_response(self, response, boto_service_name=None, service_action_name=None):
        original_response(self, response, boto_service_name, service_action_name)
        if isinstance(response, dict):
            for key in list(response):
                if key[:1].islower():
                    response[key[0].upper() + key[1:]] = response.pop(key)

    def start_execution(
        self, state_machine_arn, name=None, execution_input=None, trace_header=None
    ):
        return original_start(
            self, state_machine_arn, name or str(uuid.uuid4()), execution_input, trace_header
        )

    monkeypatch.setattr(service, "_normalise_parameters", normalise)
    monkeypatch.setattr(service, "_normalise_response", normalise_response)
    monkeypatch.setattr(StepFunctionsParserBackend, "start_execution", start_execution)
    # moto lists an execution before its worker starts, with no status, so a concurrent
    # ListExecutions raised AttributeError; AWS returns a started execution as RUNNING.
    monkeypatch.setattr(
        Execution,
        "status",
        property(lambda self: (self.exec_status or ExecutionStatus.RUNNING).value),
    )


def running_state_machine() -> str:
    """The ARN of the state machine whose task is calling (from the interpreter's Environment
    on the calling thread's stack)."""
    from moto.stepfunctions.parser.asl.eval.environment import Environment

    frame = sys._getframe(1)
    while frame is not None:
        env = frame.f_locals.get("env")
        if isinstance(env, Environment):
            return env.states.context_object.context_object_data["StateMachine"]["Id"]
        frame = frame.f_back
    raise AssertionError("a Step Functions service call outside any execution")


def patch_sfn_clients(
    monkeypatch: pytest.MonkeyPatch, session_for: Callable[[str], Any] | None = None
) -> None:
    """Step Functions' interpreter makes a new boto3 client for every task; reuse one per
    calling state machine and service. With `session_for` (state machine ARN -> a boto3
    session guarded by that machine's role) every service integration call is authorised
    as Step Functions authorises it: with the machine's role."""
    import importlib

    from botocore.config import Config
    from moto.stepfunctions.parser.asl.utils import boto_client

    original = boto_client.boto_client_for
    cache: dict[tuple[str, str, str], Any] = {}
    lock = threading.Lock()

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        machine = running_state_machine() if session_for else ""
        with lock:
            if (machine, region, service) not in cache:
                cache[(machine, region, service)] = (
                    session_for(machine).client(
                        service,
                        region_name=region,
                        config=Config(
                            parameter_validation=False,
                            retries={"max_attempts": 0, "total_max_attempts": 1},
                        ),
                    )
                    if session_for
                    else original(region, service, state_credentials)
                )
            return cache[(machine, region, service)]

    base = "moto.stepfunctions.parser.asl.component.state.exec"
    for name in (
        f"{base}.state_task.lambda_eval_utils",
        f"{base}.state_task.service.state_task_service_sfn",
        f"{base}.state_map.item_reader.eval.resource_eval_s3",
        f"{base}.state_map.result_writer.resource_eval.resource_eval_s3",
    ):
        monkeypatch.setattr(importlib.import_module(name), "boto_client_for", boto_client_for)


def patch_lambda(monkeypatch: pytest.MonkeyPatch, dispatch: Dispatch) -> None:
    """Invoke (from Step Functions or any client) runs the harness's handler in-process."""
    from moto.awslambda_simple.models import LambdaSimpleBackend
    from moto.core.exceptions import JsonRESTError

    from tests.e2e.harness import LambdaThrottled

    class TooManyRequests(JsonRESTError):
        code = 429

        def __init__(self, name: str) -> None:
            super().__init__("TooManyRequestsException", f"Rate Exceeded. ({name})")

    def invoke(self, function_name, qualifier, body, headers, response_headers):
        try:
            payload, failed = dispatch(function_name, body or "{}")
        except LambdaThrottled as exc:
            raise TooManyRequests(str(exc)) from exc
        if failed:
            response_headers["x-amz-function-error"] = "Unhandled"
        return payload

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
