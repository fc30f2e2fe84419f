"""OpenAI-compatible chat completions (Ollama, vLLM, llama.cpp) over the standard library."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from drac.clients.retry import Retryable, RetryPolicy, call_with_retries
from drac.models import TokenUsage
from drac.ports import ModelCallError, ModelReply, TextModel, VisionModel


class _ChatCompletions:
    """One POST to {base_url}/chat/completions with retries on 429, 5xx and connection errors."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "http://localhost:11434/v1",
        api_key: str | None = None,
        temperature: float = 0.1,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model:
            raise ValueError("an OpenAI-compatible model name is required")
        self.model = model
        self.name = f"openai:{model}"
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self._sleep = sleep

    def _chat(self, messages: list[dict[str, Any]], max_tokens: int) -> ModelReply:
        body = json.dumps(
            {
                "model": self.model,
                "messages": messages,
                "temperature": self.temperature,
                "max_tokens": max_tokens,
                "stream": False,
            }
        ).encode("utf-8")
        started = time.perf_counter()
        answer = call_with_retries(
            lambda: self._post(body),
            self.retry,
            what=f"{self.url} ({self.model})",
            sleep=self._sleep,
        )
        return _reply(answer, self.model, (time.perf_counter() - started) * 1000)

    def _post(self, body: bytes) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace")
            if exc.code == 429 or exc.code >= 500:
                raise Retryable(f"HTTP {exc.code}: {detail}", _retry_after(exc)) from exc
            raise ModelCallError(f"{self.url}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise Retryable(f"connection: {exc}") from exc
        try:
            answer = json.loads(raw)
        except ValueError as exc:
            raise ModelCallError(f"{self.url}: answer is not JSON") from exc
        if not isinstance(answer, dict):
            raise ModelCallError(f"{self.url}: answer is not a JSON object")
        return answer


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    value = error.headers.get("Retry-After") if error.headers else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _reply(answer: dict[str, Any], model: str, latency_ms: float) -> ModelReply:
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ModelCallError(f"{model}: answer has no choices[0].message.content") from exc
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    usage = answer.get("usage") or {}
    return ModelReply(
        text=content or "",
        model=str(answer.get("model") or model),
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
        parts: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": png_data_url(png)}} for png in images
        ]
        parts.append({"type": "text", "text": prompt})
        messages = [{"role": "system", "content": system}, {"role": "user", "content": parts}]
        return self._chat(messages, self.max_tokens)


class OpenAICompatTextModel(_ChatCompletions, TextModel):
    """A text chat model behind an OpenAI-compatible server (used by the LLM planner)."""

    def complete(self, system: str, prompt: str, max_tokens: int = 2048) -> ModelReply:
        """Return the model's answer to one prompt."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        return self._chat(messages, max_tokens)
