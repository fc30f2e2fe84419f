"""Which models drac uses: environment variables over an optional `drac.toml`."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from drac.clients.bedrock import DEFAULT_MODEL_ID
from drac.errors import DracError
from drac.ports import TextModel, VisionModel

ENV_FIELDS: dict[str, str] = {
    "DRAC_MODEL": "backend",
    "DRAC_VISION_MODEL_ID": "vision_model_id",
    "DRAC_PLANNER_MODEL_ID": "planner_model_id",
    "AWS_REGION": "region",
    "DRAC_BEDROCK_REGION": "region",  # listed last: wins over AWS_REGION
    "DRAC_OPENAI_BASE_URL": "openai_base_url",
    "DRAC_OPENAI_API_KEY": "openai_api_key",
    "DRAC_OPENAI_MODEL": "openai_model",
}


class ModelSettings(BaseModel):
    """Model backend and ids; `offline` (the default) means no model at all."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Literal["offline", "bedrock", "openai"] = "offline"
    vision_model_id: str | None = None
    planner_model_id: str | None = None
    region: str | None = None
    openai_base_url: str = "http://localhost:11434/v1"
    openai_api_key: str | None = Field(default=None, repr=False)
    openai_model: str | None = None
    temperature: float = Field(default=0.1, ge=0, le=2)
    conversion_max_tokens: int = Field(default=8192, ge=256)
    timeout_s: float = Field(default=300.0, gt=0)

    @classmethod
    def load(
        cls, env: Mapping[str, str] | None = None, config_file: str | Path | None = None
    ) -> ModelSettings:
        """Return settings from `drac.toml` ([model] table) overridden by environment variables.

        The file is `config_file`, else $DRAC_CONFIG, else ./drac.toml when it exists.
        """
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        path = Path(config_file or env.get("DRAC_CONFIG") or "drac.toml")
        if path.is_file():
            values.update(_read_toml(path))
        elif config_file or env.get("DRAC_CONFIG"):
            raise DracError(f"model config file {path} does not exist")
        for variable, name in ENV_FIELDS.items():
            if env.get(variable):
                values[name] = env[variable].strip()
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise DracError(f"invalid model settings: {exc}") from exc

    @property
    def vision_id(self) -> str:
        """Return the conversion model id for the chosen backend."""
        if self.backend == "openai":
            return self.vision_model_id or self._openai_model()
        return self.vision_model_id or DEFAULT_MODEL_ID

    @property
    def planner_id(self) -> str:
        """Return the planner model id (the vision model's unless set)."""
        return self.planner_model_id or self.vision_id

    def _openai_model(self) -> str:
        if not self.openai_model:
            raise DracError("DRAC_MODEL=openai needs DRAC_OPENAI_MODEL (or DRAC_VISION_MODEL_ID)")
        return self.openai_model


def _read_toml(path: Path) -> dict[str, object]:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DracError(f"cannot read {path}: {exc}") from exc
    table = data.get("model", {})
    if not isinstance(table, dict):
        raise DracError(f"{path}: [model] must be a table")
    return dict(table)


def make_vision_model(settings: ModelSettings) -> VisionModel | None:
    """Return the conversion model the settings name, or None for offline conversion."""
    if settings.backend == "bedrock":
        from drac.clients.bedrock import BedrockVisionModel

        return BedrockVisionModel(
            settings.vision_id,
            max_tokens=settings.conversion_max_tokens,
            region=settings.region,
            temperature=settings.temperature,
        )
    if settings.backend == "openai":
        from drac.clients.openai_compat import OpenAICompatVisionModel

        return OpenAICompatVisionModel(
            settings.vision_id,
            max_tokens=settings.conversion_max_tokens,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            temperature=settings.temperature,
            timeout_s=settings.timeout_s,
        )
    return None


def make_text_model(settings: ModelSettings) -> TextModel | None:
    """Return the planner's text model the settings name, or None when offline."""
    if settings.backend == "bedrock":
        from drac.clients.bedrock import BedrockTextModel

        return BedrockTextModel(
            settings.planner_id, region=settings.region, temperature=settings.temperature
        )
    if settings.backend == "openai":
        from drac.clients.openai_compat import OpenAICompatTextModel

        return OpenAICompatTextModel(
            settings.planner_id,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            temperature=settings.temperature,
            timeout_s=settings.timeout_s,
        )
    return None
