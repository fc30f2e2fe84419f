"""Errors a Lambda raises so that Step Functions can tell retryable from final failures.

The Lambda runtime reports an exception's class name as the error type, which is what the
state machines' `Retry.ErrorEquals` match: keep these names stable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from drac.errors import DracError
from drac.ports import ModelCallError

THROTTLING_CODES = frozenset(
    {"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException", "429"}
)


class ModelThrottled(DracError):
    """Bedrock throttled the call after in-process retries; Step Functions backs off."""


class TransientError(DracError):
    """A temporary failure (timeouts, 5xx) worth a few more tries."""


def is_throttling(error: BaseException) -> bool:
    """Return True if error, or any exception in its cause chain, says throttled."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        response = getattr(current, "response", None)
        if isinstance(response, dict):
            code = str(response.get("Error", {}).get("Code", ""))
            if code in THROTTLING_CODES:
                return True
        text = str(current)
        if any(code in text for code in THROTTLING_CODES if code != "429"):
            return True
        current = current.__cause__ or current.__context__
    return False


@contextmanager
def model_throttling_retried() -> Iterator[None]:
    """Turn a throttled model call inside the block into ModelThrottled (retried with backoff)."""
    try:
        yield
    except ModelCallError as exc:
        if is_throttling(exc):
            raise ModelThrottled(str(exc)) from exc
        raise
