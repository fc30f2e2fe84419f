"""Choose an embedder from settings: `DRAC_EMBEDDER` = none | bedrock | openai | local:PATH.

Other settings (environment variables):
- bedrock: `AWS_REGION` (or `AWS_DEFAULT_REGION`), `DRAC_EMBED_MODEL` (default Titan V2),
  `DRAC_EMBED_DIMENSIONS` (256, 512 or 1024; default 1024).
- openai: `DRAC_EMBED_BASE_URL` (default `http://localhost:11434/v1`, Ollama),
  `DRAC_EMBED_MODEL` (default `nomic-embed-text`), `DRAC_EMBED_API_KEY` (or `OPENAI_API_KEY`).
- local:PATH: a sentence-transformers model folder (needs the `embed` extra).
- none (the default): no embedder; evaluation and search use BM25 only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from drac.embedders.local import EmbedderUnavailable
from drac.ports import Embedder

CHOICES = "none, bedrock, openai or local:PATH"


def embedder_from_spec(spec: str | None, env: Mapping[str, str] | None = None) -> Embedder | None:
    """Build the embedder a spec names (None for `none` or no spec); settings from env."""
    env = os.environ if env is None else env
    value = (spec or "").strip()
    if value in ("", "none"):
        return None
    if value == "bedrock":
        from drac.embedders.bedrock import TITAN_V2, TitanEmbedder

        return TitanEmbedder(
            model_id=env.get("DRAC_EMBED_MODEL", TITAN_V2),
            dimensions=int(env.get("DRAC_EMBED_DIMENSIONS", "1024")),
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
        )
    if value == "openai":
        from drac.embedders.openai import OpenAIEmbedder

        return OpenAIEmbedder(
            env.get("DRAC_EMBED_BASE_URL", "http://localhost:11434/v1"),
            env.get("DRAC_EMBED_MODEL", "nomic-embed-text"),
            api_key=env.get("DRAC_EMBED_API_KEY") or env.get("OPENAI_API_KEY"),
        )
    if value.startswith("local:") and value[len("local:") :].strip():
        from drac.embedders.local import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(Path(value[len("local:") :].strip()).expanduser())
    raise EmbedderUnavailable(f"unknown embedder {value!r}: use {CHOICES}")


def embedder_from_env(env: Mapping[str, str] | None = None) -> Embedder | None:
    """The embedder `DRAC_EMBEDDER` names (None when unset or `none`)."""
    env = os.environ if env is None else env
    return embedder_from_spec(env.get("DRAC_EMBEDDER"), env)
