"""Faults injected into the functions' AWS calls, and the harness's time compression of the
delays functions send messages with.

A fault answers a call before it reaches moto with the error botocore raises once its own
retries are spent (a `before-call` handler's response short-circuits the request), so the
handler sees exactly what a sustained throttle or outage would give it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import boto3

VISIBILITY_TIME_SCALE = 1 / 60
"""How the harness compresses queue time (visibility timeouts, message delays): a minute of
it is a second of the test."""


@dataclass
class InjectedFaults:
    """Errors the functions' next calls to a service are answered with, as botocore raises
    them once its own retries are spent (the call never reaches moto)."""

    pending: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """Service (botocore name: "s3", "dynamodb") -> (error code, HTTP status) per call."""
    spared: set[str] = field(default_factory=set)
    """Functions (handler folders) whose calls are never faulted."""
    injected: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(function, service, operation, code) of every call answered with a fault."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, service: str, code: str, status: int, calls: int) -> None:
        """Answer the next `calls` calls of the functions to `service` with this error."""
        with self.lock:
            self.pending.setdefault(service, []).extend([(code, status)] * calls)

    def take(self, function: str, service: str, operation: str) -> tuple[str, int] | None:
        """The fault this call is answered with, if any (and record it)."""
        with self.lock:
            queued = self.pending.get(service)
            if not queued or function in self.spared:
                return None
            code, status = queued.pop(0)
            self.injected.append((function, service, operation, code))
            return code, status

    def left(self) -> int:
        """Faults not yet answered."""
        with self.lock:
            return sum(len(queued) for queued in self.pending.values())


def register_faults(session: boto3.session.Session, faults: InjectedFaults, function: str) -> None:
    """Answer the session's calls with the injected faults; scale SendMessage delays as the
    harness scales visibility timeouts."""
    from botocore.awsrequest import AWSResponse

    def before_call(model: Any, **_: Any) -> Any:
        fault = faults.take(function, model.service_model.service_name, model.name)
        if fault is None:
            return None
        code, status = fault
        parsed = {
            "Error": {"Code": code, "Message": f"{code} (injected)"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        }
        return AWSResponse("https://injected", status, {}, None), parsed

    def scale_delay(params: dict[str, Any], **_: Any) -> None:
        if params.get("DelaySeconds"):
            params["DelaySeconds"] = max(1, round(params["DelaySeconds"] * VISIBILITY_TIME_SCALE))

    session.events.register("before-call", before_call)
    session.events.register("before-parameter-build.sqs.SendMessage", scale_delay)
