"""Which AWS errors a Step Functions task turns into TransientError (retried for hours) and
which it lets fail: throttles, 5xx and lost connections are retried, a refused or invalid
request is not."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import (
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from drac.aws.errors import TransientError, is_transient_aws_error, step_functions_task
from tests.fakes import client_error

RETRIED = [
    client_error("SlowDown", 503, "GetObject"),
    client_error("InternalError", 500, "PutObject"),
    client_error("ProvisionedThroughputExceededException", 400, "PutItem"),
    client_error("ThrottlingException", 400, "UpdateItem"),
    client_error("RequestLimitExceeded", 400, "Query"),
    client_error("ThrottlingException", 400, "ListExecutions"),
    client_error("Throttling", 400, "AssumeRole"),
    client_error("RequestThrottled", 400, "SendMessage"),
    client_error("ServiceUnavailable", 503, "GetItem"),
    client_error("SomethingNew", 502, "GetItem"),  # any 502, 503, 504 or 500
    EndpointConnectionError(endpoint_url="https://s3"),
    ReadTimeoutError(endpoint_url="https://dynamodb"),
    ConnectionClosedError(endpoint_url="https://states"),
]
FINAL = [
    client_error("AccessDenied", 403, "GetObject"),
    client_error("NoSuchKey", 404, "GetObject"),
    client_error("ConditionalCheckFailedException", 400, "PutItem"),
    client_error("ValidationException", 400, "PutItem"),
    client_error("ExecutionAlreadyExists", 400, "StartExecution"),
    ValueError("a bug"),
]


@pytest.mark.parametrize("error", RETRIED, ids=lambda e: type(e).__name__ + str(e)[:30])
def test_a_transient_aws_error_becomes_the_retried_error(error: Exception) -> None:
    assert is_transient_aws_error(error)

    @step_functions_task
    def handler(event: Any, context: Any) -> None:
        raise error

    with pytest.raises(TransientError) as raised:
        handler({}, None)
    assert raised.value.__cause__ is error


@pytest.mark.parametrize("error", FINAL, ids=lambda e: type(e).__name__ + str(e)[:30])
def test_a_permanent_error_passes_through_unchanged(error: Exception) -> None:
    assert not is_transient_aws_error(error)

    @step_functions_task
    def handler(event: Any, context: Any) -> None:
        raise error

    with pytest.raises(type(error)) as raised:
        handler({}, None)
    assert raised.value is error


def test_every_step_functions_task_handler_is_wrapped() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    # not Step Functions tasks (kb_transform is called by Bedrock Knowledge Bases)
    consumers = {"starter", "delete", "retrieve", "index_setup", "kb_transform"}
    unwrapped = [
        path.parent.name
        for path in sorted((root / "functions").glob("*/handler.py"))
        if path.parent.name not in consumers
        and "@step_functions_task\ndef handler(" not in path.read_text()
    ]
    assert unwrapped == []
