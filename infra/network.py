"""Where the converting functions run: a VPC no route leaves.

Normalise, ReadSpreadsheet and Render run untrusted-input parsers (LibreOffice, openpyxl,
pdfium). In the VPC they have subnets without a NAT or internet gateway, so a document that
makes a parser fetch a URL reaches nothing; their own S3 and DynamoDB calls use gateway
endpoints (free), whose policies allow only the project's buckets and tables; an STS
interface endpoint (billed per AZ-hour) lets each invocation assume its per-document access
role, and nothing else; a DNS Firewall answers only those endpoints' names
(infra/dns_firewall.py). Function logs
(and the metrics Powertools writes into them as EMF) are shipped by Lambda itself; with
`tracingEndpoint` an X-Ray interface endpoint (billed per AZ-hour) carries trace segments.

With `privateCollection` the functions that index or search get subnets of their own in the
same VPC, with their own gateway endpoints (their buckets and tables), a Bedrock runtime
interface endpoint (the embedding model only) and the OpenSearch Serverless VPC endpoint the
collection's network policy names (docs/aws.md, "Converters without a network").
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchserverless as aoss
from constructs import Construct

from drac.settings import Settings
from infra.config import model_arns, removal_policy
from infra.dns_firewall import DnsFirewall
from infra.functions import Placement
from infra.storage import Storage

TRACE_ACTIONS = [
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
]
"""What the X-Ray daemon calls (X-Ray has no resource-level permissions: the endpoint policy
limits the actions)."""
CONVERTERS, SEARCH = "isolated", "search"
"""Subnet group names: the converters' (created first, so its address ranges never move) and
the indexing and searching functions' (with `privateCollection`)."""


