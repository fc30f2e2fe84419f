"""Where the converting functions run: a VPC no route leaves.

Normalise, ReadSpreadsheet and Render run untrusted-input parsers (LibreOffice, openpyxl,
pdfium). In the VPC they have subnets without a NAT or internet gateway, so a document that
makes a parser fetch a URL reaches nothing; their own S3 and DynamoDB calls use gateway
endpoints (free), whose policies allow only the project's buckets and tables. Function logs
(and the metrics Powertools writes into them as EMF) are shipped by Lambda itself; with
`tracingEndpoint` an X-Ray interface endpoint (billed per AZ-hour) carries trace segments
(docs/aws.md, "Converters without a network").
"""

from __future__ import annotations

from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct

from drac.settings import Settings
from infra.config import removal_policy
from infra.storage import Storage


TRACE_ACTIONS = ["xray:PutTraceSegments", "xray:PutTelemetryRecords",
                 "xray:GetSamplingRules", "xray:GetSamplingTargets"]
"""What the X-Ray daemon calls (X-Ray has no resource-level permissions: the endpoint policy
limits the actions)."""


class ConverterNetwork(Construct):
    """Isolated subnets in two AZs, gateway endpoints for S3 and DynamoDB, a flow log."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: Settings, storage: Storage
    ) -> None:
        """Create the VPC, its endpoints and the converters' security group."""
        super().__init__(scope, construct_id)
        self.vpc = ec2.Vpc(
            self, "Vpc", max_azs=2, nat_gateways=0,
            subnet_configuration=[ec2.SubnetConfiguration(
                name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24)],
            restrict_default_security_group=False,
        )
        self.subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        log_group = logs.LogGroup(self, "FlowLogs", retention=logs.RetentionDays.ONE_MONTH,
                                  removal_policy=removal_policy(settings))
        self.vpc.add_flow_log(
            "FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(log_group),
            traffic_type=ec2.FlowLogTrafficType.REJECT,
        )
        buckets = [storage.documents, storage.artifacts]
        self.s3_endpoint = self.vpc.add_gateway_endpoint(
            "S3", service=ec2.GatewayVpcEndpointAwsService.S3, subnets=[self.subnets])
        self.s3_endpoint.add_to_policy(iam.PolicyStatement(
            principals=[iam.AnyPrincipal()], actions=["s3:*"],
            resources=[arn for b in buckets for arn in (b.bucket_arn, b.arn_for_objects("*"))],
        ))
        self.dynamodb_endpoint = self.vpc.add_gateway_endpoint(
            "DynamoDb", service=ec2.GatewayVpcEndpointAwsService.DYNAMODB,
            subnets=[self.subnets])
        self.dynamodb_endpoint.add_to_policy(iam.PolicyStatement(
            principals=[iam.AnyPrincipal()], actions=["dynamodb:*"],
            resources=[storage.documents_table.table_arn,
                       f"{storage.documents_table.table_arn}/index/*"],
        ))
        # No ingress. Egress is open in the group but leads nowhere: the subnets' only
        # routes are the local network and the two gateway endpoints.
        self.security_group = ec2.SecurityGroup(
            self, "Converters", vpc=self.vpc, allow_all_outbound=True,
            description="drac converters: no ingress; the subnets route only to S3/DynamoDB",
        )
        self.tracing_endpoint: ec2.InterfaceVpcEndpoint | None = None
        if settings.tracing_endpoint:
            self.tracing_endpoint = self.vpc.add_interface_endpoint(
                "XRay", service=ec2.InterfaceVpcEndpointAwsService.XRAY, subnets=self.subnets,
                private_dns_enabled=True, open=False,
            )
            self.tracing_endpoint.connections.allow_default_port_from(self.security_group)
            self.tracing_endpoint.add_to_policy(iam.PolicyStatement(
                principals=[iam.AnyPrincipal()], actions=TRACE_ACTIONS, resources=["*"]))
