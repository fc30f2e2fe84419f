"""The settings groups that go to the cloud: `models`, `conversion`, `cloud`, `deploy`."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from drac.documents.options import ESCALATE_FLAGS
from drac.documents.sandbox.containment.budget import (
    DOCUMENT_CPU_S,
    DOCUMENT_CPU_S_PER_MIB,
    budget_for,
)
from drac.models import Strategy
from drac.settings.errors import SettingsError
from drac.strategies import strategy_from_request

BEDROCK_CONVERSION_MODEL = "google.gemma-3-27b-it"
TITAN_V2 = "amazon.titan-embed-text-v2:0"
StructuredMode = Literal["auto", "grammar", "json_schema", "json_object", "none"]
"""How an OpenAI-compatible server is asked for the planner's answer shape."""
_POLICY_NAME = re.compile(r"[a-z][a-z0-9-]{2,31}")
_LONGEST_POLICY_SUFFIX = len("-data")


_PRINCIPAL_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/.+")
_TENANT = re.compile(r"[A-Za-z0-9._-]{1,64}")


def _check_principal_arn(arn: str) -> None:
    if not _PRINCIPAL_ARN.fullmatch(arn):
        raise ValueError(f"{arn!r} is not an IAM role or user ARN")


class ModelSettings(BaseModel):
    """The `models` group: the CLI's backend, the conversion, planning and embedding models,
    their endpoints and keys, and the escalation to a second conversion model."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

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

    @field_validator("embedding_dimension")
    @classmethod
    def _titan_dimension(cls, value: int) -> int:
        if value not in (256, 512, 1024):
            raise ValueError("must be 256, 512 or 1024 (Titan Text Embeddings V2)")
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

    def bedrock_model_ids(self) -> tuple[str, ...]:
        """The distinct Bedrock models a deployment invokes (conversion, planning, embedding)."""
        ids = (self.conversion_model, self.planning_model, self.embedding_model_id)
        return tuple(dict.fromkeys(ids))


class ConversionSettings(BaseModel):
    """The `conversion` group: how documents are converted (batches, limits, CPU budget) and
    the default chunking strategy, in the CLI and in the cloud alike."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

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

    @field_validator("strategy", mode="before")
    @classmethod
    def _resolve_strategy(cls, value: Any) -> Any:
        """A preset name, or a preset name plus overrides, becomes a full Strategy."""
        if isinstance(value, Strategy):
            return value
        return strategy_from_request(value)

    def cpu_budget(self, size_bytes: int) -> float:
        """The CPU seconds a document of `size_bytes` may use in its parsers."""
        return budget_for(size_bytes, self.document_cpu_s, self.document_cpu_s_per_mib) or 0.0


class CloudSettings(BaseModel):
    """The `cloud` group: what the Lambda functions read at run time (index, ledger and plan
    cache lifetimes, the starter's admission limit, who may read which tenant)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    index_name: str = Field(default="drac-chunks", pattern=r"^[a-z0-9][a-z0-9_-]{0,254}$")
    max_running_documents: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="ingest executions at once (the starter counts them with one "
        "ListExecutions call, which returns at most 1,000)",
    )
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


class DeploySettings(BaseModel):
    """The `deploy` group: what only the CDK app reads (state-machine concurrency, the
    collection and its capacity, retention, the network, alarms, the Knowledge Base bucket)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    section_concurrency: int = Field(default=10, ge=1, le=40)
    index_concurrency: int = Field(default=4, ge=1, le=40)
    replan_concurrency: int = Field(default=10, ge=1, le=1000)
    starter_concurrency: int = Field(default=2, ge=2, le=1000)
    retrieve_concurrency: int = Field(
        default=10,
        ge=0,
        le=1000,
        description="reserved concurrency of the retrieval API (0: none, shares the pool)",
    )
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

    @field_validator("collection_name")
    @classmethod
    def _valid_collection_name(cls, value: str | None) -> str | None:
        if value is not None:
            check_collection_name(value)
        return value

    @model_validator(mode="after")
    def _private_collection_needs_the_vpc(self) -> DeploySettings:
        if self.private_collection and not self.isolated_converters:
            raise ValueError("privateCollection needs isolatedConverters (the VPC it uses)")
        return self

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


GROUPS: dict[str, type[BaseModel]] = {
    "models": ModelSettings,
    "conversion": ConversionSettings,
    "cloud": CloudSettings,
    "deploy": DeploySettings,
}
"""The groups a flat key can belong to (the embedder and local groups come from the
environment only)."""
GROUP_OF: dict[str, str] = {
    name: group for group, model in GROUPS.items() for name in model.model_fields
}
"""The group of every field that has a flat name (`DRAC_<NAME>`, a flat `drac.toml` key)."""
FLAT_NAMES: dict[str, str] = {
    **{to_camel(name): name for name in GROUP_OF},
    **{name: name for name in GROUP_OF},
}
"""A flat name (snake_case or camelCase) -> its field name."""
