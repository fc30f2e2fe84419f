"""Deployment settings read from CDK context (`cdk.json` or `-c key=value`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aws_cdk import RemovalPolicy
from constructs import Node

GEO_PREFIXES = ("us.", "eu.", "apac.", "us-gov.", "global.", "jp.", "au.", "ca.")

DEFAULT_STRATEGY: dict[str, Any] = {"name": "default", "planner": "rules"}


@dataclass(frozen=True)
class Settings:
    """Every knob of the deployment, with production-sensible defaults."""

    conversion_model_id: str = "google.gemma-3-27b-it"
    planning_model_id: str = "google.gemma-3-12b-it"
    embedding_model_id: str = "amazon.titan-embed-text-v2:0"
    embedding_dimension: int = 1024
    batch_size: int = 5
    batch_concurrency: int = 5
    section_concurrency: int = 10
    replan_concurrency: int = 10
    max_running_documents: int = 10
    starter_concurrency: int = 2
    strategy: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_STRATEGY))
    index_name: str = "drac-chunks"
    collection_name: str = "drac"
    collection_standby_replicas: str = "ENABLED"
    removal_policy: str = "retain"
    page_image_expiration_days: int = 30
    log_level: str = "INFO"

    @property
    def removal(self) -> RemovalPolicy:
        """The CloudFormation removal policy for stateful resources."""
        return RemovalPolicy.DESTROY if self.removal_policy == "destroy" else RemovalPolicy.RETAIN

    @property
    def model_ids(self) -> tuple[str, ...]:
        """The distinct Bedrock model ids the pipeline invokes."""
        ids = (self.conversion_model_id, self.planning_model_id, self.embedding_model_id)
        return tuple(dict.fromkeys(ids))


def _coerce(name: str, raw: Any, default: Any) -> Any:
    """Convert a context value (often a string from `-c`) to the default's type."""
    if raw is None:
        return default
    if isinstance(default, bool):
        return str(raw).lower() in {"1", "true", "yes"}
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, dict):
        value = json.loads(raw) if isinstance(raw, str) else dict(raw)
        if not isinstance(value, dict):
            raise ValueError(f"context {name!r} must be a JSON object")
        return value
    return str(raw)


CONTEXT_KEYS = {
    "conversionModelId": "conversion_model_id",
    "planningModelId": "planning_model_id",
    "embeddingModelId": "embedding_model_id",
    "embeddingDimension": "embedding_dimension",
    "batchSize": "batch_size",
    "batchConcurrency": "batch_concurrency",
    "sectionConcurrency": "section_concurrency",
    "replanConcurrency": "replan_concurrency",
    "maxRunningDocuments": "max_running_documents",
    "starterConcurrency": "starter_concurrency",
    "strategy": "strategy",
    "indexName": "index_name",
    "collectionName": "collection_name",
    "collectionStandbyReplicas": "collection_standby_replicas",
    "removalPolicy": "removal_policy",
    "pageImageExpirationDays": "page_image_expiration_days",
    "logLevel": "log_level",
}


def settings_from_context(node: Node) -> Settings:
    """Build Settings from the CDK context of a construct node, validating ranges."""
    defaults = Settings()
    values = {
        attr: _coerce(key, node.try_get_context(key), getattr(defaults, attr))
        for key, attr in CONTEXT_KEYS.items()
    }
    settings = Settings(**values)
    if settings.removal_policy not in {"retain", "destroy"}:
        raise ValueError("context removalPolicy must be 'retain' or 'destroy'")
    if not 1 <= settings.batch_size <= 20:
        raise ValueError("context batchSize must be between 1 and 20 pages")
    for name in ("batch_concurrency", "section_concurrency", "replan_concurrency",
                 "max_running_documents", "starter_concurrency"):
        if getattr(settings, name) < 1:
            raise ValueError(f"{name} must be at least 1")
    if settings.starter_concurrency < 2:
        raise ValueError("starterConcurrency must be at least 2 (SQS event source minimum)")
    return settings


def model_arns(model_id: str, region: str, account: str, partition: str = "aws") -> list[str]:
    """Return the ARNs bedrock:InvokeModel needs for a model id or inference-profile id.

    A cross-region inference profile (``us.``/``eu.``/... prefix) routes to the foundation
    model in any region of its geography, so the grant names the profile and the model.
    """
    if model_id.startswith("arn:"):
        return [model_id]
    if model_id.startswith(GEO_PREFIXES):
        base = model_id.split(".", 1)[1]
        return [
            f"arn:{partition}:bedrock:{region}:{account}:inference-profile/{model_id}",
            f"arn:{partition}:bedrock:*::foundation-model/{base}",
        ]
    return [f"arn:{partition}:bedrock:{region}::foundation-model/{model_id}"]
