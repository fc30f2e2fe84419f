"""Amazon Bedrock models through the Converse API (boto3 is imported only when a client is made)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from drac.clients.images import (
    BEDROCK_MAX_IMAGE_BYTES,
    BEDROCK_MAX_IMAGE_SIDE,
    BEDROCK_MAX_IMAGES,
    fit_png,
)
from drac.clients.retry import Retryable, RetryPolicy, call_with_retries
from drac.models import TokenUsage
from drac.ports import ModelCallError, ModelReply, TextModel, VisionModel

DEFAULT_MODEL_ID = "google.gemma-3-27b-it"
THROTTLING_CODES = frozenset(
    {"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException"}
)
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "ModelTimeoutException",
        "ModelNotReadyException",
        "InternalServerException",
    }
)


def bedrock_config(read_timeout_s: float, attempts: int) -> Any:
    """botocore settings of a `bedrock-runtime` client: a read timeout above the longest
    generation, and `attempts` tries in total (1: the SDK does not retry)."""
    from botocore.config import Config

    return Config(
        read_timeout=read_timeout_s,
        connect_timeout=10,
        retries={"mode": "standard", "total_max_attempts": attempts},
    )


def make_bedrock_runtime(region: str | None = None, read_timeout_s: float = 300.0) -> Any:
    """Return a boto3 `bedrock-runtime` client whose own retries are off (drac retries)."""
    import boto3

    return boto3.client(
        "bedrock-runtime", region_name=region, config=bedrock_config(read_timeout_s, 1)
    )


class _BedrockConverse:
    """Shared Converse call with retries, usage and latency."""

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        *,
        client: Any | None = None,
        region: str | None = None,
        temperature: float = 0.1,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model_id = model_id
        self.name = f"bedrock:{model_id}"
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._client = client if client is not None else make_bedrock_runtime(region)
        self._fold_system = False

    def _converse(self, system: str, content: list[dict[str, Any]], max_tokens: int) -> ModelReply:
        started = time.perf_counter()
        response = call_with_retries(
            lambda: self._once(system, content, max_tokens),
            self.retry,
            what=f"Bedrock {self.model_id}",
            sleep=self._sleep,
        )
        latency_ms = (time.perf_counter() - started) * 1000
        return _reply(response, self.model_id, latency_ms)

    def _once(self, system: str, content: list[dict[str, Any]], max_tokens: int) -> Any:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectionClosedError,
            ConnectTimeoutError,
            EndpointConnectionError,
            ReadTimeoutError,
        )

        request = self._request(system, content, max_tokens)
        try:
            return self._client.converse(**request)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = error.get("Code", "")
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            message = error.get("Message", str(exc))
            if code in RETRYABLE_CODES or status >= 500 or status == 429:
                throttled = code in THROTTLING_CODES or status == 429
                hint = "throttled" if throttled else "transient"
                raise Retryable(f"{code or status}: {message}", hint=hint) from exc
            folding = code == "ValidationException" and "system" in message.lower()
            if folding and system and not self._fold_system:
                self._fold_system = True  # this model takes no system prompt: put it in the text
                return self._once(system, content, max_tokens)
            raise ModelCallError(f"Bedrock {self.model_id}: {code}: {message}") from exc
        except (ReadTimeoutError, ConnectTimeoutError, EndpointConnectionError,
                ConnectionClosedError) as exc:  # fmt: skip
            raise Retryable(f"connection: {exc}", hint="transient") from exc
        except BotoCoreError as exc:
            raise ModelCallError(f"Bedrock {self.model_id}: {exc}") from exc

    def _request(
        self, system: str, content: list[dict[str, Any]], max_tokens: int
    ) -> dict[str, Any]:
        blocks = list(content)
        request: dict[str, Any] = {
            "modelId": self.model_id,
            "inferenceConfig": {"maxTokens": max_tokens, "temperature": self.temperature},
        }
        if system and self._fold_system:
            blocks = [*blocks[:-1], {"text": f"{system}\n\n{blocks[-1]['text']}"}]
        elif system:
            request["system"] = [{"text": system}]
        request["messages"] = [{"role": "user", "content": blocks}]
        return request


def _reply(response: Any, model_id: str, latency_ms: float) -> ModelReply:
    try:
        parts = response["output"]["message"]["content"]
    except (KeyError, TypeError) as exc:
        raise ModelCallError(f"Bedrock {model_id}: answer without a message") from exc
    text = "".join(part.get("text", "") for part in parts if isinstance(part, dict))
    usage = response.get("usage") or {}
    return ModelReply(
        text=text,
        model=model_id,
        usage=TokenUsage(
            input_tokens=int(usage.get("inputTokens", 0)),
            output_tokens=int(usage.get("outputTokens", 0)),
        ),
        latency_ms=latency_ms,
    )


class BedrockVisionModel(_BedrockConverse, VisionModel):
    """Page images to Markdown with a multimodal model on Bedrock (default Gemma 3 27B)."""

    def __init__(self, model_id: str = DEFAULT_MODEL_ID, *, max_tokens: int = 8192, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        self.max_tokens = max_tokens

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        """Return the model's Markdown for a batch of PNG page images."""
        if len(images) > BEDROCK_MAX_IMAGES:
            raise ModelCallError(f"Bedrock takes at most {BEDROCK_MAX_IMAGES} images per call")
        content: list[dict[str, Any]] = [
            {
                "image": {
                    "format": "png",
                    "source": {
                        "bytes": fit_png(
                            png, max_bytes=BEDROCK_MAX_IMAGE_BYTES, max_side=BEDROCK_MAX_IMAGE_SIDE
                        )
                    },
                }
            }
            for png in images
        ]
        content.append({"text": prompt})
        return self._converse(system, content, self.max_tokens)


class BedrockTextModel(_BedrockConverse, TextModel):
    """A text chat model on Bedrock (used by the LLM planner)."""

    def complete(self, system: str, prompt: str, max_tokens: int = 2048) -> ModelReply:
        """Return the model's answer to one prompt."""
        return self._converse(system, [{"text": prompt}], max_tokens)
