"""Build the model clients a command asks for (offline needs none), and the conversion
options the settings give."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from drac.errors import DracError
from drac.models import Strategy
from drac.ports import TextModel, VisionModel

if TYPE_CHECKING:
    from drac.documents.options import ConversionOptions


def build_models(
    backend: str | None, strategy: Strategy
) -> tuple[VisionModel | None, TextModel | None]:
    """The vision model for conversion and the text model for LLM planning, per settings.

    Exits with a clear message when the llm planner is asked for without a model backend.
    """
    from drac.clients.factory import make_text_model, make_vision_model
    from drac.settings import Settings

    try:
        settings = Settings.load()
        if backend:
            settings = settings.model_copy(update={"backend": backend})
        if strategy.planner_model:  # the strategy's own planner model wins over the settings'
            settings = settings.model_copy(update={"planning_model_id": strategy.planner_model})
        vision = make_vision_model(settings)
        text_model = make_text_model(settings) if strategy.planner == "llm" else None
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    except Exception as exc:
        if type(exc).__name__ == "NoRegionError":  # botocore's, without importing it here
            raise click.UsageError(
                "--model bedrock needs an AWS region: set AWS_REGION (or the region of your "
                "AWS profile in ~/.aws/config)"
            ) from exc
        raise
    if strategy.planner == "llm" and text_model is None:
        raise click.UsageError(
            "the llm planner needs a model: pass --model bedrock or --model openai"
            " (or set DRAC_MODEL), or use --planner rules"
        )
    return vision, text_model


def conversion_options() -> ConversionOptions:
    """The conversion options the settings ask for (a document's CPU budget,
    DRAC_DOCUMENT_CPU_S and DRAC_DOCUMENT_CPU_S_PER_MIB); exits with a clear message when
    a setting is invalid."""
    from drac.documents.options import ConversionOptions
    from drac.settings import Settings

    try:
        settings = Settings.load()
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    return ConversionOptions(
        cpu_budget_s=settings.document_cpu_s,
        cpu_budget_s_per_mib=settings.document_cpu_s_per_mib,
    )
