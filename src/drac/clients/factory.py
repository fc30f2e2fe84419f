"""The model clients `Settings` name: Bedrock, an OpenAI-compatible server, or none (offline)."""

from __future__ import annotations

from drac.clients import DEFAULT_ATTEMPTS
from drac.ports import TextModel, VisionModel
from drac.settings import Settings


def make_vision_model(
    settings: Settings, *, attempts: int = DEFAULT_ATTEMPTS
) -> VisionModel | None:
    """The conversion model the settings name (None for offline conversion); each call is
    tried `attempts` times in all by the client's library (botocore or tenacity)."""
    if settings.models.backend == "bedrock":
        from drac.clients.bedrock import BedrockVisionModel

        return BedrockVisionModel(
            settings.models.conversion_model,
            max_tokens=settings.models.conversion_max_tokens,
            region=settings.models.region,
            temperature=settings.models.temperature,
            read_timeout_s=settings.models.model_timeout_s,
            attempts=attempts,
        )
    if settings.models.backend == "openai":
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
    return None


def make_text_model(settings: Settings, *, attempts: int = DEFAULT_ATTEMPTS) -> TextModel | None:
    """The LLM planner's model the settings name (None when offline); each call is tried
    `attempts` times in all by the client's library (botocore or tenacity)."""
    if settings.models.backend == "bedrock":
        from drac.clients.bedrock import BedrockTextModel

        return BedrockTextModel(
            settings.models.planning_model,
            region=settings.models.region,
            temperature=settings.models.temperature,
            read_timeout_s=settings.models.model_timeout_s,
            attempts=attempts,
            max_answer_tokens=settings.models.planning_max_tokens,
        )
    if settings.models.backend == "openai":
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
    return None
