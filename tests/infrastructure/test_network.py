"""The converting functions sit where no route leaves, by default: isolated subnets (no NAT,
no internet gateway, no route at all beyond the VPC's own range), gateway endpoints for S3 and
DynamoDB whose policies name only the project's resources, the other functions outside the VPC.
`isolatedConverters=false` (development) deploys no VPC; `tracingEndpoint=true` adds an X-Ray
interface endpoint reachable only from the converters. Which calls the converters really make
through these endpoints is checked in tests/e2e/test_network.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.network import TRACE_ACTIONS
from tests.infrastructure.conftest import Synth, synthesise
from tests.infrastructure.helpers import as_list, flatten

EGRESS_TYPES = (
    "AWS::EC2::InternetGateway",
    "AWS::EC2::EgressOnlyInternetGateway",
    "AWS::EC2::NatGateway",
    "AWS::EC2::VPCGatewayAttachment",
    "AWS::EC2::TransitGatewayAttachment",
    "AWS::EC2::VPCPeeringConnection",
    "AWS::EC2::VPNGateway",
    "AWS::EC2::EIP",
)


def _converters(synth: Synth) -> list[Any]:
    stages = synth.stack.pipeline.stages
    return [stages.normalise, stages.read_spreadsheet, stages.render, stages.read_scans]


def _subnets_of(synth: Synth, fn: Any) -> set[str]:
    config = synth.resources[synth.logical_id(fn)]["Properties"]["VpcConfig"]
    return {subnet["Ref"] for subnet in config["SubnetIds"]}


def _route_tables(synth: Synth, subnets: set[str]) -> set[str]:
    return {
        a["Properties"]["RouteTableId"]["Ref"]
        for a in synth.of_type("AWS::EC2::SubnetRouteTableAssociation").values()
        if a["Properties"]["SubnetId"]["Ref"] in subnets
    }


def test_by_default_the_converters_run_in_isolated_subnets_with_no_route_out(
    synth: Synth,
) -> None:
    for kind in EGRESS_TYPES:
        assert not synth.of_type(kind), kind
    assert synth.stack.settings.deploy.isolated_converters
    converters = _converters(synth)
    subnets = _subnets_of(synth, converters[0])
    assert len(subnets) == 2
    for fn in converters:
        assert _subnets_of(synth, fn) == subnets, fn.node.id
    for subnet in subnets:
        assert synth.resources[subnet]["Properties"]["MapPublicIpOnLaunch"] is False
    tables = _route_tables(synth, subnets)
    assert len(tables) == 2
    routes = [r["Properties"] for r in synth.of_type("AWS::EC2::Route").values()]
    assert [r for r in routes if r["RouteTableId"]["Ref"] in tables] == []
    assert routes == []  # no default route anywhere in the template
    stages = synth.stack.pipeline.stages
    for fn in stages.all():
        if fn not in converters:
            assert "VpcConfig" not in synth.resources[synth.logical_id(fn)]["Properties"]
    assert synth.of_type("AWS::EC2::FlowLog")


def _ingress(synth: Synth, group: str) -> list[tuple[int, int, str]]:
    """(from port, to port, source group) of every ingress rule of a security group, inline
    or as its own resource (a rule must name a source group: no address range)."""
    rules = list(synth.resources[group]["Properties"].get("SecurityGroupIngress", []))
    rules += [
        i["Properties"]
        for i in synth.of_type("AWS::EC2::SecurityGroupIngress").values()
        if i["Properties"]["GroupId"]["Fn::GetAtt"][0] == group
    ]
    return [
        (r["FromPort"], r["ToPort"], r["SourceSecurityGroupId"]["Fn::GetAtt"][0]) for r in rules
    ]


def _endpoint_resources(endpoint: dict[str, Any]) -> list[str]:
    (statement,) = endpoint["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow" and "Condition" not in statement
    return [flatten(resource) for resource in as_list(statement["Resource"])]


def test_the_endpoints_serve_only_the_converters_and_allow_only_the_projects_resources(
    synth: Synth,
) -> None:
    tables = _route_tables(synth, _subnets_of(synth, _converters(synth)[0]))
    endpoints = {
        str(flatten(e["Properties"]["ServiceName"])).rsplit(".", 1)[-1]: e["Properties"]
        for e in synth.of_type("AWS::EC2::VPCEndpoint").values()
    }
    assert sorted(endpoints) == ["dynamodb", "s3", "sts"]  # sts: an interface endpoint (below)
    for endpoint in (endpoints["s3"], endpoints["dynamodb"]):
        assert endpoint["VpcEndpointType"] == "Gateway"
        assert {t["Ref"] for t in endpoint["RouteTableIds"]} == tables
    storage = synth.stack.storage
    buckets = [synth.logical_id(b) for b in (storage.documents, storage.artifacts)]
    assert sorted(_endpoint_resources(endpoints["s3"])) == sorted(
        [f"<{b}.Arn>" for b in buckets] + [f"<{b}.Arn>/*" for b in buckets]
    )
    table = synth.logical_id(storage.documents_table)
    assert sorted(_endpoint_resources(endpoints["dynamodb"])) == [
        f"<{table}.Arn>",
        f"<{table}.Arn>/index/*",
    ]


def test_turned_off_for_development_no_vpc_is_deployed(alternate: Synth) -> None:
    assert not alternate.stack.settings.deploy.isolated_converters
    for kind in ("AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::VPCEndpoint"):
        assert not alternate.of_type(kind), kind
    for fn in _converters(alternate):
        assert "VpcConfig" not in alternate.resources[alternate.logical_id(fn)]["Properties"]


@pytest.fixture(scope="module")
def traced() -> Synth:
    """The stack with `-c tracingEndpoint=true`."""
    return synthesise({"tracingEndpoint": True})


def test_the_tracing_endpoint_carries_only_trace_uploads_from_the_converters(
    traced: Synth,
) -> None:
    subnets = _subnets_of(traced, _converters(traced)[0])
    (endpoint,) = [
        e["Properties"]
        for e in traced.of_type("AWS::EC2::VPCEndpoint").values()
        if flatten(e["Properties"]["ServiceName"]).endswith(".xray")
    ]
    assert endpoint["VpcEndpointType"] == "Interface"
    assert endpoint["PrivateDnsEnabled"] is True
    assert {s["Ref"] for s in endpoint["SubnetIds"]} == subnets
    (statement,) = endpoint["PolicyDocument"]["Statement"]
    assert sorted(as_list(statement["Action"])) == sorted(TRACE_ACTIONS)
    (group,) = [g["Fn::GetAtt"][0] for g in endpoint["SecurityGroupIds"]]
    converters_group = traced.logical_id(traced.stack.network.security_group)
    assert _ingress(traced, group) == [(443, 443, converters_group)]
    for kind in EGRESS_TYPES:
        assert not traced.of_type(kind), kind


def test_the_sts_endpoint_lets_the_converters_assume_only_their_access_roles(
    synth: Synth,
) -> None:
    """Per-document credentials come from STS through an interface endpoint in the converters'
    subnets, reachable only from their security group, whose policy allows nothing but
    sts:AssumeRole of the converters' access roles."""
    converters = _converters(synth)
    subnets = _subnets_of(synth, converters[0])
    (endpoint,) = [
        e["Properties"]
        for e in synth.of_type("AWS::EC2::VPCEndpoint").values()
        if flatten(e["Properties"]["ServiceName"]).endswith(".sts")
    ]
    assert endpoint["VpcEndpointType"] == "Interface"
    assert endpoint["PrivateDnsEnabled"] is True
    assert {s["Ref"] for s in endpoint["SubnetIds"]} == subnets
    statements = endpoint["PolicyDocument"]["Statement"]
    assert {a for st in statements for a in as_list(st["Action"])} == {"sts:AssumeRole"}
    roles = {r["Fn::GetAtt"][0] for st in statements for r in as_list(st["Resource"])}
    stages = synth.stack.pipeline.stages
    assert set(stages.access_roles) == {fn.node.id for fn in converters}
    access = {synth.logical_id(role) for role in stages.access_roles.values()}
    assert roles == access
    (group,) = [g["Fn::GetAtt"][0] for g in endpoint["SecurityGroupIds"]]
    converters_group = synth.logical_id(synth.stack.network.security_group)
    assert _ingress(synth, group) == [(443, 443, converters_group)]


