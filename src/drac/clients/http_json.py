"""JSON POSTs to OpenAI-compatible servers (chat completions, embeddings): one httpx client
with timeouts, and bounded tenacity retries on 429, 5xx and connection errors."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from tenacity import RetryCallState, RetryError, Retrying, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_base
from tenacity.wait import wait_base, wait_random_exponential

from drac.clients import DEFAULT_ATTEMPTS
from drac.clients.errors import HttpStatusError
from drac.errors import ModelCallError, ModelUnreachable, RetryHint

CONNECT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Backoff:
    """Bounded retries: `attempts` tries in all, full-jitter exponential waits starting at
    `base_s` and never longer than `max_s` (which also caps a server's Retry-After)."""

    attempts: int = DEFAULT_ATTEMPTS
    base_s: float = 1.0
    max_s: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.base_s < 0 or self.max_s < 0:
            raise ValueError("Backoff needs attempts >= 1 and non-negative waits")


_UNSUPPORTED = re.compile(
    r"not (?:be )?supported|unsupported|does not support|doesn't support|not implemented|"
    r"cannot handle|no (?:vision|multimodal)|mmproj",
    re.IGNORECASE,
)
"""Words of a server answer that says a feature of the request is not supported: retrying the
same request cannot change that, whatever the status (llama.cpp servers answer it with 500)."""


def says_unsupported(body: str) -> bool:
    """True when a server's error body says something in the request is not supported."""
    return bool(_UNSUPPORTED.search(body))


class _Retryable(ModelCallError):
    """A failure worth another attempt, with the wait the server asked for (if any)."""

    def __init__(
        self,
        message: str,
        *,
        retry: RetryHint,
        retry_after_s: float | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message, retry=retry)
        self.retry_after_s = retry_after_s
        self.unreachable = unreachable


class _BackoffOrRetryAfter(wait_base):
    """Full-jitter exponential backoff, lengthened to a server's Retry-After (capped)."""

    def __init__(self, backoff: Backoff) -> None:
        self._jitter = wait_random_exponential(multiplier=backoff.base_s, max=backoff.max_s)
        self._cap = backoff.max_s

    def __call__(self, retry_state: RetryCallState) -> float:
        delay = float(self._jitter(retry_state))
        error = retry_state.outcome.exception() if retry_state.outcome else None
        asked = getattr(error, "retry_after_s", None)
        if asked is not None:
            delay = max(delay, min(asked, self._cap))
        return delay


class JsonClient:
    """POSTs JSON to `{base_url}/{path}` and returns the JSON object answered.

    429 is retried as "throttled"; 5xx, timeouts and connection failures as "transient",
    except a 5xx whose body says something asked for is not supported; other statuses are
    not retried. Once the attempts are spent, or on an answer that cannot
    be used, ModelCallError carries the matching `retry` hint (None when retrying cannot help).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`timeout_s` bounds each read and write; `sleep` waits between attempts."""
        self.base_url = base_url.rstrip("/")
        self.backoff = backoff or Backoff()
        self.timeout_s = timeout_s
        self._unreachable: str | None = None  # why the server could not be reached, once seen
        self._sleep = sleep
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            transport=transport,
        )

    def url(self, path: str) -> str:
        """The full URL of an endpoint path such as `chat/completions`."""
        return f"{self.base_url}/{path.lstrip('/')}"

    def request(self, path: str, body: Mapping[str, Any]) -> httpx.Request:
        """The HTTP request that `post` sends."""
        return self._http.build_request("POST", self.url(path), json=dict(body))

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON object the server answers to `body`, retrying per `backoff`.

        A server that could not be reached in all the attempts raises ModelUnreachable, and
        so does every later call of this client at once, without trying again.
        """
        if self._unreachable is not None:
            raise ModelUnreachable(self._unreachable)
        request = self.request(path, body)
        retrying = Retrying(
            stop=stop_after_attempt(self.backoff.attempts) | stop_unreachable,
            wait=_BackoffOrRetryAfter(self.backoff),
            retry=retry_if_exception(lambda error: isinstance(error, _Retryable)),
            sleep=self._sleep,
        )
        try:
            return retrying(self._send, request)
        except RetryError as exc:
            last = exc.last_attempt.exception()
            hint = last.retry if isinstance(last, ModelCallError) else "transient"
            tries = exc.last_attempt.attempt_number
            plural = "s" if tries > 1 else ""
            message = f"{request.url} failed after {tries} attempt{plural}: {last}"
            if isinstance(last, _Retryable) and last.unreachable:
                self._unreachable = f"model server unreachable: {message}"
                raise ModelUnreachable(self._unreachable) from last
            raise ModelCallError(message, retry=hint) from last

    def probe(self, url: str) -> dict[str, Any] | None:
        """The JSON object a GET of `url` answers, once, without retries; None when it
        answers anything else or cannot be reached (a probe of what a server is)."""
        try:
            response = self._http.get(url, timeout=httpx.Timeout(10.0))
            answer = response.json() if response.is_success else None
        except (httpx.HTTPError, ValueError):
            return None
        return answer if isinstance(answer, dict) else None

    def close(self) -> None:
        """Close the connections this client keeps open."""
        self._http.close()

    def _send(self, request: httpx.Request) -> dict[str, Any]:
        try:
            response = self._http.send(request)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise _Retryable(f"connection: {exc!r}", retry="transient", unreachable=True) from exc
        except httpx.TimeoutException as exc:
            raise _Retryable(
                f"no answer within {self.timeout_s:g} s (DRAC_MODEL_TIMEOUT_S): {exc!r}",
                retry="transient",
            ) from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise _Retryable(f"connection: {exc!r}", retry="transient") from exc
        except httpx.HTTPError as exc:  # a malformed URL, an unsupported scheme, ...
            raise ModelCallError(f"{request.url}: {exc}") from exc
        status = response.status_code
        if not response.is_success:
            detail = f"HTTP {status}: {response.text[:300]}"
            if status == 429:
                raise _Retryable(detail, retry="throttled", retry_after_s=_retry_after(response))
            if status >= 500 and not says_unsupported(response.text[:2000]):
                raise _Retryable(detail, retry="transient", retry_after_s=_retry_after(response))
            raise HttpStatusError(
                f"{request.url}: {detail}", status=status, body=response.text[:2000]
            )
        try:
            answer = response.json()
        except ValueError as exc:
            raise ModelCallError(f"{request.url}: answer is not JSON") from exc
        if not isinstance(answer, dict):
            raise ModelCallError(f"{request.url}: answer is not a JSON object")
        return answer


UNREACHABLE_ATTEMPTS = 3
"""Tries in all for a server that refuses connections (a starting server that accepts them
answers 503, which has the full backoff): seconds, not minutes, before a run is told."""


class _StopWhenUnreachable(stop_base):
    def __call__(self, retry_state: RetryCallState) -> bool:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        unreachable = isinstance(error, _Retryable) and error.unreachable
        return unreachable and retry_state.attempt_number >= UNREACHABLE_ATTEMPTS


stop_unreachable = _StopWhenUnreachable()


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asks to wait: `Retry-After` as seconds or as an HTTP date."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())
