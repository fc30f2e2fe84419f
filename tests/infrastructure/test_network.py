"""The converting functions can sit where no route leaves (`isolatedConverters`): isolated
subnets (no NAT, no internet gateway), gateway endpoints for S3 and DynamoDB limited to the
project's resources, the other functions outside the VPC."""

from __future__ import annotations

from tests.infrastructure.conftest import Synth


def test_converters_run_in_isolated_subnets_with_gateway_endpoints(
    synth: Synth, alternate: Synth
) -> None:
    assert not synth.of_type("AWS::EC2::VPC")  # the default deploys no VPC
    stages = alternate.stack.pipeline.stages
    assert not alternate.of_type("AWS::EC2::NatGateway")
    assert not alternate.of_type("AWS::EC2::InternetGateway")
    routes = [r["Properties"] for r in alternate.of_type("AWS::EC2::Route").values()]
    assert not [r for r in routes if "DestinationCidrBlock" in r]  # no default route at all
    subnets = {k for k, v in alternate.of_type("AWS::EC2::Subnet").items()
               if v["Properties"].get("MapPublicIpOnLaunch") is not True}
    assert len(subnets) == 2
    for fn in (stages.normalise, stages.read_spreadsheet, stages.render):
        vpc = alternate.resources[alternate.logical_id(fn)]["Properties"]["VpcConfig"]
        assert {s["Ref"] for s in vpc["SubnetIds"]} == subnets, fn.node.id
    others = [f for f in stages.all()
              if f not in (stages.normalise, stages.read_spreadsheet, stages.render)]
    for fn in others:
        assert "VpcConfig" not in alternate.resources[alternate.logical_id(fn)]["Properties"]
    endpoints = [e["Properties"] for e in alternate.of_type("AWS::EC2::VPCEndpoint").values()]
    services = sorted(str(e["ServiceName"]) for e in endpoints)
    assert len(endpoints) == 2 and "dynamodb" in services[0] and "s3" in services[1]
    assert {e["VpcEndpointType"] for e in endpoints} == {"Gateway"}
    storage = alternate.stack.storage
    for endpoint in endpoints:
        (statement,) = endpoint["PolicyDocument"]["Statement"]
        resources = str(statement["Resource"])
        if "s3" in str(endpoint["ServiceName"]):
            for bucket in (storage.documents, storage.artifacts):
                assert alternate.logical_id(bucket) in resources
        else:
            assert alternate.logical_id(storage.documents_table) in resources
    assert alternate.of_type("AWS::EC2::FlowLog")