class ConverterNetwork(Construct):
    """Isolated subnets in two AZs, gateway endpoints for S3 and DynamoDB, a flow log."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: Settings, storage: Storage
    ) -> None:
        """Create the VPC, its endpoints and the converters' security group."""
        super().__init__(scope, construct_id)
        groups = [CONVERTERS] + ([SEARCH] if settings.deploy.private_collection else [])
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=0,
            subnet_configuration=[
                ec2.SubnetConfiguration(
                    name=name, subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24
                )
                for name in groups
            ],
            restrict_default_security_group=False,
        )
        self.subnets = ec2.SubnetSelection(subnet_group_name=CONVERTERS)
        log_group = logs.LogGroup(
            self,
            "FlowLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=removal_policy(settings),
        )
        self.vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(log_group),
            traffic_type=ec2.FlowLogTrafficType.REJECT,
        )
        self.s3_endpoint, self.dynamodb_endpoint = self._gateway_endpoints(
            "", self.subnets, [storage.documents, storage.artifacts], [storage.documents_table]
        )
        # No ingress. Egress is open in the group but leads nowhere: the subnets' only
        # routes are the local network and the two gateway endpoints.
        self.security_group = ec2.SecurityGroup(
            self,
            "Converters",
            vpc=self.vpc,
            allow_all_outbound=True,
            description="drac converters: no ingress; the subnets route only to S3/DynamoDB",
        )
        # Each converter invocation assumes its access role with a session policy naming one
        # document (drac.aws.document_access): STS through an interface endpoint, its policy
        # allowing only sts:AssumeRole of those roles (Stages adds them).
        self.sts_endpoint = self.vpc.add_interface_endpoint(
            "Sts",
            service=ec2.InterfaceVpcEndpointAwsService.STS,
            subnets=self.subnets,
            private_dns_enabled=True,
            open=False,
        )
        self.sts_endpoint.connections.allow_default_port_from(self.security_group)
        self.tracing_endpoint: ec2.InterfaceVpcEndpoint | None = None
        if settings.deploy.tracing_endpoint:
            self.tracing_endpoint = self.vpc.add_interface_endpoint(
                "XRay",
                service=ec2.InterfaceVpcEndpointAwsService.XRAY,
                subnets=self.subnets,
                private_dns_enabled=True,
                open=False,
            )
            self.tracing_endpoint.connections.allow_default_port_from(self.security_group)
            self.tracing_endpoint.add_to_policy(
                iam.PolicyStatement(
                    principals=[iam.AnyPrincipal()], actions=TRACE_ACTIONS, resources=["*"]
                )
            )
        self.search: Placement | None = None
        self.collection_endpoint: aoss.CfnVpcEndpoint | None = None
        if settings.deploy.private_collection:
            self._private_search(settings, storage)
        # The resolver answers only the endpoints' names (no DNS exfiltration).
        self.dns_firewall = DnsFirewall(
            self,
            "DnsFirewall",
            vpc=self.vpc,
            tracing=settings.deploy.tracing_endpoint,
            private_collection=settings.deploy.private_collection,
        )

    @property
    def converters(self) -> Placement:
        """Where Normalise, ReadSpreadsheet and Render run."""
        return (self.vpc, self.subnets, self.security_group)

    def _gateway_endpoints(
        self, prefix: str, subnets: ec2.SubnetSelection, buckets: list, tables: list
    ) -> tuple[ec2.GatewayVpcEndpoint, ec2.GatewayVpcEndpoint]:
        """S3 and DynamoDB gateway endpoints on the subnets' route tables, whose policies allow
        only these buckets and tables."""
        s3 = self.vpc.add_gateway_endpoint(
            f"{prefix}S3", service=ec2.GatewayVpcEndpointAwsService.S3, subnets=[subnets]
        )
        s3.add_to_policy(
            iam.PolicyStatement(
                principals=[iam.AnyPrincipal()],
                actions=["s3:*"],
                resources=[arn for b in buckets for arn in (b.bucket_arn, b.arn_for_objects("*"))],
            )
        )
        dynamodb = self.vpc.add_gateway_endpoint(
            f"{prefix}DynamoDb",
            service=ec2.GatewayVpcEndpointAwsService.DYNAMODB,
            subnets=[subnets],
        )
        dynamodb.add_to_policy(
            iam.PolicyStatement(
                principals=[iam.AnyPrincipal()],
                actions=["dynamodb:*"],
                resources=[arn for t in tables for arn in (t.table_arn, f"{t.table_arn}/index/*")],
            )
        )
        return s3, dynamodb

    def _private_search(self, settings: Settings, storage: Storage) -> None:
        """Subnets for the functions that index or search, with the endpoints they call."""
        stack = Stack.of(self)
        subnets = ec2.SubnetSelection(subnet_group_name=SEARCH)
        self._gateway_endpoints(
            "Search",
            subnets,
            [storage.documents, storage.artifacts],
            [storage.documents_table, storage.sources_table, storage.ledger_table],
        )
        group = ec2.SecurityGroup(
            self,
            "Search",
            vpc=self.vpc,
            allow_all_outbound=True,
            description="drac indexing and search: no ingress; routes only to its endpoints",
        )
        bedrock = self.vpc.add_interface_endpoint(
            "BedrockRuntime",
            service=ec2.InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
            subnets=subnets,
            private_dns_enabled=True,
            open=False,
        )
        bedrock.connections.allow_default_port_from(group)
        bedrock.add_to_policy(
            iam.PolicyStatement(
                principals=[iam.AnyPrincipal()],
                actions=["bedrock:InvokeModel"],
                resources=model_arns(
                    settings.models.embedding_model_id, stack.region, stack.account, stack.partition
                ),
            )
        )
        endpoint_group = ec2.SecurityGroup(
            self,
            "CollectionEndpoint",
            vpc=self.vpc,
            allow_all_outbound=False,
            description="drac OpenSearch Serverless VPC endpoint: 443 from indexing and search",
        )
        endpoint_group.add_ingress_rule(group, ec2.Port.tcp(443), "indexing and search")
        collection = settings.deploy.collection_for(stack.stack_name)
        self.collection_endpoint = aoss.CfnVpcEndpoint(
            self,
            "Collection",
            name=f"{collection}-vpce",
            vpc_id=self.vpc.vpc_id,
            subnet_ids=self.vpc.select_subnets(subnet_group_name=SEARCH).subnet_ids,
            security_group_ids=[endpoint_group.security_group_id],
        )
        self.search = (self.vpc, subnets, group)