def test_the_collection_accepts_the_public_internet_unless_made_private(synth: Synth) -> None:
    (policy,) = [
        p["Properties"]
        for p in synth.of_type("AWS::OpenSearchServerless::SecurityPolicy").values()
        if p["Properties"]["Type"] == "network"
    ]
    assert json.loads(policy["Policy"])[0]["AllowFromPublic"] is True  # docs/aws.md: trade-off
    assert not synth.of_type("AWS::OpenSearchServerless::VpcEndpoint")


@pytest.fixture(scope="module")
def private() -> Synth:
    """The stack with `-c privateCollection=true`."""
    return synthesise({"privateCollection": True})


def test_a_private_collection_admits_only_its_vpc_endpoint_from_the_search_subnets(
    private: Synth,
) -> None:
    for kind in EGRESS_TYPES:
        assert not private.of_type(kind), kind
    assert private.of_type("AWS::EC2::Route") == {}
    stages = private.stack.pipeline.stages
    searchers = [
        stages.delete,
        stages.index_chunks,
        stages.activate,
        stages.abandon,
        stages.finalise,
        stages.retrieve,
        private.stack.search.index_function,
    ]
    search_subnets = _subnets_of(private, searchers[0])
    assert len(search_subnets) == 2
    assert not search_subnets & _subnets_of(private, _converters(private)[0])
    for fn in searchers:
        assert _subnets_of(private, fn) == search_subnets, fn.node.id
    placed = {private.logical_id(fn) for fn in [*searchers, *_converters(private)]}
    for fn in stages.all():
        if private.logical_id(fn) not in placed:
            assert "VpcConfig" not in private.resources[private.logical_id(fn)]["Properties"]

    (endpoint_id,) = private.of_type("AWS::OpenSearchServerless::VpcEndpoint")
    endpoint = private.resources[endpoint_id]["Properties"]
    assert {s["Ref"] for s in endpoint["SubnetIds"]} == search_subnets
    (group,) = [g["Fn::GetAtt"][0] for g in endpoint["SecurityGroupIds"]]
    search_group = private.logical_id(private.stack.network.search[2])
    assert _ingress(private, group) == [(443, 443, search_group)]
    (policy,) = [
        p["Properties"]["Policy"]
        for p in private.of_type("AWS::OpenSearchServerless::SecurityPolicy").values()
        if p["Properties"]["Type"] == "network"
    ]
    text = flatten(policy)
    rules = json.loads(text.replace(f"<{endpoint_id}.Id>", "VPCE"))
    assert rules == [
        {
            "Rules": [
                {
                    "ResourceType": "collection",
                    "Resource": [f"collection/{private.stack.search.collection_name}"],
                }
            ],
            "AllowFromPublic": False,
            "SourceVPCEs": ["VPCE"],
        }
    ]


