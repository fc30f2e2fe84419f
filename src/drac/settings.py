"""drac's one settings model: models, conversion, pipeline and deployment knobs.

The same model, with the same defaults, is read three ways:
- the CLI: environment variables (`DRAC_<FIELD>`, plus the historic names in `ENV_ALIASES`)
  over an optional `drac.toml` (`[model]` and `[settings]` tables) that the user names
  (`--config`, `DRAC_CONFIG`) or keeps in their config folder, see `Settings.load`; a
  `drac.toml` in the current folder is never read: it may have come with the documents;
- the CDK app: context values in camelCase (`cdk.json` or `-c batchSize=4`), see
  `Settings.from_context`;
- the Lambda functions: the JSON the stack puts in `DRAC_SETTINGS`, see `Settings.from_json`.
The local embedder's own variables (`DRAC_EMBEDDER`, `DRAC_EMBED_*`) are the `embedder` group,
read by `EmbedderSettings.from_env` and by nothing else; it never goes to the cloud.
A bad value is rejected when loaded, with the field named.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from drac.documents.options import ESCALATE_FLAGS
from drac.documents.sandbox.containment.budget import (
    DOCUMENT_CPU_S,
    DOCUMENT_CPU_S_PER_MIB,
    budget_for,
)
from drac.errors import DracError
from drac.models import Strategy
from drac.strategies import strategy_from_request

BEDROCK_CONVERSION_MODEL = "google.gemma-3-27b-it"
TITAN_V2 = "amazon.titan-embed-text-v2:0"
SETTINGS_VARIABLE = "DRAC_SETTINGS"
"""The environment variable through which the stack hands its settings to every function."""

ENV_ALIASES: dict[str, str] = {
    "DRAC_MODEL": "backend",
    "DRAC_VISION_MODEL_ID": "conversion_model_id",
    "DRAC_PLANNER_MODEL_ID": "planning_model_id",
    "AWS_REGION": "region",
    "DRAC_BEDROCK_REGION": "region",  # after AWS_REGION: wins over it
}
"""Environment variable names kept from before the settings had one model."""
_TOML_ALIASES = {"vision_model_id": "conversion_model_id", "planner_model_id": "planning_model_id"}
StructuredMode = Literal["auto", "grammar", "json_schema", "json_object", "none"]
"""How an OpenAI-compatible server is asked for the planner's answer shape."""
_CDK_KEYS = re.compile(r"^(@|aws:|cdk|stackName$|acknowledged-issue-numbers$)")
_POLICY_NAME = re.compile(r"[a-z][a-z0-9-]{2,31}")
_LONGEST_POLICY_SUFFIX = len("-data")


_PRINCIPAL_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/.+")
_TENANT = re.compile(r"[A-Za-z0-9._-]{1,64}")


def _check_principal_arn(arn: str) -> None:
    if not _PRINCIPAL_ARN.fullmatch(arn):
        raise ValueError(f"{arn!r} is not an IAM role or user ARN")


class SettingsError(DracError, ValueError):
    """Settings that cannot be used; the message names the field and the reason."""


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


