"""Amazon Bedrock models through the Converse API (boto3 is imported only when a client is made)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from drac.clients import DEFAULT_ATTEMPTS
from drac.clients.bedrock_runtime import bedrock_config, make_bedrock_runtime, model_call_error
from drac.clients.images import (
    BEDROCK_MAX_IMAGE_BYTES,
    BEDROCK_MAX_IMAGE_SIDE,
    BEDROCK_MAX_IMAGES,
    fit_png,
)
from drac.models import TokenUsage
from drac.ports import ModelCallError, ModelReply, TextModel, VisionModel
from drac.settings import BEDROCK_CONVERSION_MODEL, Settings

if TYPE_CHECKING:
    from botocore.exceptions import ClientError

DEFAULT_MODEL_ID = BEDROCK_CONVERSION_MODEL
DEFAULT_READ_TIMEOUT_S: float = Settings.model_fields["model_timeout_s"].default


class _BedrockConverse:
    """One Converse call (botocore retries per the client's Config), usage and latency."""

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        *,
        client: Any | None = None,
        region: str | None = None,
        temperature: float = 0.1,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
        attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        """Use `client` as given, else make one from `region`, `read_timeout_s`, `attempts`."""
        self.model_id = model_id
        self.name = f"bedrock:{model_id}"
        self.temperature = temperature
        if client is None:
            client = make_bedrock_runtime(region, bedrock_config(read_timeout_s, attempts))
        self._client = client
        self._fold_system = False

    def _converse(self, system: str, content: list[dict[str, Any]], max_tokens: int) -> ModelReply:
        from botocore.exceptions import BotoCoreError, ClientError

        started = time.perf_counter()
        try:
            try:
                response = self._client.converse(**self._request(system, content, max_tokens))
            except ClientError as exc:
                if not system or self._fold_system or not _rejects_system_prompt(exc):
                    raise
                self._fold_system = True  # this model takes no system prompt: put it in the text
                response = self._client.converse(**self._request(system, content, max_tokens))
        except (BotoCoreError, ClientError) as exc:
            raise model_call_error(exc, f"Bedrock {self.model_id}") from exc
        latency_ms = (time.perf_counter() - started) * 1000
        return _reply(response, self.model_id, latency_ms)

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


def _rejects_system_prompt(error: ClientError) -> bool:
    details = error.response.get("Error", {})
    message = str(details.get("Message", "")).lower()
    return details.get("Code") == "ValidationException" and "system" in message


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
