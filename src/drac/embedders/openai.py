"""Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, ...) as an Embedder."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from drac.models import TokenUsage
from drac.ports import Embedder, ModelCallError


class OpenAIEmbedder(Embedder):
    """POSTs batches of texts to `{base_url}/embeddings` with the standard library only.

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
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.api_key = api_key
        self.batch_size = batch_size
        self.timeout = timeout
        self._dimension = dimension
        self.usage = TokenUsage()
        self.latency_ms = 0.0

    @property
    def dimension(self) -> int:  # type: ignore[override]
        """Vector size (0 until known: given, or learnt from the first answer)."""
        return self._dimension or 0

    def request(self, texts: Sequence[str]) -> urllib.request.Request:
        """The HTTP request for one batch."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = json.dumps({"model": self.model, "input": list(texts)}).encode("utf-8")
        return urllib.request.Request(
            f"{self.base_url}/embeddings", data=body, headers=headers, method="POST"
        )

    def _post(self, texts: Sequence[str]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(self.request(texts), timeout=self.timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:300]
            raise ModelCallError(f"embeddings endpoint answered {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ValueError) as exc:
            raise ModelCallError(f"embeddings endpoint {self.base_url} failed: {exc}") from exc
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
                raise ModelCallError(f"embeddings endpoint returned {len(data or [])} vectors "
                                     f"for {len(batch)} texts")
            ordered = sorted(data, key=lambda item: item.get("index", 0))
            for item in ordered:
                vector = [float(x) for x in item["embedding"]]
                if self._dimension is None:
                    self._dimension = len(vector)
                if len(vector) != self._dimension:
                    raise ModelCallError("embeddings endpoint returned vectors of mixed sizes")
                vectors.append(vector)
            tokens = int((payload.get("usage") or {}).get("prompt_tokens", 0))
            self.usage = self.usage + TokenUsage(input_tokens=tokens)
        return vectors
