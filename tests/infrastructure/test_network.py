"""The converting functions sit where no route leaves, by default: isolated subnets (no NAT,
no internet gateway, no route at all beyond the VPC's own range), gateway endpoints for S3 and
DynamoDB whose policies name only the project's resources, the other functions outside the VPC.
`isolatedConverters=false` (development) deploys no VPC; `tracingEndpoint=true` adds an X-Ray
interface endpoint reachable only from the converters. Which calls the converters really make
through these endpoints is checked in tests/e2e/test_network.py."""

from __future__ import annotations

from typing import Any

import pytest

from infra.network import TRACE_ACTIONS
from tests.infrastructure.conftest import Synth, synthesise
from tests.infrastructure.helpers import as_list, flatten

EGRESS_TYPES = ("AWS::EC2::InternetGateway", "AWS::EC2::EgressOnlyInternetGateway",
                "AWS::EC2::NatGateway", "AWS::EC2::VPCGatewayAttachment",
                "AWS::EC2::TransitGatewayAttachment", "AWS::EC2::VPCPeeringConnection",
                "AWS::EC2::VPNGateway", "AWS::EC2::EIP")


def _converters(synth: Synth) -> list[Any]:
    stages = synth.stack.pipeline.stages
    return [stages.normalise, stages.read_spreadsheet, stages.render]


def _subnets_of(synth: Synth, fn: Any) -> set[str]:
    config = synth.resources[synth.logical_id(fn)]["Properties"]["VpcConfig"]
    return {subnet["Ref"] for subnet in config["SubnetIds"]}


def _route_tables(synth: Synth, subnets: set[str]) -> set[str]:
    return {a["Properties"]["RouteTableId"]["Ref"]
            for a in synth.of_type("AWS::EC2::SubnetRouteTableAssociation").values()
            if a["Properties"]["SubnetId"]["Ref"] in subnets}


def test_by_default_the_converters_run_in_isolated_subnets_with_no_route_out(
    synth: Synth,
) -> None:
    for kind in EGRESS_TYPES:
        assert not synth.of_type(kind), kind
    assert synth.stack.settings.isolated_converters
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


def _endpoint_resources(endpoint: dict[str, Any]) -> list[str]:
    (statement,) = endpoint["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow" and "Condition" not in statement
    return [flatten(resource) for resource in as_list(statement["Resource"])]


def test_the_endpoints_serve_only_the_converters_and_allow_only_the_projects_resources(
    synth: Synth,
) -> None:
    tables = _route_tables(synth, _subnets_of(synth, _converters(synth)[0]))
    endpoints = {str(flatten(e["Properties"]["ServiceName"])).rsplit(".", 1)[-1]: e["Properties"]
                 for e in synth.of_type("AWS::EC2::VPCEndpoint").values()}
    assert sorted(endpoints) == ["dynamodb", "s3"]
    for endpoint in endpoints.values():
        assert endpoint["VpcEndpointType"] == "Gateway"
        assert {t["Ref"] for t in endpoint["RouteTableIds"]} == tables
    storage = synth.stack.storage
    buckets = [synth.logical_id(b) for b in (storage.documents, storage.artifacts)]
    assert sorted(_endpoint_resources(endpoints["s3"])) == sorted(
        [f"<{b}.Arn>" for b in buckets] + [f"<{b}.Arn>/*" for b in buckets])
    table = synth.logical_id(storage.documents_table)
    assert sorted(_endpoint_resources(endpoints["dynamodb"])) == [
        f"<{table}.Arn>", f"<{table}.Arn>/index/*"]


def test_turned_off_for_development_no_vpc_is_deployed(alternate: Synth) -> None:
    assert not alternate.stack.settings.isolated_converters
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
    (endpoint,) = [e["Properties"] for e in traced.of_type("AWS::EC2::VPCEndpoint").values()
                   if e["Properties"].get("VpcEndpointType") == "Interface"]
    assert flatten(endpoint["ServiceName"]).endswith(".xray")
    assert endpoint["PrivateDnsEnabled"] is True
    assert {s["Ref"] for s in endpoint["SubnetIds"]} == subnets
    (statement,) = endpoint["PolicyDocument"]["Statement"]
    assert sorted(as_list(statement["Action"])) == sorted(TRACE_ACTIONS)
    (group,) = [g["Fn::GetAtt"][0] for g in endpoint["SecurityGroupIds"]]
    assert "SecurityGroupIngress" not in traced.resources[group]["Properties"]
    converters_group = traced.logical_id(traced.stack.pipeline.stages.network.security_group)
    ingress = [i["Properties"] for i in traced.of_type("AWS::EC2::SecurityGroupIngress").values()
               if i["Properties"]["GroupId"]["Fn::GetAtt"][0] == group]
    assert [(i["FromPort"], i["ToPort"], i["SourceSecurityGroupId"]["Fn::GetAtt"][0])
            for i in ingress] == [(443, 443, converters_group)]
    for kind in EGRESS_TYPES:
        assert not traced.of_type(kind), kind