class Settings(BaseModel):
    """Every knob of drac, with one set of production-sensible defaults."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    _config_file: Path | None = PrivateAttr(default=None)

    # -- models ---------------------------------------------------------------------------
    backend: Literal["offline", "bedrock", "openai"] = Field(
        default="offline", description="the CLI's model backend; the cloud always uses Bedrock"
    )
    conversion_model_id: str | None = Field(
        default=None, description="vision model; default Gemma 3 27B on Bedrock"
    )
    planning_model_id: str | None = Field(
        default=None, description="LLM planner model; default: the conversion model"
    )
    embedding_model_id: str = TITAN_V2
    embedding_dimension: int = Field(default=1024, description="Titan V2: 256, 512 or 1024")
    region: str | None = None
    openai_base_url: str = "http://localhost:11434/v1"
    openai_api_key: str | None = Field(default=None, repr=False)
    openai_model: str | None = None
    temperature: float = Field(default=0.1, ge=0, le=2)
    conversion_max_tokens: int = Field(default=8192, ge=256, le=65536)
    planning_max_tokens: int = Field(
        default=1024,
        ge=64,
        le=65536,
        description="ceiling of a planner answer; each call asks for what its section needs",
    )
    openai_structured: StructuredMode = Field(
        default="auto",
        description="planner answer shape on OpenAI-compatible servers: auto (grammar for "
        "llama.cpp, else json_schema), grammar, json_schema, json_object, none (a refusal "
        "steps down)",
    )
    model_timeout_s: float = Field(
        default=600.0, gt=0, le=840, description="read timeout of one model call (a 5-page batch)"
    )
    escalate_to: str | None = Field(
        default=None,
        pattern=r"^(bedrock|openai):\S{1,200}$",
        description="BACKEND:MODEL converting again the pages the conversion model converted "
        "doubtfully (DRAC_ESCALATE_TO; None: no escalation)",
    )
    escalate_flags: int = Field(
        default=ESCALATE_FLAGS,
        ge=0,
        description="a page with more verification flags than this (or a failed page) is "
        "escalated (DRAC_ESCALATE_FLAGS)",
    )
    # -- conversion and planning ----------------------------------------------------------
    batch_size: int = Field(default=5, ge=1, le=20, description="pages per conversion call")
    batch_concurrency: int = Field(default=5, ge=1, le=40, description="batches in flight")
    render_concurrency: int = Field(
        default=10, ge=1, le=40, description="render slices of one document in flight (cloud)"
    )
    max_file_bytes: int = Field(
        default=500 * 1024 * 1024, ge=1, description="larger uploads fail with that reason"
    )
    max_pages: int = Field(default=5000, ge=1, le=100_000)
    document_cpu_s: float = Field(
        default=DOCUMENT_CPU_S,
        gt=0,
        le=86_400,
        description="CPU seconds one document's parsers (pdfium, OCR, LibreOffice, the "
        "spreadsheet and file readers) may use in all, plus documentCpuSPerMib a MiB of the "
        "file; past it the document fails alone (in the cloud: per function invocation)",
    )
    document_cpu_s_per_mib: float = Field(
        default=DOCUMENT_CPU_S_PER_MIB,
        ge=0,
        le=86_400,
        description="what a document's CPU budget grows by per MiB of the file",
    )
    strategy: Strategy = Field(default_factory=Strategy, description="default chunking strategy")
    embedder: EmbedderSettings = Field(
        default_factory=EmbedderSettings,
        exclude=True,  # the local embedder's: never handed to the cloud's functions
        description="the local embedder (DRAC_EMBEDDER, DRAC_EMBED_*: EmbedderSettings)",
    )
    # -- cloud pipeline -------------------------------------------------------------------
    section_concurrency: int = Field(default=10, ge=1, le=40)
    index_concurrency: int = Field(default=4, ge=1, le=40)
    replan_concurrency: int = Field(default=10, ge=1, le=1000)
    max_running_documents: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="ingest executions at once (the starter counts them with one "
        "ListExecutions call, which returns at most 1,000)",
    )
    starter_concurrency: int = Field(default=2, ge=2, le=1000)
    retrieve_concurrency: int = Field(
        default=10,
        ge=0,
        le=1000,
        description="reserved concurrency of the retrieval API (0: none, shares the pool)",
    )
    index_name: str = Field(default="drac-chunks", pattern=r"^[a-z0-9][a-z0-9_-]{0,254}$")
    collection_name: str | None = Field(
        default=None, description="OpenSearch Serverless collection; default from the stack name"
    )
    collection_standby_replicas: Literal["ENABLED", "DISABLED"] = "ENABLED"
    max_indexing_ocu: int | None = Field(
        default=None,
        ge=2,
        le=1000,
        description="caps the collection's indexing OCUs (a collection group); none: no cap",
    )
    max_search_ocu: int | None = Field(
        default=None,
        ge=2,
        le=1000,
        description="caps the collection's search OCUs (a collection group); none: no cap",
    )
    removal_policy: Literal["retain", "destroy"] = "retain"
    page_image_expiration_days: int = Field(default=30, ge=1)
    ledger_retention_days: int = Field(
        default=400,
        ge=0,
        le=3650,
        description="days DynamoDB keeps a token-ledger entry (its TTL); 0: for ever",
    )
    plan_cache_days: int = Field(
        default=90,
        ge=0,
        le=3650,
        description="days DynamoDB keeps a cached section plan (its TTL); 0: for ever",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    reader_principals: tuple[str, ...] = Field(
        default=(), description="IAM role ARNs allowed to query the index"
    )
    tenant_principals: dict[str, str] = Field(
        default_factory=dict,
        description="IAM role (or user) ARN -> the one tenant its callers may read and re-plan",
    )
    admin_principals: tuple[str, ...] = Field(
        default=(), description="IAM role or user ARNs that may read and re-plan every tenant"
    )
    isolated_converters: bool = Field(
        default=True,
        description="run Normalise, ReadSpreadsheet and Render in a VPC with no route out "
        "(false: in Lambda's own network, which reaches the internet; development only)",
    )
    tracing_endpoint: bool = Field(
        default=False,
        description="an X-Ray interface endpoint in the converters' subnets (billed per AZ-hour)",
    )
    private_collection: bool = Field(
        default=False,
        description="the collection only through an OpenSearch Serverless VPC endpoint; the "
        "functions that index or search run in the VPC (billed interface endpoints)",
    )
    alarm_email: str | None = Field(
        default=None,
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
        description="subscribed to the alarm topic (the address confirms by email)",
    )
    kb_transform_bucket: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$",
        description="a Bedrock Knowledge Base's intermediate bucket: adds the KbTransform "
        "function (drac as the data source's custom transformation), which reads and writes "
        "only there",
    )
    kb_transform_prefix: str = Field(
        default="",
        max_length=512,
        pattern=r"^([^*?\s]+/)?$",
        description="the prefix of the intermediate storage URI in that bucket (ending in /)",
    )

    @field_validator("strategy", mode="before")
    @classmethod
    def _resolve_strategy(cls, value: Any) -> Any:
        """A preset name, or a preset name plus overrides, becomes a full Strategy."""
        if isinstance(value, Strategy):
            return value
        return strategy_from_request(value)

    @field_validator("embedding_dimension")
    @classmethod
    def _titan_dimension(cls, value: int) -> int:
        if value not in (256, 512, 1024):
            raise ValueError("must be 256, 512 or 1024 (Titan Text Embeddings V2)")
        return value

    @field_validator("collection_name")
    @classmethod
    def _valid_collection_name(cls, value: str | None) -> str | None:
        if value is not None:
            check_collection_name(value)
        return value

    @model_validator(mode="after")
    def _private_collection_needs_the_vpc(self) -> Settings:
        if self.private_collection and not self.isolated_converters:
            raise ValueError("privateCollection needs isolatedConverters (the VPC it uses)")
        return self

    @field_validator("reader_principals", "admin_principals")
    @classmethod
    def _role_arns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for arn in value:
            _check_principal_arn(arn)
        return value

    @field_validator("tenant_principals")
    @classmethod
    def _tenant_roles(cls, value: dict[str, str]) -> dict[str, str]:
        for arn, tenant in value.items():
            _check_principal_arn(arn)
            if not _TENANT.fullmatch(tenant):
                raise ValueError(f"tenant {tenant!r} of {arn} must be 1-64 of a-z A-Z 0-9 . _ -")
        return value

    @property
    def conversion_model(self) -> str:
        """The conversion model id for the backend (the OpenAI model for `openai`)."""
        if self.conversion_model_id:
            return self.conversion_model_id
        if self.backend == "openai":
            if not self.openai_model:
                raise SettingsError(
                    "DRAC_MODEL=openai needs DRAC_OPENAI_MODEL (or DRAC_VISION_MODEL_ID)"
                )
            return self.openai_model
        return BEDROCK_CONVERSION_MODEL

    @property
    def planning_model(self) -> str:
        """The LLM planner's model id (the conversion model's unless set)."""
        return self.planning_model_id or self.conversion_model

    def cpu_budget(self, size_bytes: int) -> float:
        """The CPU seconds a document of `size_bytes` may use in its parsers."""
        return budget_for(size_bytes, self.document_cpu_s, self.document_cpu_s_per_mib) or 0.0

    def bedrock_model_ids(self) -> tuple[str, ...]:
        """The distinct Bedrock models a deployment invokes (conversion, planning, embedding)."""
        ids = (self.conversion_model, self.planning_model, self.embedding_model_id)
        return tuple(dict.fromkeys(ids))

    def collection_for(self, stack_name: str) -> str:
        """The collection name: as configured, else derived from the stack name."""
        if self.collection_name:
            return self.collection_name
        name = re.sub(r"[^a-z0-9-]+", "-", stack_name.lower()).strip("-")
        if not name[:1].isalpha():
            name = f"drac-{name}"
        name = name[: 32 - _LONGEST_POLICY_SUFFIX].rstrip("-")
        check_collection_name(name.ljust(3, "x"))
        return name.ljust(3, "x")

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> Settings:
        """Settings from CDK context (camelCase keys, values possibly strings from `-c`)."""
        fields = {field.alias or name: name for name, field in cls.model_fields.items()}
        values: dict[str, Any] = {}
        for key, raw in context.items():
            if _CDK_KEYS.match(key):
                continue
            if key not in fields:
                raise SettingsError(f"unknown context key {key!r} (known: {', '.join(fields)})")
            values[fields[key]] = _from_cli_string(raw)
        return _validated(values, source="context")

    @classmethod
    def load(
        cls, env: Mapping[str, str] | None = None, config_file: str | Path | None = None
    ) -> Settings:
        """Settings for the CLI: a `drac.toml` the user chose (the file given, else
        $DRAC_CONFIG, else `user_config_file()` when present; never one in the current
        folder) overridden by environment variables."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        named = config_file or env.get("DRAC_CONFIG", "").strip()
        path = Path(named) if named else user_config_file(env)
        read = path.is_file()
        if read:
            values.update(_read_toml(path))
        elif named:
            raise SettingsError(f"settings file {path} does not exist")
        for variable, name in ENV_ALIASES.items():
            if env.get(variable, "").strip():
                values[name] = env[variable].strip()
        values["embedder"] = EmbedderSettings.from_env(env)
        for name in cls.model_fields:
            variable = f"DRAC_{name.upper()}"
            if name == "embedder":
                continue  # DRAC_EMBEDDER is the embedder's spec, read just above
            if env.get(variable, "").strip():
                values[name] = _from_cli_string(env[variable].strip())
        settings = _validated(values, source=str(path) if read else "environment")
        settings._config_file = path if read else None
        return settings

    @property
    def config_file(self) -> Path | None:
        """The settings file these settings were read from (None: defaults and environment)."""
        return self._config_file

    def network_notice(self) -> str | None:
        """One line naming the settings file and the endpoint documents are sent to, when
        settings read from a file choose a model backend on the network (None otherwise)."""
        if self._config_file is None or self.backend == "offline":
            return None
        if self.backend == "openai":
            endpoint = self.openai_base_url
        else:
            endpoint = f"Amazon Bedrock ({self.region or 'the AWS default region'})"
        return (
            f"drac: settings from {self._config_file} send documents to {endpoint} "
            f"(model backend {self.backend})"
        )

    @classmethod
    def from_json(cls, text: str) -> Settings:
        """Settings from the JSON `to_json` wrote (how Lambda functions receive them)."""
        return _validated(json.loads(text), source=SETTINGS_VARIABLE)

    def to_json(self) -> str:
        """Compact JSON of every field (field names), for `DRAC_SETTINGS`."""
        return self.model_dump_json(exclude={"openai_api_key"})


