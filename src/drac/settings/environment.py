"""The settings read from the environment only: the local embedder's (`DRAC_EMBEDDER`,
`DRAC_EMBED_*`) and the CLI process's own switches (`DRAC_TRACEBACK`); neither goes to the
cloud."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from drac.settings.errors import SettingsError

_OFF = ("0", "false", "no", "off")


class EmbedderSettings(BaseModel):
    """The local embedder's own environment variables (docs/evaluation.md), read in one
    place: `DRAC_EMBEDDER` (the spec `--embedder` takes), `DRAC_EMBED_MODEL`,
    `DRAC_EMBED_DIMENSIONS`, `DRAC_EMBED_BASE_URL`, `DRAC_EMBED_API_KEY` (else
    `OPENAI_API_KEY`), `DRAC_EMBED_AT_INGEST`, `DRAC_EMBED_THREADS` and, for Bedrock,
    `AWS_DEFAULT_REGION`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str = Field(default="", description="DRAC_EMBEDDER; empty: the default embedder")
    model: str | None = None
    dimensions: int | None = Field(default=None, gt=0)
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    openai_api_key: str | None = Field(default=None, repr=False)
    at_ingest: bool = Field(default=True, description="embed new chunks after an ingest")
    threads: int | None = Field(
        default=None, gt=0, le=64, description="DRAC_EMBED_THREADS; unset: the cores, at most 4"
    )
    default_region: str | None = None

    @field_validator("at_ingest", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        """Off only for 0, false, no or off (any case): any other value leaves it on."""
        return str(value).strip().lower() not in _OFF if isinstance(value, str) else value

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> EmbedderSettings:
        """Read the variables (blank ones count as unset); SettingsError names a bad one."""
        env = os.environ if env is None else env
        values = {
            field: env[variable].strip()
            for variable, field in EMBEDDER_VARIABLES.items()
            if env.get(variable, "").strip()
        }
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            names = {field: variable for variable, field in EMBEDDER_VARIABLES.items()}
            problems = "; ".join(
                f"{names.get(str(error['loc'][0]), error['loc'][0])}: {error['msg']}"
                for error in exc.errors()
            )
            raise SettingsError(f"invalid embedder settings (environment): {problems}") from exc


EMBEDDER_VARIABLES: dict[str, str] = {
    "DRAC_EMBEDDER": "spec",
    "DRAC_EMBED_MODEL": "model",
    "DRAC_EMBED_DIMENSIONS": "dimensions",
    "DRAC_EMBED_BASE_URL": "base_url",
    "DRAC_EMBED_API_KEY": "api_key",
    "OPENAI_API_KEY": "openai_api_key",
    "DRAC_EMBED_AT_INGEST": "at_ingest",
    "DRAC_EMBED_THREADS": "threads",
    "AWS_DEFAULT_REGION": "default_region",
}
"""The environment variable of each EmbedderSettings field."""


class LocalSettings(BaseModel):
    """The CLI process's own switches, read from the environment only: `DRAC_TRACEBACK` (an
    unexpected error shows its traceback instead of one line)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    traceback: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LocalSettings:
        """Read `DRAC_TRACEBACK` (set and not 0, false, no or off: on)."""
        env = os.environ if env is None else env
        flag = env.get("DRAC_TRACEBACK", "").strip().lower()
        return cls(traceback=flag not in ("", *_OFF))
