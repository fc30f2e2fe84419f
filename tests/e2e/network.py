"""Where a function's calls can go, read from the synthesised template.

A function with a `VpcConfig` reaches only what its subnets route to: the routes of their
route tables (`AWS::EC2::Route`), gateway endpoints on those route tables, and interface
endpoints with private DNS in those subnets (and OpenSearch Serverless VPC endpoints there
that a collection's network policy admits). A call is reachable when an endpoint serves its
service and the endpoint's policy allows every permission the call needed (the policy is
evaluated like any IAM policy, with the function's role as the principal).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tests.e2e.guard import Call
from tests.e2e.iam import Request, Statement, evaluate
from tests.e2e.template import StackModel

ENDPOINT_SERVICES = {"stepfunctions": "states", "cloudwatch": "monitoring"}
"""boto3 service name -> the last part of the VPC endpoint's service name, where they differ."""


@dataclass(frozen=True)
class Endpoint:
    """A VPC endpoint as a function in the VPC sees it."""

    logical_id: str
    service: str
    """The last part of the endpoint's ServiceName (`s3`, `dynamodb`, `xray`, ...)."""
    kind: str
    statements: tuple[Statement, ...]


@dataclass(frozen=True)
class Placement:
    """A VPC-attached function's subnets, their routes and the endpoints it can use."""

    function: str
    subnets: frozenset[str]
    route_tables: frozenset[str]
    routes: tuple[dict[str, Any], ...]
    """Properties of every AWS::EC2::Route on the subnets' route tables (none: local only)."""
    endpoints: tuple[Endpoint, ...]


def _refs(values: Iterable[Any]) -> frozenset[str]:
    refs = set()
    for value in values:
        assert isinstance(value, dict) and set(value) == {"Ref"}, f"not a Ref: {value!r}"
        refs.add(value["Ref"])
    return frozenset(refs)


def placement(model: StackModel, function_logical_id: str) -> Placement | None:
    """Where the function runs (None: Lambda's own network, which reaches the internet)."""
    resources = model.stack.resources
    config = resources[function_logical_id]["Properties"].get("VpcConfig")
    if not config:
        return None
    subnets = _refs(config["SubnetIds"])
    tables = frozenset(
        association["Properties"]["RouteTableId"]["Ref"]
        for association in model.stack.of_type("AWS::EC2::SubnetRouteTableAssociation").values()
        if association["Properties"]["SubnetId"]["Ref"] in subnets
    )
    assert len(tables) >= len(subnets), "a subnet without a route table association"
    routes = tuple(
        route["Properties"]
        for route in model.stack.of_type("AWS::EC2::Route").values()
        if route["Properties"]["RouteTableId"]["Ref"] in tables
    )
    endpoints = []
    for logical_id, resource in model.stack.of_type("AWS::EC2::VPCEndpoint").items():
        props = resource["Properties"]
        kind = props.get("VpcEndpointType", "Gateway")
        serves = (
            _refs(props.get("RouteTableIds", [])) & tables
            if kind == "Gateway"
            else _refs(props.get("SubnetIds", [])) & subnets
            if props.get("PrivateDnsEnabled")
            else frozenset()
        )
        if not serves:
            continue
        service = str(model.resolver.resolve(props["ServiceName"])).rsplit(".", 1)[-1]
        document = model.resolver.resolve(props.get("PolicyDocument")) or {
            "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*"}]
        }  # no policy: the endpoint allows everything
        statements = tuple(
            Statement.from_json(s, f"{logical_id}[{i}]")
            for i, s in enumerate(document["Statement"])
        )
        endpoints.append(Endpoint(logical_id, service, kind, statements))
    endpoints += _collection_endpoints(model, subnets)
    return Placement(function_logical_id, subnets, tables, routes, tuple(endpoints))


def _collection_endpoints(model: StackModel, subnets: frozenset[str]) -> list[Endpoint]:
    """OpenSearch Serverless VPC endpoints in the subnets that a collection's network policy
    admits (it names the endpoint's id in SourceVPCEs; the data-access policy, enforced by
    the harness, decides the rest)."""
    policies = [
        json.dumps(p["Properties"]["Policy"])
        for p in model.stack.of_type("AWS::OpenSearchServerless::SecurityPolicy").values()
        if p["Properties"]["Type"] == "network"
    ]
    found = []
    for logical_id, resource in model.stack.of_type(
        "AWS::OpenSearchServerless::VpcEndpoint"
    ).items():
        if not _refs(resource["Properties"]["SubnetIds"]) & subnets:
            continue
        named = json.dumps({"Fn::GetAtt": [logical_id, "Id"]})
        if any(named in policy and "SourceVPCEs" in policy for policy in policies):
            allow = Statement.from_json(
                {"Effect": "Allow", "Principal": "*", "Action": "aoss:*", "Resource": "*"},
                logical_id,
            )
            found.append(Endpoint(logical_id, "aoss", "OpenSearchServerless", (allow,)))
    return found


def unreachable(where: Placement, role_arn: str, call: Call) -> str | None:
    """Why the call cannot leave the function's subnets, or None when an endpoint carries it."""
    service = ENDPOINT_SERVICES.get(call.service, call.service)
    candidates = [e for e in where.endpoints if e.service == service]
    if not candidates:
        return f"{call.service}:{call.operation}: no endpoint for {service!r} in its subnets"
    for permission in call.permissions:
        request = Request(
            action=permission.action, resource=permission.resource, principal=role_arn
        )
        if not any(evaluate(request, e.statements).allowed for e in candidates):
            return (
                f"{call.service}:{call.operation}: the {service} endpoint policy does not "
                f"allow {permission}"
            )
    return None
