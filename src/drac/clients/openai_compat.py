"""OpenAI-compatible chat completions (Ollama, vLLM, llama.cpp) over `drac.clients.http_json`."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drac.clients.errors import HttpStatusError
from drac.clients.http_json import Backoff, JsonClient, says_unsupported
from drac.errors import ModelCallError
from drac.models import TokenUsage
from drac.ports import Exchange, ModelReply, TextModel, VisionModel
from drac.settings import ModelSettings, StructuredMode

DEFAULT_BASE_URL: str = ModelSettings.model_fields["openai_base_url"].default
DEFAULT_TIMEOUT_S: float = ModelSettings.model_fields["model_timeout_s"].default
SCHEMA_NAME = "answer"
_WEAKER: dict[StructuredMode, StructuredMode] = {
    "grammar": "json_schema",
    "json_schema": "json_object",
    "json_object": "none",
}
_REFUSAL_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")
_IMAGE_WORDS = ("image", "multimodal", "vision", "mmproj")
NO_IMAGES = (
    "the server does not accept images: start it with a vision projector (mmproj) or use a "
    "vision model"
)
"""What a conversion says, once, when the server refuses page images."""
LOOP_PENALTY = 0.6
"""The frequency penalty of a page batch asked again after a repetition loop."""


class _ChatCompletions:
    """One POST to {base_url}/chat/completions, retried on 429, 5xx and connection errors."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        temperature: float = 0.1,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`timeout_s` bounds reading one answer; `sleep` waits between attempts."""
        if not model:
            raise ValueError("an OpenAI-compatible model name is required")
        self.model = model
        self.name = f"openai:{model}"
        self.temperature = temperature
        self._http = JsonClient(
            base_url, api_key=api_key, timeout_s=timeout_s, backoff=backoff, sleep=sleep
        )
        self.url = self._http.url("chat/completions")

    def _chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int,
        response_format: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> ModelReply:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": max_tokens,
            "stream": False,
        }
        if response_format is not None:
            body["response_format"] = dict(response_format)
        body.update(extra or {})
        started = time.perf_counter()
        answer = self._http.post("chat/completions", body)
        return _reply(answer, self.model, (time.perf_counter() - started) * 1000)


def response_format(mode: StructuredMode, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `response_format` of a request for answers shaped by `schema` (None in the
    `grammar` mode, whose shape travels in the request's `grammar` field).

    `json_schema` is OpenAI's form, which vLLM, Ollama (0.5 and later) and llama.cpp's server
    enforce by constrained decoding; `json_object` asks for any JSON object (older servers);
    `none` asks for nothing.
    """
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": dict(schema)},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _refuses_format(error: HttpStatusError) -> bool:
    """True when an answer complains about the answer format asked for: a 4xx naming it, or
    a 5xx saying it is not supported (llama-cpp-python's server answers json_schema so)."""
    body = error.body.lower()
    names_it = any(word in body for word in _REFUSAL_WORDS)
    if error.status >= 500:
        return names_it and says_unsupported(body)
    return error.status in (400, 422) and names_it


def refuses_images(error: HttpStatusError) -> bool:
    """True when a server's refusal says it takes no image input (a text-only model)."""
    body = error.body.lower()
    return any(word in body for word in _IMAGE_WORDS) and says_unsupported(body)


def _reply(answer: dict[str, Any], model: str, latency_ms: float) -> ModelReply:
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ModelCallError(f"{model}: answer has no choices[0].message.content") from exc
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    usage = answer.get("usage") or {}
    finish = answer["choices"][0].get("finish_reason")
    return ModelReply(
        text=content or "",
        model=str(answer.get("model") or model),
        finish_reason=str(finish) if finish else None,
        usage=TokenUsage(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
        ),
        latency_ms=latency_ms,
    )


def png_data_url(png: bytes) -> str:
    """Return a PNG as a base64 data URL for an `image_url` content part."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


class OpenAICompatVisionModel(_ChatCompletions, VisionModel):
    """Page images to Markdown with a vision model behind an OpenAI-compatible server."""

    def __init__(self, model: str, *, max_tokens: int = 8192, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.max_tokens = max_tokens

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        """Return the model's Markdown for a batch of PNG page images."""
        return self._convert(system, prompt, images, None)

    def convert_carefully(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        """`convert` with a frequency penalty (OpenAI's field, which vLLM, Ollama and llama.cpp
        take): asked again after an answer that repeated itself until the cap."""
        return self._convert(system, prompt, images, {"frequency_penalty": LOOP_PENALTY})

    def _convert(
        self,
        system: str,
        prompt: str,
        images: Sequence[bytes],
        extra: Mapping[str, Any] | None,
    ) -> ModelReply:
        parts: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": png_data_url(png)}} for png in images
        ]
        parts.append({"type": "text", "text": prompt})
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": parts},
        ]
        try:
            return self._chat(messages, self.max_tokens, extra=extra)
        except HttpStatusError as exc:
            if refuses_images(exc):
                raise ModelCallError(f"{NO_IMAGES} ({self.name}: {exc.body[:200]})") from exc
            raise


class OpenAICompatTextModel(_ChatCompletions, TextModel):
    """A text chat model behind an OpenAI-compatible server (used by the LLM planner).

    With a schema, answers are asked for in the `structured` form; a server that refuses the
    form (HTTP 400 naming it, or a 500 saying it is not supported) is asked again at once in
    the next weaker one, which this client then keeps using: grammar (a GBNF grammar, for
    llama.cpp's server), json_schema, json_object, none. `auto` asks the server what it is
    first (llama.cpp's `/props`): grammar for llama.cpp, else json_schema.
    """

    def __init__(
        self,
        model: str,
        *,
        structured: StructuredMode = "json_schema",
        max_answer_tokens: int = 1024,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, **kwargs)
        self.structured: StructuredMode = structured
        self.max_answer_tokens = max_answer_tokens
        self.server_kind: str | None = None  # "llama.cpp" once the auto probe found one

    @property
    def structured_output(self) -> bool:  # type: ignore[override]
        """True while answers are asked for as a JSON object (`json_schema` enforces the
        schema itself, `json_object` only an object: the prompt then names its shape)."""
        return self.structured != "none"

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
        """Return the model's answer to one prompt, after the `earlier` turns."""
        if self.structured == "auto":
            self.structured = self._probe_mode()
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for asked, answered in earlier:
            messages.append({"role": "user", "content": asked})
            messages.append({"role": "assistant", "content": answered})
        messages.append({"role": "user", "content": prompt})
        while True:
            mode = self.structured
            if mode == "grammar" and grammar is None:
                mode = "json_schema"  # this request has no grammar to send
            shape = response_format(mode, schema) if schema is not None else None
            extra = {"grammar": grammar} if mode == "grammar" and grammar else None
            try:
                return self._chat(messages, max_tokens, shape, extra)
            except HttpStatusError as exc:
                if (shape is None and extra is None) or not _refuses_format(exc):
                    raise
                self.structured = _WEAKER.get(mode, "none")

    def _probe_mode(self) -> StructuredMode:
        """grammar when the server is llama.cpp's (its `/props` names its generation
        settings), else json_schema, the form most servers take."""
        root = self._http.base_url.removesuffix("/v1")
        props = self._http.probe(f"{root}/props")
        if props is not None and "default_generation_settings" in props:
            self.server_kind = "llama.cpp"
            return "grammar"
        return "json_schema"
