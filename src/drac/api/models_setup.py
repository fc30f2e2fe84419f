"""The model clients an ingest or a re-plan needs, built from the settings (offline needs none)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from drac.errors import DracError
from drac.models import Strategy
from drac.ports import TextModel, VisionModel


class ModelSetupError(DracError):
    """The models asked for cannot be built (no backend for the llm planner, no AWS region)."""


class Models(NamedTuple):
    """The vision model for conversion (None: the offline converter) and the text model for
    LLM planning (None: the rules planner)."""

    vision: VisionModel | None
    text: TextModel | None


def build_models(
    backend: str | None,
    strategy: Strategy,
    *,
    notice: Callable[[str], None] | None = None,
) -> Models:
    """The models the settings (`DRAC_MODEL`, a drac.toml the user named) and `backend`
    (offline, bedrock or openai, over the settings) choose for `strategy`; `notice` is told
    the line naming a settings file that sends documents to the network.

    Raises ModelSetupError when the llm planner is asked for without a model backend, or a
    backend cannot be configured."""
    from drac.clients.factory import make_text_model, make_vision_model
    from drac.settings import Settings

    try:
        settings = Settings.load()
        if backend:
            settings = settings.model_copy(update={"backend": backend})
        if strategy.planner_model:  # the strategy's own planner model wins over the settings'
            settings = settings.model_copy(update={"planning_model_id": strategy.planner_model})
        line = settings.network_notice()
        if line and notice is not None:
            notice(line)
        vision = make_vision_model(settings)
        text_model = make_text_model(settings) if strategy.planner == "llm" else None
    except DracError:
        raise
    except Exception as exc:
        if type(exc).__name__ == "NoRegionError":  # botocore's, without importing it here
            raise ModelSetupError(
                "--model bedrock needs an AWS region: set AWS_REGION (or the region of your "
                "AWS profile in ~/.aws/config)"
            ) from exc
        raise
    if strategy.planner == "llm" and text_model is None:
        raise ModelSetupError(
            "the llm planner needs a model: pass --model bedrock or --model openai"
            " (or set DRAC_MODEL), or use --planner rules"
        )
    return Models(vision, text_model)
