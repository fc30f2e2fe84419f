"""Bounded retries with exponential backoff and full jitter."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from drac.ports import ModelCallError, RetryHint

T = TypeVar("T")


class RetryPolicy(BaseModel):
    """How often and how long to wait before retrying a retryable failure."""

    model_config = ConfigDict(frozen=True)

    max_attempts: int = Field(default=6, ge=1, le=20)
    base_delay_s: float = Field(default=1.0, ge=0)
    max_delay_s: float = Field(default=30.0, ge=0)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Return the full-jitter wait after failed attempt number `attempt` (1-based)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        return (rng or random).uniform(0.0, ceiling)


class Retryable(Exception):
    """Raised inside a call to say: this failure may succeed if tried again."""

    def __init__(
        self,
        reason: str,
        retry_after_s: float | None = None,
        hint: RetryHint = "transient",
    ) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s
        self.hint: RetryHint = hint


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Return `call()`, retrying on Retryable; ModelCallError once the attempts are spent."""
    for attempt in range(1, policy.max_attempts + 1):
        try:
            return call()
        except Retryable as exc:
            if attempt == policy.max_attempts:
                raise ModelCallError(
                    f"{what} failed after {attempt} attempts: {exc}", retry=exc.hint
                ) from exc
            wait = policy.delay(attempt)
            if exc.retry_after_s is not None:
                wait = max(wait, min(exc.retry_after_s, policy.max_delay_s))
            sleep(wait)
    raise ModelCallError(f"{what} failed")  # unreachable: the loop returns or raises
