"""The model clients `Settings` name: Bedrock, an OpenAI-compatible server, or none (offline).

Each backend is a class that makes its two clients; `BACKENDS` holds them by the name
`Settings.backend` gives. The client libraries are imported only by the backend used.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from drac.clients import DEFAULT_ATTEMPTS
from drac.ports import TextModel, VisionModel
from drac.settings import Settings


class Backend(Protocol):
    """Where the CLI's models run: makes the conversion and the planning model."""

    def vision_model(self, settings: Settings, attempts: int) -> VisionModel | None:
        """The conversion model (None for offline conversion)."""
        ...

    def text_model(self, settings: Settings, attempts: int) -> TextModel | None:
        """The LLM planner's model (None when there is none)."""
        ...


class OfflineBackend:
    """No model: conversion from the text layer, planning by rules."""

    def vision_model(self, settings: Settings, attempts: int) -> VisionModel | None:
        """None: documents are converted offline."""
        return None

    def text_model(self, settings: Settings, attempts: int) -> TextModel | None:
        """None: there is no planner model."""
        return None


class BedrockBackend:
    """Amazon Bedrock's Converse API, through botocore (which retries)."""

    def vision_model(self, settings: Settings, attempts: int) -> VisionModel | None:
        """The settings' conversion model on Bedrock."""
        from drac.clients.bedrock import BedrockVisionModel

        return BedrockVisionModel(
            settings.models.conversion_model,
            max_tokens=settings.models.conversion_max_tokens,
            region=settings.models.region,
            temperature=settings.models.temperature,
            read_timeout_s=settings.models.model_timeout_s,
            attempts=attempts,
        )

    def text_model(self, settings: Settings, attempts: int) -> TextModel | None:
        """The settings' planning model on Bedrock."""
        from drac.clients.bedrock import BedrockTextModel

        return BedrockTextModel(
            settings.models.planning_model,
            region=settings.models.region,
            temperature=settings.models.temperature,
            read_timeout_s=settings.models.model_timeout_s,
            attempts=attempts,
            max_answer_tokens=settings.models.planning_max_tokens,
        )


class OpenAIBackend:
    """An OpenAI-compatible chat server (retries by tenacity)."""

    def vision_model(self, settings: Settings, attempts: int) -> VisionModel | None:
        """The settings' conversion model on the server."""
        from drac.clients.http_json import Backoff
        from drac.clients.openai_compat import OpenAICompatVisionModel

        return OpenAICompatVisionModel(
            settings.models.conversion_model,
            max_tokens=settings.models.conversion_max_tokens,
            base_url=settings.models.openai_base_url,
            api_key=settings.models.openai_api_key,
            temperature=settings.models.temperature,
            timeout_s=settings.models.model_timeout_s,
            backoff=Backoff(attempts=attempts),
        )

    def text_model(self, settings: Settings, attempts: int) -> TextModel | None:
        """The settings' planning model on the server."""
        from drac.clients.http_json import Backoff
        from drac.clients.openai_compat import OpenAICompatTextModel

        return OpenAICompatTextModel(
            settings.models.planning_model,
            base_url=settings.models.openai_base_url,
            api_key=settings.models.openai_api_key,
            temperature=settings.models.temperature,
            timeout_s=settings.models.model_timeout_s,
            backoff=Backoff(attempts=attempts),
            structured=settings.models.openai_structured,
            max_answer_tokens=settings.models.planning_max_tokens,
        )


BACKENDS: Mapping[str, Backend] = MappingProxyType(
    {"offline": OfflineBackend(), "bedrock": BedrockBackend(), "openai": OpenAIBackend()}
)
"""Every backend, by the name `Settings.backend` gives it."""


def backend_named(name: str) -> Backend:
    """The backend called `name` (raises ValueError for an unknown one)."""
    backend = BACKENDS.get(name)
    if backend is None:
        known = ", ".join(repr(known) for known in BACKENDS)
        raise ValueError(f"unknown model backend {name!r} (use {known})")
    return backend


def make_vision_model(
    settings: Settings, *, attempts: int = DEFAULT_ATTEMPTS
) -> VisionModel | None:
    """The conversion model the settings name (None for offline conversion); each call is
    tried `attempts` times in all by the client's library (botocore or tenacity)."""
    return backend_named(settings.models.backend).vision_model(settings, attempts)


def make_text_model(settings: Settings, *, attempts: int = DEFAULT_ATTEMPTS) -> TextModel | None:
    """The LLM planner's model the settings name (None when offline); each call is tried
    `attempts` times in all by the client's library (botocore or tenacity)."""
    return backend_named(settings.models.backend).text_model(settings, attempts)
