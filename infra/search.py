"""Search: an OpenSearch Serverless vector collection, its policies and the chunk index."""

from __future__ import annotations

import json

from aws_cdk import CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchserverless as aoss
from aws_cdk import custom_resources as cr
from constructs import Construct

from drac.aws.opensearch import mapping_digest
from drac.settings import Settings
from infra.config import removal_policy
from infra.network import ConverterNetwork


class Search(Construct):
    """A VECTORSEARCH collection whose data-access policy names only the roles that use it."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        function_factory,
        network: ConverterNetwork | None = None,
    ) -> None:
        """Create the collection with encryption and network policies and the index resource.

        `function_factory(id, handler_dir, **kwargs)` builds a Lambda with the project layers.
        With `privateCollection` the network policy admits only `network`'s OpenSearch
        Serverless VPC endpoint, and the index set-up function runs in its search subnets.
        """
        super().__init__(scope, construct_id)
        name = settings.deploy.collection_for(Stack.of(self).stack_name)
        self.collection_name = name
        self.settings = settings
        self._principals: list[iam.IRole] = []
        self._readers: list[iam.IRole] = []
        encryption = aoss.CfnSecurityPolicy(
            self,
            "Encryption",
            name=f"{name}-enc",
            type="encryption",
            policy=json.dumps(
                {
                    "Rules": [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}],
                    "AWSOwnedKey": True,
                }
            ),
        )
        endpoint = network.collection_endpoint if network else None
        if settings.deploy.private_collection and endpoint is None:
            raise ValueError("privateCollection needs the VPC endpoint of the converters' VPC")
        access: dict = (
            {"AllowFromPublic": False, "SourceVPCEs": [endpoint.attr_id]}
            if endpoint is not None
            else {"AllowFromPublic": True}
        )
        rules = [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}]
        network_policy = aoss.CfnSecurityPolicy(
            self,
            "Network",
            name=f"{name}-net",
            type="network",
            policy=(
                Stack.of(self).to_json_string([{"Rules": rules, **access}])
                if endpoint
                else json.dumps([{"Rules": rules, **access}])
            ),
        )
        self.group = self._capacity_group(name, settings)
        self.collection = aoss.CfnCollection(
            self,
            "Collection",
            name=name,
            type="VECTORSEARCH",
            standby_replicas=settings.deploy.collection_standby_replicas,
            description="drac chunk index (vectors + BM25)",
            collection_group_name=self.group.name if self.group else None,
        )
        # Retained with the stack's removal policy like the tables and buckets: a deleted or
        # replaced collection is an outage until every document is re-planned into a new one
        self.collection.apply_removal_policy(removal_policy(settings))
        if self.group:
            self.collection.add_dependency(self.group)
        self.collection.add_resource_dependency(encryption)
        self.collection.add_resource_dependency(network_policy)
        self.endpoint = self.collection.attr_collection_endpoint
        self.collection_arn = self.collection.attr_arn

        self.index_function = function_factory(
            "IndexSetup",
            "index_setup",
            timeout=Duration.minutes(14),
            environment={"COLLECTION_ENDPOINT": self.endpoint},
            network=network.search if network else None,
        )
        self.grant_index_access(self.index_function.role)
        provider = cr.Provider(
            self,
            "IndexProvider",
            on_event_handler=self.index_function,
            log_group=logs.LogGroup(
                self,
                "ProviderLogs",
                retention=logs.RetentionDays.ONE_MONTH,
                removal_policy=RemovalPolicy.DESTROY,
            ),
        )
        self.index_resource = CustomResource(
            self,
            "ChunkIndex",
            service_token=provider.service_token,
            resource_type="Custom::DracChunkIndex",
            properties={
                "Endpoint": self.endpoint,
                "IndexName": settings.cloud.index_name,
                "Dimension": str(settings.models.embedding_dimension),
                # a changed mapping is an Update, which adds the new fields to the index
                "Mapping": mapping_digest(settings.models.embedding_dimension),
            },
        )

    def _capacity_group(self, name: str, settings: Settings) -> aoss.CfnCollectionGroup | None:
        """A collection group capping the collection's OCUs (maxIndexingOcu, maxSearchOcu),
        or None when neither is set (the account's limits apply)."""
        if settings.deploy.max_indexing_ocu is None and settings.deploy.max_search_ocu is None:
            return None
        return aoss.CfnCollectionGroup(
            self,
            "CapacityGroup",
            name=f"{name}-grp",
            standby_replicas=settings.deploy.collection_standby_replicas,
            capacity_limits=aoss.CfnCollectionGroup.CapacityLimitsProperty(
                max_indexing_capacity_in_ocu=settings.deploy.max_indexing_ocu,
                max_search_capacity_in_ocu=settings.deploy.max_search_ocu,
            ),
            description="drac: caps the chunk collection's OCUs",
        )

    def grant_index_access(self, role: iam.IRole | None) -> None:
        """Let a role read and write the index (IAM and data-access policy)."""
        self._grant(role)
        self._principals.append(role)  # type: ignore[arg-type]

    def grant_index_read(self, role: iam.IRole | None) -> None:
        """Let a role query the index only (IAM and data-access policy)."""
        self._grant(role)
        self._readers.append(role)  # type: ignore[arg-type]

    def _grant(self, role: iam.IRole | None) -> None:
        if role is None:
            raise ValueError("a function without a role cannot be granted index access")
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["aoss:APIAccessAll"], resources=[self.collection_arn])
        )

    def finalise_access_policy(self) -> aoss.CfnAccessPolicy:
        """Create the data-access policy for every role granted so far and the configured
        reader principals (call once, last)."""
        name = self.collection_name
        index = f"index/{name}/{self.settings.cloud.index_name}"
        collection = f"collection/{name}"
        rules = [
            {
                "Rules": [
                    {
                        "ResourceType": "index",
                        "Resource": [index],
                        "Permission": [
                            "aoss:CreateIndex",
                            "aoss:DescribeIndex",
                            "aoss:UpdateIndex",
                            "aoss:ReadDocument",
                            "aoss:WriteDocument",
                        ],
                    },
                    {
                        "ResourceType": "collection",
                        "Resource": [collection],
                        "Permission": ["aoss:DescribeCollectionItems"],
                    },
                ],
                "Principal": [role.role_arn for role in self._principals],
                "Description": "the pipeline's writers",
            }
        ]
        readers = [role.role_arn for role in self._readers] + list(
            self.settings.cloud.reader_principals
        )
        if readers:
            rules.append(
                {
                    "Rules": [
                        {
                            "ResourceType": "index",
                            "Resource": [index],
                            "Permission": ["aoss:DescribeIndex", "aoss:ReadDocument"],
                        },
                        {
                            "ResourceType": "collection",
                            "Resource": [collection],
                            "Permission": ["aoss:DescribeCollectionItems"],
                        },
                    ],
                    "Principal": readers,
                    "Description": "readers: the retrieval API and the readerPrincipals setting",
                }
            )
        policy = aoss.CfnAccessPolicy(
            self,
            "DataAccess",
            name=f"{name}-data",
            type="data",
            policy=Stack.of(self).to_json_string(rules),
        )
        self.index_resource.node.add_dependency(policy)
        return policy
