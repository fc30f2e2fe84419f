"""Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, ...) as an Embedder."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from drac.clients.http_json import Backoff, JsonClient
from drac.errors import ModelCallError
from drac.models import TokenUsage
from drac.ports import Embedder


class OpenAIEmbedder(Embedder):
    """POSTs batches of texts to `{base_url}/embeddings`, retried on 429, 5xx and connection
    errors like the chat client (`drac.clients.http_json`).

    `base_url` includes the version path, e.g. `http://localhost:11434/v1`. The vector size is
    learnt from the first answer unless given. `usage.prompt_tokens` accumulates in `usage`.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        dimension: int | None = None,
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`timeout` bounds reading one answer; `sleep` waits between attempts."""
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.api_key = api_key
        self.batch_size = batch_size
        self.timeout = timeout
        self._dimension = dimension
        self._http = JsonClient(
            self.base_url, api_key=api_key, timeout_s=timeout, backoff=backoff, sleep=sleep
        )
        self.usage = TokenUsage()
        self.latency_ms = 0.0

    @property
    def dimension(self) -> int:  # type: ignore[override]
        """Vector size (0 until known: given, or learnt from the first answer)."""
        return self._dimension or 0

    def request(self, texts: Sequence[str]) -> httpx.Request:
        """The HTTP request for one batch."""
        return self._http.request("embeddings", self._body(texts))

    def _body(self, texts: Sequence[str]) -> dict[str, Any]:
        return {"model": self.model, "input": list(texts)}

    def _post(self, texts: Sequence[str]) -> dict[str, Any]:
        started = time.perf_counter()
        payload = self._http.post("embeddings", self._body(texts))
        self.latency_ms += (time.perf_counter() - started) * 1000
        return payload

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text, in order (answers are re-ordered by their `index`)."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            payload = self._post(batch)
            data = payload.get("data")
            if not isinstance(data, list) or len(data) != len(batch):
                raise ModelCallError(
                    f"embeddings endpoint returned {len(data or [])} vectors for {len(batch)} texts"
                )
            try:
                ordered = [
                    [float(x) for x in item["embedding"]]
                    for item in sorted(data, key=lambda item: item.get("index", 0))
                ]
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                raise ModelCallError("embeddings endpoint answer has no usable vectors") from exc
            for vector in ordered:
                if self._dimension is None:
                    self._dimension = len(vector)
                if len(vector) != self._dimension:
                    raise ModelCallError("embeddings endpoint returned vectors of mixed sizes")
                vectors.append(vector)
            tokens = int((payload.get("usage") or {}).get("prompt_tokens", 0))
            self.usage = self.usage + TokenUsage(input_tokens=tokens)
        return vectors
