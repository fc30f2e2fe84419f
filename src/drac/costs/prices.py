"""Model price table: US dollars per million input and output tokens.

Defaults (as of 2026-11-30; override any of them with a TOML or JSON file):

| model | in $/M | out $/M | source |
|---|---|---|---|
| gpt-4.1 | 2.00 | 8.00 | list price used by the D-RAC paper (arXiv 2609.24220) |
| gemini-2.5-pro | 1.25 | 10.00 | list price used by the D-RAC paper |
| google.gemma-3-27b-it (Bedrock) | 0.23 | 0.38 | Bedrock on-demand us-east-1, unverified offline |
| google.gemma-3-12b-it (Bedrock) | 0.09 | 0.29 | Bedrock on-demand us-east-1, unverified offline |
| amazon.titan-embed-text-v2:0 | 0.02 | 0.00 | Bedrock on-demand, us-east-1 |

Local models (names starting `offline`, `local:` or `rules`) cost nothing. A price file
holds `[models."<name>"] input_per_million = ..., output_per_million = ...` (TOML) or the
same shape in JSON, plus optional `as_of`, `source` and `agentic_model`.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

FREE_PREFIXES = ("offline", "local:", "rules", "scripted")
_REGION = re.compile(r"^(us|eu|apac|global)\.")
_VERSION = re.compile(r"(-v\d+)?(:\d+)?")


class ModelPrice(BaseModel):
    """Dollars per million tokens for one model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)
    source: str = ""

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Dollars for this many tokens."""
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1_000_000


DEFAULT_MODELS: dict[str, ModelPrice] = {
    "gpt-4.1": ModelPrice(
        input_per_million=2.0, output_per_million=8.0, source="D-RAC paper, GPT-4.1 list price"
    ),
    "gemini-2.5-pro": ModelPrice(
        input_per_million=1.25,
        output_per_million=10.0,
        source="D-RAC paper, Gemini 2.5 Pro list price",
    ),
    "google.gemma-3-27b-it": ModelPrice(
        input_per_million=0.23, output_per_million=0.38, source="Bedrock on-demand us-east-1"
    ),
    "google.gemma-3-12b-it": ModelPrice(
        input_per_million=0.09, output_per_million=0.29, source="Bedrock on-demand us-east-1"
    ),
    "anthropic.claude-haiku-4-5-20251001": ModelPrice(
        input_per_million=1.0, output_per_million=5.0, source="Claude Haiku 4.5 list price"
    ),
    "amazon.titan-embed-text-v2:0": ModelPrice(
        input_per_million=0.02, output_per_million=0.0, source="Bedrock on-demand us-east-1"
    ),
}


class PriceTable(BaseModel):
    """Prices per model name, with the date they were taken and the agentic reference model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: str = "2026-11-30"
    source: str = "drac defaults (see drac.costs.prices)"
    agentic_model: str = "gpt-4.1"
    models: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_MODELS))

    def price_of(self, model: str) -> ModelPrice | None:
        """The price of a model: exact name; else a known name once a Bedrock region prefix
        (`us.`, `eu.`, `apac.`, `global.`) and a version suffix (`-v1:0`, `:0`) are set
        aside; else free for local models; else None (unpriced)."""
        if model in self.models:
            return self.models[model]
        lowered = _REGION.sub("", model.lower())
        for name in sorted(self.models, key=len, reverse=True):
            rest = lowered.removeprefix(name.lower())
            if rest != lowered and _VERSION.fullmatch(rest):
                return self.models[name]
        if lowered.startswith(FREE_PREFIXES):
            return ModelPrice(input_per_million=0.0, output_per_million=0.0, source="local")
        return None

    def merged(self, overrides: dict[str, object]) -> PriceTable:
        """A copy with the models and fields of an override document applied on top."""
        models = dict(self.models)
        for name, price in dict(overrides.get("models", {})).items():  # type: ignore[call-overload]
            models[name] = ModelPrice.model_validate(price)
        fields = {k: v for k, v in overrides.items() if k in ("as_of", "source", "agentic_model")}
        return self.model_copy(update={**fields, "models": models})


def load_prices(path: Path | None) -> PriceTable:
    """The default table, overridden by a TOML (.toml) or JSON file when given."""
    table = PriceTable()
    if path is None:
        return table
    path = Path(path)
    raw = path.read_bytes()
    document = tomllib.loads(raw.decode("utf-8")) if path.suffix == ".toml" else json.loads(raw)
    if not isinstance(document, dict):
        raise ValueError(f"{path}: a price file is a table of models")
    return table.merged(document)
