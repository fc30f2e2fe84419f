"""The one stack of the drac cloud runtime."""

from __future__ import annotations

from aws_cdk import CfnOutput, Fn, Stack
from constructs import Construct

from drac.aws.access_audit import REPLAN_OUTPUT, REPLAN_STARTERS_OUTPUT, RETRIEVE_OUTPUT
from drac.aws.identity import REPLAN_ADMIN_SOURCE, REPLAN_TENANT_SOURCE_PREFIX
from infra.config import settings_from_context
from infra.functions import FunctionFactory
from infra.intake import REPLAN_DETAIL_TYPE
from infra.kb_transform import KbTransform
from infra.network import ConverterNetwork
from infra.observability import Observability
from infra.pipeline import Pipeline
from infra.search import Search
from infra.storage import Storage


class DracStack(Stack):
    """Storage, search, pipeline and observability of one deployment."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs) -> None:
        """Build the four constructs from the CDK context settings."""
        super().__init__(scope, construct_id, **kwargs)
        self.settings = settings_from_context(self.node)
        self.factory = FunctionFactory(self, self.settings)
        self.storage = Storage(self, "Storage", settings=self.settings)
        # Before search: with privateCollection its network policy names the VPC endpoint.
        self.network = (
            ConverterNetwork(self, "Network", settings=self.settings, storage=self.storage)
            if self.settings.deploy.isolated_converters
            else None
        )
        self.search = Search(
            self,
            "Search",
            settings=self.settings,
            function_factory=self.factory.make,
            network=self.network,
        )
        self.pipeline = Pipeline(
            self,
            "Pipeline",
            settings=self.settings,
            storage=self.storage,
            search=self.search,
            factory=self.factory,
            network=self.network,
        )
        self.search.finalise_access_policy()
        self.observability = Observability(
            self,
            "Observability",
            pipeline=self.pipeline,
            search=self.search,
            settings=self.settings,
        )
        outputs = {
            "DocumentsBucket": self.storage.documents.bucket_name,
            "ArtifactsBucket": self.storage.artifacts.bucket_name,
            "DocumentsTable": self.storage.documents_table.table_name,
            "EventBusName": self.pipeline.bus.event_bus_name,
            "ReplanAdminSource": REPLAN_ADMIN_SOURCE,
            "ReplanTenantSourcePrefix": REPLAN_TENANT_SOURCE_PREFIX,
            "ReplanDetailType": REPLAN_DETAIL_TYPE,
            "CollectionEndpoint": self.search.endpoint,
            "IndexName": self.settings.cloud.index_name,
            "IngestStateMachine": self.pipeline.ingest_machine.state_machine_arn,
            "RetrieveUrl": self.pipeline.stages.retrieve_url.url,
            "RetrieveFunction": self.pipeline.stages.retrieve.function_name,
            # what `drac cloud-audit` checks no principal but these reaches directly
            RETRIEVE_OUTPUT: self.pipeline.stages.retrieve.function_arn,
            REPLAN_OUTPUT: self.pipeline.replan_machine.state_machine_arn,
            REPLAN_STARTERS_OUTPUT: Fn.join(",", self._replan_starters()),
            "AlarmTopic": self.observability.topic.topic_arn,
        }
        for name, value in outputs.items():
            CfnOutput(self, name, value=value)
        self.kb_transform = (
            KbTransform(
                self, "KbTransformIntegration", settings=self.settings, factory=self.factory
            )
            if self.settings.deploy.kb_transform_bucket
            else None
        )

    def _replan_starters(self) -> list[str]:
        """The stack's roles that start the re-plan machine: the Starter (metadata that
        changes later), the bus rule's target role and the machine's own role (its
        Distributed Map starts child executions)."""
        stages, pipeline = self.pipeline.stages, self.pipeline
        roles = [
            stages.starter.role,
            pipeline.intake.replan_target_role,
            pipeline.replan_machine.role,
        ]
        return [role.role_arn for role in roles if role is not None]
