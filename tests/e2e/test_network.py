"""The converters' network as deployed by default: every AWS call Normalise, ReadSpreadsheet,
Render and ReadScans really make (recorded per function by the harness while a PDF, a Word
document, a workbook and a one-page scan are ingested) leaves their isolated subnets only
through a VPC endpoint of the synthesised template whose policy allows it; no route leads
anywhere else."""

from __future__ import annotations

from typing import Any

import pytest
from reliability.hostile_links import docx
from sheet_workbooks import sales_rows, xlsx

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import upload
from tests.e2e.guard import Call
from tests.e2e.harness import Cloud
from tests.e2e.iam import Statement
from tests.e2e.network import Endpoint, Placement, placement, unreachable
from tests.e2e.template import StackModel
from tests.e2e.test_scans import one_page_scan

CONVERTERS = ("normalise", "read_spreadsheet", "render", "read_scans")
_PARAGRAPH = "<w:p><w:r><w:t>Stores open at nine.</w:t></w:r></w:p>"


def _placements(model: StackModel) -> dict[str, Placement]:
    found = {}
    for handler_dir in CONVERTERS:
        where = placement(model, model.function_for(handler_dir).logical_id)
        assert where is not None, f"{handler_dir} is not in a VPC by default"
        found[handler_dir] = where
    return found


@pytest.mark.libreoffice
def test_every_call_of_a_converter_leaves_only_through_an_endpoint_that_allows_it(
    cloud: Any,
) -> None:
    deployed, _bedrock, _opensearch, pdf = cloud
    placements = _placements(deployed.model)
    for where in placements.values():
        assert where.routes == (), where.routes  # only the VPC's implicit local route
        assert {e.service for e in where.endpoints} <= {"s3", "dynamodb", "sts", "xray"}
    others = set(deployed.model.functions) - {p.function for p in placements.values()}
    assert others and all(placement(deployed.model, f) is None for f in others)

    uploads = {
        "stores.pdf": pdf,
        "hours.docx": docx(_PARAGRAPH, []),
        "sales.xlsx": xlsx({"Sales": sales_rows(20)}),
        "scan.pdf": one_page_scan(),  # read by OCR (ReadScans)
    }
    for name, data in uploads.items():
        upload(deployed, data, f"incoming/acme/{name}")
    runs = deployed.wait("ingest")
    assert [r["status"] for r in runs] == ["SUCCEEDED"] * 4
    for name, data in uploads.items():
        record = deployed.runtime.registry.get(document_id_for(data, "acme"))
        assert record.status is DocumentStatus.INDEXED, (name, record.error)

    services = network_problems(deployed, CONVERTERS)
    # their own credentials assume the access role; its sessions read and write S3
    assert set().union(*services.values()) == {"s3", "sts"}, services


def network_problems(deployed: Cloud, must_call: tuple[str, ...]) -> dict[str, set[str]]:
    """Check every call of every function placed in a VPC against its subnets' endpoints
    (the functions in `must_call` must have made calls); return each one's services."""
    problems, services = [], {}
    for function in deployed.model.functions.values():
        where = placement(deployed.model, function.logical_id)
        if where is None:
            continue
        calls = [(c, function.role.arn)
                 for c in deployed.log.calls_of(deployed.principal(function).label)]
        if access := function.environment.get("CONVERTER_ACCESS_ROLE_ARN"):
            # the calls of the per-document sessions it assumed (tests/e2e/sessions.py)
            role = deployed.model.role_by_arn(access)
            label = f"{function.logical_id} as {role.name} (functions/{function.handler_dir})"
            calls += [(c, role.arn) for c in deployed.log.calls_of(label)]
        assert calls or function.handler_dir not in must_call, (
            f"{function.handler_dir} made no call: the test would prove nothing"
        )
        services[str(function.handler_dir)] = {c.service for c, _ in calls}
        problems += [
            f"{function.handler_dir}: {reason}"
            for call, role_arn in calls
            if (reason := unreachable(where, role_arn, call))
        ]
    assert problems == []
    assert set(must_call) <= set(services), services
    return services


def _s3_only(bucket_arn: str) -> Placement:
    statement = Statement.from_json(
        {
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": "s3:*",
            "Resource": f"{bucket_arn}/*",
        },
        "test",
    )
    return Placement(
        "F",
        frozenset({"Subnet"}),
        frozenset({"Table"}),
        (),
        (Endpoint("S3", "s3", "Gateway", (statement,)),),
    )


def test_a_call_without_an_endpoint_or_outside_its_policy_is_named() -> None:
    from tests.e2e.authorization import Permission

    where = _s3_only("arn:aws:s3:::project")
    role = "arn:aws:iam::123456789012:role/f"
    inside = Call("F", "s3", "GetObject", (Permission("s3:GetObject", "arn:aws:s3:::project/k"),))
    outside = Call("F", "s3", "PutObject", (Permission("s3:PutObject", "arn:aws:s3:::other/k"),))
    table = Call(
        "F",
        "dynamodb",
        "GetItem",
        (Permission("dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:123456789012:table/t"),),
    )
    assert unreachable(where, role, inside) is None
    assert "does not allow s3:PutObject on arn:aws:s3:::other/k" in str(
        unreachable(where, role, outside)
    )
    assert "no endpoint for 'dynamodb'" in str(unreachable(where, role, table))
