"""Amazon Titan Text Embeddings V2 on Bedrock as an Embedder (the cloud default)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from drac.clients import DEFAULT_ATTEMPTS
from drac.clients.bedrock_runtime import bedrock_config, make_bedrock_runtime, model_call_error
from drac.errors import ModelCallError
from drac.models import TokenUsage
from drac.ports import Embedder
from drac.settings import TITAN_V2

TITAN_DIMENSIONS = (256, 512, 1024)
TITAN_MAX_CHARS = 50_000
READ_TIMEOUT_S = 60.0


class TitanEmbedder(Embedder):
    """Embeds texts one request each (Titan V2 takes one `inputText` per call).

    The boto3 `bedrock-runtime` client is injected, or created on first use from
    `client_factory` (default: `make_bedrock_runtime` in the given region, retrying each call
    `attempts` times in all); never at import time. Errors are classified like the Converse
    clients' (`drac.clients.bedrock_runtime`). Input token counts reported by Bedrock accumulate in
    `usage`.
    """

    def __init__(
        self,
        client: Any | None = None,
        *,
        model_id: str = TITAN_V2,
        dimensions: int = 1024,
        normalize: bool = True,
        region: str | None = None,
        client_factory: Callable[[], Any] | None = None,
        attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        if dimensions not in TITAN_DIMENSIONS:
            raise ValueError(f"Titan V2 dimensions must be one of {TITAN_DIMENSIONS}")
        self._client = client
        self._factory = client_factory
        self.model_id = model_id
        self.name = model_id
        self.dimension = dimensions
        self.normalize = normalize
        self.region = region
        self.attempts = attempts
        self.usage = TokenUsage()
        self.latency_ms = 0.0

    def _bedrock(self) -> Any:
        if self._client is None:
            if self._factory is not None:
                self._client = self._factory()
            else:
                config = bedrock_config(READ_TIMEOUT_S, self.attempts)
                self._client = make_bedrock_runtime(self.region, config)
        return self._client

    def request_body(self, text: str) -> dict[str, Any]:
        """The InvokeModel body for one text (truncated to Titan's 50,000-character limit)."""
        return {
            "inputText": text[:TITAN_MAX_CHARS],
            "dimensions": self.dimension,
            "normalize": self.normalize,
        }

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text; raise ModelCallError naming the failing text index."""
        from botocore.exceptions import BotoCoreError, ClientError

        client = self._bedrock()
        vectors: list[list[float]] = []
        for index, text in enumerate(texts):
            started = time.perf_counter()
            try:
                response = client.invoke_model(
                    modelId=self.model_id,
                    body=json.dumps(self.request_body(text)),
                    contentType="application/json",
                    accept="application/json",
                )
                payload = json.loads(response["body"].read())
            except (BotoCoreError, ClientError) as exc:
                raise model_call_error(exc, f"Titan embedding of text {index}") from exc
            except (KeyError, TypeError, ValueError) as exc:
                raise ModelCallError(f"Titan embedding of text {index}: unreadable answer") from exc
            self.latency_ms += (time.perf_counter() - started) * 1000
            vector = payload.get("embedding")
            if not isinstance(vector, list) or len(vector) != self.dimension:
                raise ModelCallError(f"Titan returned no {self.dimension}-d embedding")
            tokens = int(payload.get("inputTextTokenCount", 0))
            self.usage = self.usage + TokenUsage(input_tokens=tokens)
            vectors.append([float(x) for x in vector])
        return vectors