def test_the_search_subnets_endpoints_allow_only_the_projects_resources_and_model(
    private: Synth,
) -> None:
    stages = private.stack.pipeline.stages
    tables = _route_tables(private, _subnets_of(private, stages.retrieve))
    storage = private.stack.storage
    endpoints: dict[str, dict[str, Any]] = {}
    for resource in private.of_type("AWS::EC2::VPCEndpoint").values():
        props = resource["Properties"]
        serves = {t["Ref"] for t in props.get("RouteTableIds", [])} & tables or {
            s["Ref"] for s in props.get("SubnetIds", [])
        } & _subnets_of(private, stages.retrieve)
        if serves:
            endpoints[flatten(props["ServiceName"]).rsplit(".", 1)[-1]] = props
    assert sorted(endpoints) == ["bedrock-runtime", "dynamodb", "s3"]
    buckets = [private.logical_id(b) for b in (storage.documents, storage.artifacts)]
    assert sorted(_endpoint_resources(endpoints["s3"])) == sorted(
        [f"<{b}.Arn>" for b in buckets] + [f"<{b}.Arn>/*" for b in buckets]
    )
    names = [
        private.logical_id(t)
        for t in (storage.documents_table, storage.sources_table, storage.ledger_table)
    ]
    assert sorted(_endpoint_resources(endpoints["dynamodb"])) == sorted(
        [f"<{t}.Arn>" for t in names] + [f"<{t}.Arn>/index/*" for t in names]
    )
    bedrock = endpoints["bedrock-runtime"]
    assert bedrock["PrivateDnsEnabled"] is True
    (statement,) = bedrock["PolicyDocument"]["Statement"]
    assert statement["Action"] == "bedrock:InvokeModel"
    model = private.stack.settings.models.embedding_model_id
    assert [r.rsplit("/", 1)[-1] for r in _endpoint_resources(bedrock)] == [model]


