"""The `bedrock-runtime` client drac uses: its botocore Config (timeouts, botocore's own
retries) and what its errors mean for retrying (ModelCallError with a `retry` hint).

Shared by the Converse clients, the Titan embedder and the Lambda runtime, so all build the
client the same way and give the same hints. boto3 and botocore are imported only when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drac.errors import ModelCallError, ModelUnreachable, RetryHint

if TYPE_CHECKING:
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

CONNECT_TIMEOUT_S = 10.0

THROTTLED_CODES = frozenset(
    {"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException"}
)
TRANSIENT_CODES = frozenset(
    {
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelTimeoutException",
        "ModelNotReadyException",  # answered with HTTP 429, yet not a quota matter
    }
)


def bedrock_config(
    read_timeout_s: float, attempts: int, *, connect_timeout_s: float = CONNECT_TIMEOUT_S
) -> Config:
    """The botocore Config of a `bedrock-runtime` client: a read timeout above the longest
    expected generation, and `attempts` tries in all in botocore's standard retry mode
    (1: the SDK retries nothing, for callers that own retries, such as Step Functions)."""
    from botocore.config import Config

    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    return Config(
        read_timeout=read_timeout_s,
        connect_timeout=connect_timeout_s,
        retries={"mode": "standard", "total_max_attempts": attempts},
    )


def make_bedrock_runtime(region: str | None, config: Config) -> Any:
    """A boto3 `bedrock-runtime` client in `region` (None: boto3's default) with `config`."""
    import boto3

    return boto3.client("bedrock-runtime", region_name=region, config=config)


def retry_hint(error: BotoCoreError | ClientError) -> RetryHint | None:
    """Whether trying again later may help after this botocore error.

    "throttled" for rate and quota refusals, "transient" for 5xx, model timeouts, a model not
    ready and network failures (timeouts, refused or closed connections), None otherwise
    (validation, access denied, missing credentials, ...).
    """
    from botocore.exceptions import (
        ClientError,
        ConnectionClosedError,
        ConnectTimeoutError,
        EndpointConnectionError,
        ReadTimeoutError,
    )

    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in THROTTLED_CODES:
            return "throttled"
        if code in TRANSIENT_CODES:
            return "transient"
        if status == 429:
            return "throttled"
        return "transient" if status >= 500 else None
    network = (ReadTimeoutError, ConnectTimeoutError, EndpointConnectionError,
               ConnectionClosedError)  # fmt: skip
    return "transient" if isinstance(error, network) else None


def model_call_error(error: BotoCoreError | ClientError, what: str) -> ModelCallError:
    """The ModelCallError for a failed call named `what`: error code, message, how many
    attempts botocore made, and the retry hint of `retry_hint`."""
    from botocore.exceptions import (
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        ReadTimeoutError,
    )

    hint = retry_hint(error)
    if isinstance(error, (EndpointConnectionError, ConnectTimeoutError)):
        return ModelUnreachable(f"{what}: endpoint unreachable: {error}")
    if isinstance(error, ReadTimeoutError):
        return ModelCallError(
            f"{what}: no answer in time (DRAC_MODEL_TIMEOUT_S): {error}", retry=hint
        )
    if not isinstance(error, ClientError):
        return ModelCallError(f"{what}: {error}", retry=hint)
    details = error.response.get("Error", {})
    code = details.get("Code") or error.response.get("ResponseMetadata", {}).get(
        "HTTPStatusCode", "error"
    )
    reason = f"{code}: {details.get('Message') or error}"
    attempts = 1 + int(error.response.get("ResponseMetadata", {}).get("RetryAttempts") or 0)
    if attempts > 1:
        return ModelCallError(f"{what} failed after {attempts} attempts: {reason}", retry=hint)
    return ModelCallError(f"{what}: {reason}", retry=hint)
