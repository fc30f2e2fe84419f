"""Errors a Lambda raises so that Step Functions can tell retryable from final failures.

The Lambda runtime reports an exception's class name as the error type, which is what the
state machines' `Retry.ErrorEquals` match: keep these names stable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from drac.errors import DracError
from drac.ports import ModelCallError


class ModelThrottled(DracError):
    """A model refused the call for rate or quota reasons; Step Functions backs off."""


class TransientError(DracError):
    """A temporary failure (5xx, timeouts, model not ready); Step Functions tries again."""


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