def test_a_private_collection_needs_the_isolated_vpc() -> None:
    from drac.settings import Settings, SettingsError

    with pytest.raises(SettingsError, match="privateCollection needs isolatedConverters"):
        Settings.from_context({"privateCollection": True, "isolatedConverters": False})


def _firewall(synth: Synth) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """(allowed names, rules in priority order, association) of the VPC's DNS Firewall."""
    (group,) = synth.of_type("AWS::Route53Resolver::FirewallRuleGroup").values()
    rules = sorted(group["Properties"]["FirewallRules"], key=lambda r: r["Priority"])
    lists = synth.of_type("AWS::Route53Resolver::FirewallDomainList")
    named = {
        logical_id: [flatten(d) for d in resource["Properties"]["Domains"]]
        for logical_id, resource in lists.items()
    }
    for rule in rules:
        rule["domains"] = named[rule["FirewallDomainListId"]["Fn::GetAtt"][0]]
    (association,) = synth.of_type("AWS::Route53Resolver::FirewallRuleGroupAssociation").values()
    return rules[0]["domains"], rules, association["Properties"]


def _endpoint_names(synth: Synth) -> set[str]:
    """The DNS names of the services the VPC's endpoints serve (`com.amazonaws.<region>.x`
    is `x.<region>.amazonaws.com`; an OpenSearch Serverless collection endpoint is a name
    below `<region>.aoss.amazonaws.com`)."""
    names = set()
    for endpoint in synth.of_type("AWS::EC2::VPCEndpoint").values():
        service = flatten(endpoint["Properties"]["ServiceName"]).rsplit(".", 1)[-1]
        names.add(f"{service}.<AWS::Region>.amazonaws.com")
    if synth.of_type("AWS::OpenSearchServerless::VpcEndpoint"):
        names.add("*.<AWS::Region>.aoss.amazonaws.com")
    return names


@pytest.mark.parametrize("variant", ["synth", "traced", "private"])
def test_a_dns_firewall_answers_only_the_endpoints_names(
    variant: str, request: pytest.FixtureRequest
) -> None:
    """Every name is blocked (NXDOMAIN) after the one ALLOW rule, whose list holds exactly the
    names of the VPC's endpoints (S3 also in its virtual-hosted and global forms)."""
    synth: Synth = request.getfixturevalue(variant)
    allowed, rules, association = _firewall(synth)
    assert [(r["Action"], r.get("BlockResponse")) for r in rules] == [
        ("ALLOW", None),
        ("BLOCK", "NXDOMAIN"),
    ]
    assert rules[1]["domains"] == ["*"]
    (vpc,) = synth.of_type("AWS::EC2::VPC")
    assert association["VpcId"] == {"Ref": vpc}
    s3_forms = {
        "*.s3.<AWS::Region>.amazonaws.com",
        "s3.amazonaws.com",
        "*.s3.amazonaws.com",
    }
    assert set(allowed) == _endpoint_names(synth) | s3_forms
    assert len(allowed) == len(set(allowed))


def test_no_dns_firewall_without_the_vpc(alternate: Synth) -> None:
    for kind in (
        "AWS::Route53Resolver::FirewallRuleGroup",
        "AWS::Route53Resolver::FirewallRuleGroupAssociation",
    ):
        assert not alternate.of_type(kind), kind
