"""Errors that name what went wrong in words a user can act on."""

from __future__ import annotations

from typing import Literal

RetryHint = Literal["throttled", "transient"]
"""Whether trying a failed model call again later may help (ModelCallError.retry)."""


class DracError(Exception):
    """Base of drac's own errors."""


class DocumentError(DracError):
    """A document cannot be processed (corrupt, encrypted, empty, unsupported, too large).

    The message states the reason; callers prefix the file name.
    """


class PlanningError(DracError):
    """A planner answer could not be used."""


class WorkspaceError(DracError):
    """The local workspace is missing, locked or inconsistent."""


class FilterError(DracError, ValueError):
    """A filter drac cannot take; the message says which part and why."""


class MetadataError(DocumentError):
    """Metadata that breaks a limit; the message names where it came from and the key."""


class ModelCallError(DracError, RuntimeError):
    """A model call failed; the message says why.

    `retry` says whether trying again later may help: "throttled" (the service refused for
    rate or quota reasons), "transient" (5xx, timeouts, model not ready), or None (the request
    itself is wrong). A runtime without in-process retries (a Lambda under Step Functions)
    uses it to let the workflow retry with backoff.
    """

    def __init__(self, message: str, *, retry: RetryHint | None = None) -> None:
        super().__init__(message)
        self.retry = retry


class ModelUnreachable(ModelCallError):
    """The model server could not be reached at all (connection refused, unknown host, no
    connection within the connect timeout): every later call would fail the same way, so a
    run stops instead of trying each section or page in turn."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retry="transient")
