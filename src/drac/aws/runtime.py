"""The AWS adapters of one Lambda invocation environment, built lazily from a boto3 session.

Handlers own the session (created in their lazily-initialised factory); this module only asks
it for clients when an adapter is first used, so importing it never touches AWS.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property, lru_cache
from typing import Any

from drac.aws.document_access import (
    SESSION_SECONDS,
    DocumentScope,
    session_name,
    session_policy,
)
from drac.aws.dynamo import (
    DynamoDocumentRegistry,
    DynamoElementTable,
    DynamoLedger,
    DynamoPlanCache,
    DynamoPlanStore,
)
from drac.aws.opensearch import OpenSearchChunkIndex, make_client
from drac.aws.resources import CloudResources
from drac.aws.s3 import S3ArtifactStore
from drac.ports import Embedder, TextModel, VisionModel
from drac.settings import SETTINGS_VARIABLE, Settings, SettingsError

INTERACTIVE_BEDROCK = "bedrock-runtime (interactive)"
INTERACTIVE_ATTEMPTS = 4
INTERACTIVE_READ_TIMEOUT_S = 5.0


class Runtime:
    """Adapters over S3, DynamoDB, Bedrock and OpenSearch Serverless for one environment."""

    def __init__(
        self,
        resources: CloudResources,
        settings: Settings,
        session: Any,
        *,
        opensearch_client: Any | None = None,
        session_for: Callable[[Mapping[str, str]], Any] | None = None,
    ) -> None:
        """Keep a boto3 session; clients are created on first use. `session_for` makes the
        session of assumed-role credentials (a plain boto3 session by default)."""
        self.resources = resources
        self.settings = settings
        self.session = session
        self._opensearch_client = opensearch_client
        self._session_for = session_for or _credentials_session
        self._clients: dict[str, Any] = {}

    def for_document(self, document_id: str, scope: DocumentScope) -> Runtime:
        """Adapters whose every call uses credentials reaching only `scope`: the converter
        access role assumed with the scope's session policy (see drac.aws.document_access).
        Transient STS errors reach the handler's wrapper, which makes them retryable."""
        if not self.resources.converter_access_role_arn:
            raise RuntimeError("CONVERTER_ACCESS_ROLE_ARN is not set: no per-document access")
        region = self.resources.region
        # the regional endpoint: the converters' VPC has an STS interface endpoint, and its
        # DNS Firewall answers no global name
        sts = self.client(
            "sts", **({"endpoint_url": f"https://sts.{region}.amazonaws.com"} if region else {})
        )
        partition = self.resources.converter_access_role_arn.split(":")[1]
        answer = sts.assume_role(
            RoleArn=self.resources.converter_access_role_arn,
            RoleSessionName=session_name(document_id),
            Policy=session_policy(scope, partition),
            DurationSeconds=SESSION_SECONDS,
        )
        return Runtime(
            self.resources,
            self.settings,
            self._session_for(answer["Credentials"]),
            session_for=self._session_for,
        )

    def client(self, service: str, **kwargs: Any) -> Any:
        """Return (and cache) a boto3 client of the session."""
        if service not in self._clients:
            self._clients[service] = self.session.client(
                service, region_name=self.resources.region or None, **kwargs
            )
        return self._clients[service]

    def _table(self, name: str) -> Any:
        return self.session.resource("dynamodb", region_name=self.resources.region or None).Table(
            name
        )

    @cached_property
    def artifacts(self) -> S3ArtifactStore:
        """The artifacts bucket."""
        return S3ArtifactStore(self.client("s3"), self.resources.artifacts_bucket)

    def bucket(self, name: str) -> S3ArtifactStore:
        """Any bucket (e.g. the documents bucket a source came from)."""
        return S3ArtifactStore(self.client("s3"), name)

    @cached_property
    def registry(self) -> DynamoDocumentRegistry:
        """The documents and sources tables."""
        return DynamoDocumentRegistry(
            self._table(self.resources.documents_table), self._table(self.resources.sources_table)
        )

    @cached_property
    def elements(self) -> DynamoElementTable:
        """The elements table."""
        return DynamoElementTable(self._table(self.resources.elements_table))

    @cached_property
    def plans(self) -> DynamoPlanStore:
        """Plan versions: pointers in the plans table, bodies in the artifacts bucket."""
        return DynamoPlanStore(self._table(self.resources.plans_table), self.artifacts)

    @cached_property
    def plan_cache(self) -> DynamoPlanCache:
        """Section plans cached by content and strategy (in the plans table)."""
        return DynamoPlanCache(
            self._table(self.resources.plans_table), ttl_days=self.settings.cloud.plan_cache_days
        )

    @cached_property
    def ledger(self) -> DynamoLedger:
        """The token ledger."""
        return DynamoLedger(
            self._table(self.resources.ledger_table),
            ttl_days=self.settings.cloud.ledger_retention_days,
        )

    def _bedrock(self) -> Any:
        """Bedrock with a read timeout above the longest generation and no SDK retries:
        Step Functions owns the retries (a retried read timeout restarts the generation)."""
        from drac.clients.bedrock_runtime import bedrock_config

        return self.client(
            "bedrock-runtime",
            config=bedrock_config(self.settings.models.model_timeout_s, attempts=1),
        )

    def _interactive_bedrock(self) -> Any:
        """Bedrock for a caller who is waiting (the retrieval API): nobody else retries, so
        the SDK does (standard mode: throttles, 5xx and timeouts, with backoff), each try
        within a short read timeout, all well inside the function's 30 s."""
        from drac.clients.bedrock_runtime import bedrock_config

        if INTERACTIVE_BEDROCK not in self._clients:
            self._clients[INTERACTIVE_BEDROCK] = self.session.client(
                "bedrock-runtime",
                region_name=self.resources.region or None,
                config=bedrock_config(INTERACTIVE_READ_TIMEOUT_S, attempts=INTERACTIVE_ATTEMPTS),
            )
        return self._clients[INTERACTIVE_BEDROCK]

    def vision_model(self) -> VisionModel:
        """The conversion model (Bedrock Converse)."""
        from drac.clients.bedrock import BedrockVisionModel

        return BedrockVisionModel(
            self.settings.models.conversion_model,
            client=self._bedrock(),
            max_tokens=self.settings.models.conversion_max_tokens,
            temperature=self.settings.models.temperature,
        )

    def escalation_model(self) -> VisionModel:
        """The second conversion model (`escalateTo`), with the conversion model's limits.

        Raises SettingsError when the deployment names none (or not a Bedrock one)."""
        from drac.aws.stages.escalation import escalation_model_id
        from drac.clients.bedrock import BedrockVisionModel

        model_id = escalation_model_id(self.settings)
        if model_id is None:
            raise SettingsError("escalateTo is not set: the deployment escalates no page")
        return BedrockVisionModel(
            model_id,
            client=self._bedrock(),
            max_tokens=self.settings.models.conversion_max_tokens,
            temperature=self.settings.models.temperature,
        )

    def text_model(self, model_id: str | None = None) -> TextModel:
        """The planning model (Bedrock Converse): `model_id`, else the settings' one."""
        from drac.clients.bedrock import BedrockTextModel

        return BedrockTextModel(
            model_id or self.settings.models.planning_model,
            client=self._bedrock(),
            temperature=self.settings.models.temperature,
            max_answer_tokens=self.settings.models.planning_max_tokens,
        )

    def embedder(self, *, interactive: bool = False) -> Embedder:
        """Titan Text Embeddings V2: in the pipeline with the other Bedrock models' client
        settings, for the retrieval API (`interactive`) with SDK retries."""
        from drac.embedders.bedrock import TitanEmbedder

        return TitanEmbedder(
            self._interactive_bedrock() if interactive else self._bedrock(),
            model_id=self.settings.models.embedding_model_id,
            dimensions=self.settings.models.embedding_dimension,
        )

    def index(
        self, embedder: Embedder | None = None, *, interactive: bool = False
    ) -> OpenSearchChunkIndex:
        """The chunk index on OpenSearch Serverless (SigV4, service aoss). `interactive` (the
        retrieval API, whose container makes no other client): the client retries 429 and
        5xx itself; in the pipeline Step Functions retries them (TransientError)."""
        if self._opensearch_client is None:
            self._opensearch_client = make_client(
                self.resources.collection_endpoint,
                self.resources.region,
                self.session.get_credentials(),
                retries=INTERACTIVE_ATTEMPTS - 1 if interactive else 0,
            )
        return OpenSearchChunkIndex(
            self._opensearch_client,
            self.settings.cloud.index_name,
            embedder=embedder,
            on_throttled=None if interactive else _count_search_throttles,
        )


def _count_search_throttles(count: int) -> None:
    """Publish the 429s the collection answered the pipeline (the SearchThrottling alarm's
    metric: AWS/AOSS counts every 4xx together)."""
    from drac.aws.lambda_support import MetricUnit, metrics

    metrics.add_metric(name="SearchThrottled", unit=MetricUnit.Count, value=count)


def _credentials_session(credentials: Mapping[str, str]) -> Any:
    """A boto3 session of temporary credentials (AssumeRole's Credentials)."""
    import boto3

    return boto3.session.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )


@lru_cache(maxsize=1)
def lambda_runtime() -> Runtime:
    """The adapters of this Lambda container, built on first use from its environment."""
    import boto3

    settings = Settings.from_json(os.environ.get(SETTINGS_VARIABLE, "{}"))
    return Runtime(CloudResources.from_environ(), settings, boto3.session.Session())
