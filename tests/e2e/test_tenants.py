"""Tenants come from identity: a caller of tenant A cannot read or re-plan tenant B, by any
field of the request. The retrieval API runs under its own role in the harness (its request,
its OpenSearch and Bedrock calls, its DynamoDB reads) and the function URL checks the caller's
lambda:InvokeFunctionUrl and lambda:InvokeFunction against the stack's grants."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError
from shared_paths import VELVERA

from drac.ids import document_id_for
from tests.e2e.conftest import ACME_ROLE, ADMIN_ROLE, BETA_ROLE, put_events_as, upload
from tests.e2e.harness import Cloud
from tests.e2e.iam import Statement

MARKDOWN = (VELVERA / "md" / "contact_info.md").read_bytes()
OUTSIDER = "arn:aws:iam::123456789012:role/someone-else"


@pytest.fixture
def tenants(cloud: Any) -> tuple[Cloud, str, str]:
    """acme holds the store-locations PDF, beta the contact-info Markdown (both INDEXED)."""
    deployed, _bedrock, _opensearch, pdf = cloud
    upload(deployed, pdf, "incoming/acme/store_locations.pdf")
    upload(deployed, MARKDOWN, "incoming/beta/contact_info.md")
    deployed.settle()
    return deployed, document_id_for(pdf, "acme"), document_id_for(MARKDOWN, "beta")


def _search(
    deployed: Cloud, role: str, body: dict[str, Any], statements: tuple[Statement, ...] = ()
) -> tuple[int, Any]:
    answer = deployed.invoke_url(
        deployed.model.function_for("retrieve"), deployed.caller(role, statements), body
    )
    return answer["statusCode"], json.loads(answer["body"])


def _tenants_of(body: dict[str, Any]) -> set[str | None]:
    return {chunk["tenant"] for chunk in body["chunks"]}


def test_a_tenant_reads_its_own_chunks_and_nothing_else(tenants: Any) -> None:
    deployed, acme_doc, beta_doc = tenants
    status, body = _search(deployed, ACME_ROLE, {"query": "store opening hours"})
    assert status == 200 and body["chunks"] and _tenants_of(body) == {"acme"}
    # a role with a path is matched through its session ARN (account and role name)
    status, body = _search(deployed, BETA_ROLE, {"query": "contact email phone"})
    assert status == 200 and body["chunks"] and _tenants_of(body) == {"beta"}
    assert {c["document_id"] for c in body["chunks"]} == {beta_doc}

    # every field that could reach another tenant is refused or stays inside acme
    for scope in ({"tenant": "beta"}, {"tenant": None}, {"all_tenants": True}):
        status, body = _search(deployed, ACME_ROLE, {"query": "contact email", **scope})
        assert status == 403, scope
        assert "may not read" in body["message"]
    status, body = _search(
        deployed,
        ACME_ROLE,
        {"query": "contact email", "mode": "bm25", "filters": {"document_ids": [beta_doc]}},
    )
    assert status == 200 and body["chunks"] == []
    status, body = _search(
        deployed,
        ACME_ROLE,
        {"query": "store", "tenant": "acme", "filters": {"document_ids": [acme_doc]}},
    )
    assert status == 200 and {c["document_id"] for c in body["chunks"]} == {acme_doc}


def test_only_an_admin_reads_every_tenant(tenants: Any) -> None:
    deployed, _acme_doc, _beta_doc = tenants
    status, body = _search(
        deployed, ADMIN_ROLE, {"query": "contact store", "all_tenants": True, "k": 20}
    )
    assert status == 200 and _tenants_of(body) == {"acme", "beta"}
    status, body = _search(deployed, ADMIN_ROLE, {"query": "contact", "tenant": "beta"})
    assert status == 200 and _tenants_of(body) == {"beta"}


def test_an_unmapped_caller_is_refused_by_lambda_or_by_the_api(tenants: Any) -> None:
    deployed, _acme_doc, _beta_doc = tenants
    retrieve = deployed.model.function_for("retrieve")
    # no grant at all: Lambda refuses before the handler runs (the stack grants only mapped
    # principals, both actions a function URL created since October 2025 needs)
    status, _body = _search(deployed, OUTSIDER, {"query": "store"})
    assert status == 403
    (denial,) = deployed.log.take_denials()
    assert (denial.action, denial.resource) == ("lambda:InvokeFunctionUrl", retrieve.arn)
    # its own policy grants only lambda:InvokeFunctionUrl: still refused (InvokeFunction)
    url_only = Statement.from_json(
        {"Effect": "Allow", "Action": "lambda:InvokeFunctionUrl", "Resource": retrieve.arn},
        "outsider policy",
    )
    status, _body = _search(deployed, OUTSIDER, {"query": "store"}, (url_only,))
    assert status == 403
    (denial,) = deployed.log.take_denials()
    assert denial.action == "lambda:InvokeFunction"
    # both granted by its own account's policy: the API itself refuses an unmapped identity
    both = Statement.from_json(
        {
            "Effect": "Allow",
            "Action": ["lambda:InvokeFunctionUrl", "lambda:InvokeFunction"],
            "Resource": retrieve.arn,
        },
        "outsider policy",
    )
    status, body = _search(deployed, OUTSIDER, {"query": "store", "all_tenants": True}, (both,))
    assert status == 403 and "mapped to no tenant" in body["message"]


def _replan(deployed: Cloud, role: str, source: str, detail: dict[str, Any]) -> None:
    put_events_as(
        deployed,
        role,
        [{"Source": source, "DetailType": "Replan Requested", "Detail": json.dumps(detail)}],
    )


def test_a_tenant_cannot_replan_another_tenant(tenants: Any) -> None:
    deployed, _acme_doc, beta_doc = tenants
    registry = deployed.runtime.registry
    # the bus policy: only beta's principals may send beta's source, only admins drac.admin
    for source in ("drac.tenant.beta", "drac.admin"):
        with pytest.raises(ClientError, match="AccessDenied"):
            _replan(deployed, ACME_ROLE, source, {"all": True})
        (denial,) = deployed.log.take_denials()
        assert denial.action == "events:PutEvents" and "explicit deny" in denial.reason
    # acme's own source, naming beta or all: the Manifest stage refuses, nothing is re-planned
    _replan(deployed, ACME_ROLE, "drac.tenant.acme", {"tenant": "beta", "strategy": "fine"})
    _replan(deployed, ACME_ROLE, "drac.tenant.acme", {"all": True, "strategy": "fine"})
    runs = deployed.wait("replan")
    assert [r["status"] for r in runs] == ["FAILED", "FAILED"]
    for run in runs:
        failed = deployed.sfn.describe_execution(executionArn=run["executionArn"])
        assert failed["error"] == "Forbidden"
    assert deployed.executions("plan") and len(deployed.executions("plan")) == 2  # ingests only
    assert registry.get(beta_doc).active_version == 1
    # an admin may re-plan beta
    _replan(deployed, ADMIN_ROLE, "drac.admin", {"tenant": "beta", "strategy": "fine"})
    deployed.settle()
    assert registry.get(beta_doc).active_version == 2
