"""Errors a Lambda raises so that Step Functions can tell retryable from final failures.

The Lambda runtime reports an exception's class name as the error type, which is what the
state machines' `Retry.ErrorEquals` match: keep these names stable.

Every AWS call of a Step Functions task goes through botocore's own retries first (legacy
mode: a few attempts within seconds); a throttle or a 5xx that outlasts them would reach
Step Functions as a `ClientError` no Retry matches, and the Catch would fail the document.
`step_functions_task` turns such errors into `TransientError`, which every task retries for
hours (40 attempts, full jitter, at most 15 minutes apart).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from drac.errors import DracError, ModelCallError


class ModelThrottled(DracError):
    """A model refused the call for rate or quota reasons; Step Functions backs off."""


class TransientError(DracError):
    """A temporary failure (5xx, timeouts, model not ready); Step Functions tries again."""


THROTTLING_CODES = frozenset(
    {
        # the throttling errors the AWS SDKs retry (AWS SDKs and Tools Reference Guide,
        # "Retry behavior"), which cover every service this project calls
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
        # S3 "503 Slow Down" and DynamoDB's "RequestLimitExceeded" are above; SQS and KMS
        # name theirs so (SQS API Reference, common errors; KMS "ThrottlingException")
        "KmsThrottled",
    }
)
TRANSIENT_CODES = frozenset(
    {
        "RequestTimeout",
        "RequestTimeoutException",
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "InternalServerException",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "ServiceException",
        "IDPCommunicationError",
    }
)
TRANSIENT_STATUSES = frozenset({500, 502, 503, 504})


def is_transient_aws_error(exc: BaseException) -> bool:
    """True for an AWS error that may succeed later: a throttle, a 5xx, a request timeout,
    or a connection that failed or was closed before an answer (botocore's network errors)."""
    from botocore.exceptions import (
        ClientError,
        ConnectionClosedError,
        ConnectTimeoutError,
        EndpointConnectionError,
        ReadTimeoutError,
    )

    unreachable = (
        EndpointConnectionError,
        ConnectTimeoutError,
        ReadTimeoutError,
        ConnectionClosedError,
    )
    if isinstance(exc, unreachable):
        return True
    if not isinstance(exc, ClientError):
        return False
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in THROTTLING_CODES or code in TRANSIENT_CODES or status in TRANSIENT_STATUSES


@contextmanager
def aws_errors_retried() -> Iterator[None]:
    """Turn a transient AWS error (`is_transient_aws_error`) into TransientError; anything
    else passes through unchanged."""
    try:
        yield
    except TransientError:
        raise
    except Exception as exc:
        if is_transient_aws_error(exc):
            raise TransientError(f"{type(exc).__name__}: {exc}") from exc
        raise


Handler = TypeVar("Handler", bound=Callable[..., Any])


def step_functions_task(handler: Handler) -> Handler:
    """Wrap the handler of a function Step Functions invokes: a transient AWS error of any
    call it makes becomes TransientError, which the task's Retry backs off for hours."""

    @functools.wraps(handler)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with aws_errors_retried():
            return handler(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


@contextmanager
def retried_by_step_functions() -> Iterator[None]:
    """Turn a model call failure that may succeed later into the error the state machines
    retry: ModelThrottled or TransientError. Other failures pass through unchanged."""
    try:
        yield
    except ModelCallError as exc:
        if exc.retry == "throttled":
            raise ModelThrottled(str(exc)) from exc
        if exc.retry == "transient":
            raise TransientError(str(exc)) from exc
        raise


class DimensionChanged(DracError, ValueError):
    """The index holds vectors of another dimension than the deployment's embeddings."""


class Forbidden(DracError):
    """The caller may not do what it asked (HTTP 403, or a refused re-plan)."""


class ObjectTooLarge(DracError, ValueError):
    """An object larger than a download may write."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        """Name the object, its size and the limit (bytes)."""
        super().__init__(f"{key} is {size} bytes, more than {limit}")
        self.size = size
