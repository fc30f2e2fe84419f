"""Amazon Bedrock models through the Converse API (boto3 is imported only when a client is made)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from drac.clients import DEFAULT_ATTEMPTS
from drac.clients.bedrock_runtime import bedrock_config, make_bedrock_runtime, model_call_error
from drac.clients.images import (
    BEDROCK_MAX_IMAGE_BYTES,
    BEDROCK_MAX_IMAGE_SIDE,
    BEDROCK_MAX_IMAGES,
    fit_png,
)
from drac.errors import ModelCallError
from drac.models import TokenUsage
from drac.ports import Exchange, ModelReply, TextModel, VisionModel
from drac.settings import BEDROCK_CONVERSION_MODEL, ModelSettings

if TYPE_CHECKING:
    from botocore.exceptions import ClientError

DEFAULT_MODEL_ID = BEDROCK_CONVERSION_MODEL
DEFAULT_READ_TIMEOUT_S: float = ModelSettings.model_fields["model_timeout_s"].default
ANSWER_TOOL = "answer"
ToolUse = Literal["forced", "any", "off"]
_WEAKER_TOOL_USE: dict[ToolUse, ToolUse] = {"forced": "any", "any": "off"}


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

    def _converse(
        self,
        system: str,
        content: list[dict[str, Any]],
        max_tokens: int,
        *,
        earlier: Sequence[Exchange] = (),
        tool_config: Callable[[], dict[str, Any] | None] = lambda: None,
        weaken_tools: Callable[[ClientError], bool] = lambda _error: False,
    ) -> ModelReply:
        """One Converse call; a model that refuses the system prompt, or the tool use asked
        for (`weaken_tools` steps down and says whether to ask again), is asked again."""
        from botocore.exceptions import BotoCoreError, ClientError

        started = time.perf_counter()
        try:
            while True:
                request = self._request(system, content, max_tokens, earlier, tool_config())
                try:
                    response = self._client.converse(**request)
                    break
                except ClientError as exc:
                    if system and not self._fold_system and _rejects_system_prompt(exc):
                        self._fold_system = True  # no system prompt: put it in the text
                    elif not weaken_tools(exc):
                        raise
        except (BotoCoreError, ClientError) as exc:
            raise model_call_error(exc, f"Bedrock {self.model_id}") from exc
        latency_ms = (time.perf_counter() - started) * 1000
        return _reply(response, self.model_id, latency_ms)

    def _request(
        self,
        system: str,
        content: list[dict[str, Any]],
        max_tokens: int,
        earlier: Sequence[Exchange] = (),
        tool_config: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        blocks = list(content)
        request: dict[str, Any] = {
            "modelId": self.model_id,
            "inferenceConfig": {"maxTokens": max_tokens, "temperature": self.temperature},
        }
        messages: list[dict[str, Any]] = []
        for asked, answered in earlier:
            messages.append({"role": "user", "content": [{"text": asked}]})
            messages.append({"role": "assistant", "content": [{"text": answered}]})
        if system and self._fold_system:
            if messages:
                first = messages[0]["content"][0]["text"]
                messages[0] = {"role": "user", "content": [{"text": f"{system}\n\n{first}"}]}
            else:
                blocks = [*blocks[:-1], {"text": f"{system}\n\n{blocks[-1]['text']}"}]
        elif system:
            request["system"] = [{"text": system}]
        request["messages"] = [*messages, {"role": "user", "content": blocks}]
        if tool_config is not None:
            request["toolConfig"] = tool_config
        return request


def _rejects_system_prompt(error: ClientError) -> bool:
    details = error.response.get("Error", {})
    message = str(details.get("Message", "")).lower()
    return details.get("Code") == "ValidationException" and "system" in message


def _rejects_tool_use(error: ClientError) -> bool:
    details = error.response.get("Error", {})
    message = str(details.get("Message", "")).lower()
    return details.get("Code") == "ValidationException" and "tool" in message


def _reply(response: Any, model_id: str, latency_ms: float) -> ModelReply:
    try:
        parts = response["output"]["message"]["content"]
    except (KeyError, TypeError) as exc:
        raise ModelCallError(f"Bedrock {model_id}: answer without a message") from exc
    tool_inputs = [
        part["toolUse"].get("input")
        for part in parts
        if isinstance(part, dict) and isinstance(part.get("toolUse"), dict)
    ]
    if tool_inputs:  # the answer tool's input is the answer
        text = json.dumps(tool_inputs[0])
    else:
        text = "".join(part.get("text", "") for part in parts if isinstance(part, dict))
    usage = response.get("usage") or {}
    stop = response.get("stopReason")
    return ModelReply(
        text=text,
        model=model_id,
        finish_reason=str(stop) if stop else None,
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
    """A text chat model on Bedrock (used by the LLM planner).

    With a schema, the answer is asked for as the input of one tool whose input schema it is:
    forced by name (`toolChoice.tool`, which Claude 3 and Nova models take), else any tool
    (`toolChoice.any`), else none (a model without tool use answers in text). A model that
    refuses one step is asked again at once with the next, which this client then keeps.
    """

    def __init__(
        self, model_id: str = DEFAULT_MODEL_ID, *, max_answer_tokens: int = 1024, **kwargs: Any
    ) -> None:
        super().__init__(model_id, **kwargs)
        self.max_answer_tokens = max_answer_tokens
        self.tool_use: ToolUse = "forced"

    @property
    def structured_output(self) -> bool:  # type: ignore[override]
        """True while answers are asked for through a tool's input schema."""
        return self.tool_use != "off"

    def complete(
        self,
        system: str,
        prompt: str,
        max_tokens: int = 2048,
        *,
        schema: Mapping[str, Any] | None = None,
        grammar: str | None = None,
        earlier: Sequence[Exchange] = (),
    ) -> ModelReply:
        """Return the model's answer to one prompt, after the `earlier` turns (Converse takes
        no grammar: the schema is the forced tool's input schema)."""

        def tool_config() -> dict[str, Any] | None:
            if schema is None or self.tool_use == "off":
                return None
            return answer_tool_config(schema, self.tool_use)

        def weaken(error: ClientError) -> bool:
            if schema is None or self.tool_use == "off" or not _rejects_tool_use(error):
                return False
            self.tool_use = _WEAKER_TOOL_USE.get(self.tool_use, "off")
            return True

        return self._converse(
            system, [{"text": prompt}], max_tokens,
            earlier=earlier, tool_config=tool_config, weaken_tools=weaken,
        )  # fmt: skip


def answer_tool_config(schema: Mapping[str, Any], tool_use: ToolUse) -> dict[str, Any]:
    """The Converse `toolConfig` asking for an answer as the input of the `answer` tool."""
    choice: dict[str, Any] = (
        {"tool": {"name": ANSWER_TOOL}} if tool_use == "forced" else {"any": {}}
    )
    return {
        "tools": [
            {
                "toolSpec": {
                    "name": ANSWER_TOOL,
                    "description": "Give the answer: the chunks as arrays of element IDs.",
                    "inputSchema": {"json": dict(schema)},
                }
            }
        ],
        "toolChoice": choice,
    }