CONFIG_NAME = "drac.toml"


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    """The user's own settings file: `$XDG_CONFIG_HOME/drac/drac.toml`, else
    `~/.config/drac/drac.toml` (read when present)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "drac" / CONFIG_NAME


def check_collection_name(name: str) -> None:
    """Raise SettingsError unless `name` and its `-enc`/`-net`/`-data`/`-read` policy names
    follow OpenSearch Serverless naming (lowercase letter first, a-z 0-9 -, 3 to 32 chars)."""
    for candidate in (name, f"{name}-data"):
        if not _POLICY_NAME.fullmatch(candidate):
            raise SettingsError(
                f"collection name {name!r}: OpenSearch Serverless names (and the '-data' policy"
                " name made from it) are 3-32 characters, a-z, 0-9 and '-', starting with a"
                " letter"
            )


def _from_cli_string(raw: Any) -> Any:
    """Context and environment values may arrive as strings: JSON arrays and objects are
    decoded (pydantic turns "4" or "true" into a number or a flag where a field wants one,
    and leaves strings, such as an all-digit API key, as they are)."""
    if isinstance(raw, str) and raw.strip()[:1] in "[{":
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _validated(values: Mapping[str, Any], *, source: str) -> Settings:
    try:
        return Settings.model_validate(dict(values))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'settings'}: {error['msg']}"
            for error in exc.errors()
        )
        raise SettingsError(f"invalid settings ({source}): {problems}") from exc
    except ValueError as exc:  # a strategy that does not resolve
        raise SettingsError(f"invalid settings ({source}): strategy: {exc}") from exc


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    values: dict[str, Any] = {}
    for table in ("model", "settings"):
        part = data.get(table, {})
        if not isinstance(part, dict):
            raise SettingsError(f"{path}: [{table}] must be a table")
        values.update({_TOML_ALIASES.get(str(key), str(key)): value for key, value in part.items()})
    return values
