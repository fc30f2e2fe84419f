"""A Route 53 Resolver DNS Firewall on the converters' VPC: names it needs, nothing else.

No route leaves the isolated subnets, but the VPC's resolver still answers (and recursively
looks up) any public name, so a compromised parser could spell data into the names it asks
for ("DNS exfiltration", the use AWS documents DNS Firewall for: Route 53 Developer Guide,
"Route 53 Resolver DNS Firewall"). One rule group, associated with the VPC: the first rule
allows exactly the endpoint names the functions in the VPC call, the second blocks every other
name with NXDOMAIN. A domain-list entry `*.example.com` matches the names below
`example.com`, not `example.com` itself, so both forms are listed where both are used.
"""

from __future__ import annotations

from aws_cdk import Aws
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_route53resolver as resolver
from constructs import Construct

ALLOW_PRIORITY, BLOCK_PRIORITY = 100, 200
ASSOCIATION_PRIORITY = 101
"""Rules are evaluated lowest priority first; an association's priority is 101-9,899 (the
lowest and highest values are reserved for AWS Firewall Manager)."""


def allowed_names(region: str, *, tracing: bool, private_collection: bool) -> list[str]:
    """The DNS names the functions in the VPC resolve: S3 (path and virtual-hosted style, the
    regional names and the global ones botocore uses in us-east-1) and DynamoDB through their
    gateway endpoints; STS's regional name through its interface endpoint; X-Ray, Bedrock
    runtime and OpenSearch Serverless where the stack puts an interface endpoint for them."""
    names = [
        f"s3.{region}.amazonaws.com",
        f"*.s3.{region}.amazonaws.com",
        "s3.amazonaws.com",
        "*.s3.amazonaws.com",
        f"dynamodb.{region}.amazonaws.com",
        f"sts.{region}.amazonaws.com",  # the converters' per-document credentials
    ]
    if tracing:
        names.append(f"xray.{region}.amazonaws.com")
    if private_collection:
        names += [f"bedrock-runtime.{region}.amazonaws.com", f"*.{region}.aoss.amazonaws.com"]
    return names


class DnsFirewall(Construct):
    """Allow the endpoints' names, block every other name, on one VPC."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        tracing: bool,
        private_collection: bool,
    ) -> None:
        """Create the two domain lists, the rule group and its association with the VPC."""
        super().__init__(scope, construct_id)
        self.allowed = resolver.CfnFirewallDomainList(
            self,
            "Allowed",
            domains=allowed_names(
                Aws.REGION, tracing=tracing, private_collection=private_collection
            ),
        )
        self.everything = resolver.CfnFirewallDomainList(self, "Everything", domains=["*"])
        self.rule_group = resolver.CfnFirewallRuleGroup(
            self,
            "Rules",
            firewall_rules=[
                resolver.CfnFirewallRuleGroup.FirewallRuleProperty(
                    action="ALLOW",
                    firewall_domain_list_id=self.allowed.attr_id,
                    priority=ALLOW_PRIORITY,
                ),
                resolver.CfnFirewallRuleGroup.FirewallRuleProperty(
                    action="BLOCK",
                    block_response="NXDOMAIN",
                    firewall_domain_list_id=self.everything.attr_id,
                    priority=BLOCK_PRIORITY,
                ),
            ],
        )
        self.association = resolver.CfnFirewallRuleGroupAssociation(
            self,
            "Association",
            firewall_rule_group_id=self.rule_group.attr_id,
            vpc_id=vpc.vpc_id,
            priority=ASSOCIATION_PRIORITY,
        )
