"""The AWS adapters of one Lambda invocation environment, built lazily from a boto3 session.

Handlers own the session (created in their lazily-initialised factory); this module only asks
it for clients when an adapter is first used, so importing it never touches AWS.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cached_property, lru_cache
from typing import Any

from pydantic import BaseModel

from drac.aws.dynamo import (
    DocumentRegistry,
    DynamoElementTable,
    DynamoLedger,
    DynamoPlanCache,
    DynamoPlanStore,
)
from drac.aws.opensearch import OpenSearchChunkIndex, make_client
from drac.aws.s3 import S3ArtifactStore
from drac.models import Strategy
from drac.ports import Embedder, TextModel, VisionModel
from drac.strategies import PRESETS, resolve_strategy


class AwsEnvironment(BaseModel):
    """Names and settings the stack passes to every function as environment variables."""

    documents_bucket: str = ""
    artifacts_bucket: str = ""
    documents_table: str = ""
    elements_table: str = ""
    plans_table: str = ""
    ledger_table: str = ""
    collection_endpoint: str = ""
    index_name: str = "drac-chunks"
    conversion_model_id: str = "google.gemma-3-27b-it"
    planning_model_id: str = "google.gemma-3-12b-it"
    embedding_model_id: str = "amazon.titan-embed-text-v2:0"
    embedding_dimension: int = 1024
    batch_size: int = 5
    default_strategy: str = '{"name": "default"}'
    ingest_state_machine_arn: str = ""
    max_running_documents: int = 10
    region: str = ""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> AwsEnvironment:
        """Read the settings from upper-case environment variables."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            name: env[name.upper()] for name in cls.model_fields if name.upper() in env
        }
        values.setdefault("region", env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION", ""))
        return cls.model_validate(values)

    def strategy(self, requested: Mapping[str, Any] | str | None = None) -> Strategy:
        """Resolve a strategy: a preset name, a preset plus overrides, or the default.

        A full strategy object (every field, as the state machines pass it) is taken as is.
        """
        if requested is None:
            requested = json.loads(self.default_strategy)
        if isinstance(requested, str):
            return resolve_strategy(requested)
        data = dict(requested)
        if set(data) >= set(Strategy.model_fields):
            return Strategy.model_validate(data)
        name = data.pop("name", None)
        known = name in PRESETS
        preset = resolve_strategy(name if known else None)
        changes = {k: v for k, v in data.items() if getattr(preset, k, None) != v}
        if name is not None and (changes or not known):
            changes["name"] = name
        return Strategy.model_validate({**preset.model_dump(), **changes})


class Runtime:
    """Adapters over S3, DynamoDB, Bedrock and OpenSearch Serverless for one environment."""

    def __init__(
        self,
        env: AwsEnvironment,
        session: Any,
        *,
        opensearch_client: Any | None = None,
    ) -> None:
        """Keep a boto3 session; clients are created on first use."""
        self.env = env
        self.session = session
        self._opensearch_client = opensearch_client

    def client(self, service: str) -> Any:
        """Return (and cache) a boto3 client of the session."""
        cache = self.__dict__.setdefault("_clients", {})
        if service not in cache:
            cache[service] = self.session.client(service, region_name=self.env.region or None)
        return cache[service]

    def _table(self, name: str) -> Any:
        return self.session.resource("dynamodb", region_name=self.env.region or None).Table(name)

    @cached_property
    def artifacts(self) -> S3ArtifactStore:
        """The artifacts bucket."""
        return S3ArtifactStore(self.client("s3"), self.env.artifacts_bucket)

    def bucket(self, name: str) -> S3ArtifactStore:
        """Any bucket (e.g. the documents bucket a source came from)."""
        return S3ArtifactStore(self.client("s3"), name)

    @cached_property
    def registry(self) -> DocumentRegistry:
        """The documents table."""
        return DocumentRegistry(self._table(self.env.documents_table))

    @cached_property
    def elements(self) -> DynamoElementTable:
        """The elements table."""
        return DynamoElementTable(self._table(self.env.elements_table))

    @cached_property
    def plans(self) -> DynamoPlanStore:
        """The plan versions table."""
        return DynamoPlanStore(self._table(self.env.plans_table))

    @cached_property
    def plan_cache(self) -> DynamoPlanCache:
        """Section plans cached by content and strategy (in the plans table)."""
        return DynamoPlanCache(self._table(self.env.plans_table))

    @cached_property
    def ledger(self) -> DynamoLedger:
        """The token ledger."""
        return DynamoLedger(self._table(self.env.ledger_table))

    def vision_model(self) -> VisionModel:
        """The conversion model (Bedrock Converse); Step Functions does the long backoff."""
        from drac.clients.bedrock import BedrockVisionModel
        from drac.clients.retry import RetryPolicy

        return BedrockVisionModel(
            self.env.conversion_model_id,
            client=self.client("bedrock-runtime"),
            retry=RetryPolicy(max_attempts=2, base_delay_s=1.0, max_delay_s=4.0),
        )

    def text_model(self) -> TextModel:
        """The planning model (Bedrock Converse)."""
        from drac.clients.bedrock import BedrockTextModel
        from drac.clients.retry import RetryPolicy

        return BedrockTextModel(
            self.env.planning_model_id,
            client=self.client("bedrock-runtime"),
            retry=RetryPolicy(max_attempts=2, base_delay_s=1.0, max_delay_s=4.0),
        )

    def embedder(self) -> Embedder:
        """Titan Text Embeddings V2."""
        from drac.embedders.bedrock import TitanEmbedder

        return TitanEmbedder(
            self.client("bedrock-runtime"),
            model_id=self.env.embedding_model_id,
            dimensions=self.env.embedding_dimension,
        )

    def index(self) -> OpenSearchChunkIndex:
        """The chunk index on OpenSearch Serverless (SigV4, service aoss)."""
        if self._opensearch_client is None:
            credentials = self.session.get_credentials()
            self._opensearch_client = make_client(
                self.env.collection_endpoint, self.env.region, credentials
            )
        return OpenSearchChunkIndex(self._opensearch_client, self.env.index_name)


@lru_cache(maxsize=1)
def lambda_runtime() -> Runtime:
    """The adapters of this Lambda container, built on first use from its environment."""
    import boto3

    return Runtime(AwsEnvironment.from_environ(), boto3.session.Session())
