"""The model clients an ingest or a re-plan needs, built from the settings (offline needs none)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from drac.api.errors import ModelSetupError
from drac.errors import DracError
from drac.models import Strategy
from drac.ports import TextModel, VisionModel

if TYPE_CHECKING:
    from drac.documents.vision.escalate import Escalation


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
            settings = settings.changed(backend=backend)
        if strategy.planner_model:  # the strategy's own planner model wins over the settings'
            settings = settings.changed(planning_model_id=strategy.planner_model)
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


def named_vision_model(spec: str) -> VisionModel | None:
    """The vision model `spec` names: offline (None), BACKEND (the settings' conversion model
    on bedrock or openai) or BACKEND:MODEL. Raises ModelSetupError for any other spec."""
    from drac.clients.factory import make_vision_model
    from drac.settings import Settings

    backend, _, model_id = spec.strip().partition(":")
    if backend == "offline" and not model_id:
        return None
    if backend not in ("bedrock", "openai"):
        raise ModelSetupError(
            f"{spec!r}: expected offline, bedrock, openai, or BACKEND:MODEL (bedrock or openai)"
        )
    update: dict[str, str] = {"backend": backend}
    if model_id.strip():
        update["conversion_model_id"] = model_id.strip()
    return make_vision_model(Settings.load().changed(**update))


def build_escalation(spec: str | None = None) -> Escalation | None:
    """The second model doubtful pages are converted again by: `spec` (BACKEND:MODEL, over
    the settings' `escalate_to`), with the settings' `escalate_flags` threshold; None when
    neither names one. Raises ModelSetupError for a spec that names no usable model."""
    from drac.documents.vision.escalate import Escalation
    from drac.settings import Settings

    settings = Settings.load()
    wanted = spec or settings.models.escalate_to
    if not wanted:
        return None
    backend, _, model_id = wanted.partition(":")
    if backend not in ("bedrock", "openai") or not model_id.strip():
        raise ModelSetupError(
            f"--escalate-to {wanted!r}: expected BACKEND:MODEL, BACKEND bedrock or openai"
        )
    model = named_vision_model(wanted)
    if model is None:  # pragma: no cover - both backends build a model
        raise ModelSetupError(f"--escalate-to {wanted!r}: no model")
    return Escalation(model=model, threshold=settings.models.escalate_flags)
