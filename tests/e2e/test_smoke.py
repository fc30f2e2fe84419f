"""`drac cloud-smoke`'s checks run against the stack deployed on moto: the tenant's uploads,
deletes and re-plan event go through sessions evaluated against the caller's identity policy
and the stack's bucket and bus policies; its queries are SigV4-signed requests that reach the
retrieval function as a function URL call of that caller; the alarms are the template's own,
created in CloudWatch. A second run with an admin where another tenant is expected, and one
alarm in ALARM, must fail naming exactly those two checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from drac.aws.identity import REPLAN_TENANT_SOURCE_PREFIX
from drac.aws.smoke import Caller, SmokePlan, StackView, run_smoke, smoke_documents
from drac.models import DocumentStatus
from tests.e2e.conftest import ACME_ROLE, ADMIN_ROLE, BETA_ROLE
from tests.e2e.harness import Cloud
from tests.e2e.iam import Statement

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "documents"
URL = "https://smoketest.lambda-url.us-east-1.on.aws/"


def _caller(deployed: Cloud, role: str) -> Caller:
    """A tenant application's role: its own policy lets it write its prefix and send
    re-plan events (the stack's policies decide the rest); its HTTP requests are answered by
    the function URL as that role once their SigV4 signature (service lambda) is there."""
    bucket = deployed.documents_bucket
    bus = f"arn:aws:events:{deployed.region}:{deployed.model.stack.account}:event-bus/" + (
        deployed.bus_name
    )
    statements = (
        Statement.from_json(
            {
                "Effect": "Allow",
                "Action": ["s3:PutObject", "s3:DeleteObject"],
                "Resource": f"arn:aws:s3:::{bucket}/*",
            },
            "caller policy",
        ),
        Statement.from_json(
            {"Effect": "Allow", "Action": "events:PutEvents", "Resource": bus}, "caller policy"
        ),
    )
    principal = deployed.caller(role, statements)
    retrieve = deployed.model.function_for("retrieve")

    def function_url(request: httpx.Request) -> httpx.Response:
        authorization = request.headers["authorization"]
        assert authorization.startswith("AWS4-HMAC-SHA256 ")
        assert f"/{deployed.region}/lambda/aws4_request" in authorization
        assert str(request.url) == URL
        answer = deployed.invoke_url(retrieve, principal, request.content.decode())
        return httpx.Response(answer["statusCode"], content=answer["body"].encode())

    http = httpx.Client(transport=httpx.MockTransport(function_url))
    return Caller(deployed.caller_session(principal), http)


def _alarms(deployed: Cloud) -> tuple[str, ...]:
    """The template's alarms, created in CloudWatch as CloudFormation would (named by their
    logical ids here: the smoke test reads names from the stack's resources)."""
    cloudwatch = boto3.client("cloudwatch", region_name=deployed.region)
    names = []
    for logical_id, alarm in deployed.model.stack.of_type("AWS::CloudWatch::Alarm").items():
        # the definition as deployed (dimensions and metric math resolved); the actions
        # name the alarm topic, which the harness does not deploy
        props = deployed.model.resolver.resolve(
            {
                k: v
                for k, v in alarm["Properties"].items()
                if k not in {"AlarmActions", "OKActions", "AlarmName"}
            }
        )
        cloudwatch.put_metric_alarm(AlarmName=logical_id, **props)
        names.append(logical_id)
    return tuple(sorted(names))


@pytest.fixture
def smoke(cloud: Any) -> tuple[Cloud, StackView, dict[str, bytes]]:
    deployed = cloud[0]
    view = StackView(
        documents_bucket=deployed.documents_bucket,
        documents_table=deployed.runtime.resources.documents_table,
        event_bus=deployed.bus_name,
        tenant_source_prefix=REPLAN_TENANT_SOURCE_PREFIX,
        retrieve_url=URL,
        alarms=_alarms(deployed),
    )
    documents = smoke_documents(
        EXAMPLES / "baggage_allowance.pdf", EXAMPLES / "environmental_policy.docx"
    )
    return deployed, view, documents


def _run(
    deployed: Cloud, view: StackView, documents: dict[str, bytes], other: str, lines: list[str]
) -> list[Any]:
    plan = SmokePlan("acme", documents, timeout_s=240, poll_s=0.5, progress=lines.append)
    operator = boto3.session.Session(region_name=deployed.region)
    return run_smoke(
        view,
        plan,
        operator=operator,
        tenant=_caller(deployed, ACME_ROLE),
        other=_caller(deployed, other),
        region=deployed.region,
    )


def test_the_smoke_checks_pass_on_a_sound_stack_and_name_what_fails(smoke: Any) -> None:
    deployed, view, documents = smoke
    assert len(view.alarms) > 20 and set(documents) == {
        "baggage_allowance.pdf",
        "environmental_policy.docx",
        "sales.xlsx",
    }
    lines: list[str] = []
    checks = _run(deployed, view, documents, BETA_ROLE, lines)
    assert [(c.name, c.ok) for c in checks] == [
        ("upload", True),
        ("indexed", True),
        ("query as the tenant", True),
        ("query as another tenant refused", True),
        ("re-plan", True),
        ("delete", True),
        ("alarms", True),
    ], lines
    assert "status 403" in checks[3].detail and "chunks left in search: 0" in checks[5].detail
    # what it did is what the stack recorded: three documents, planned twice, deleted
    runs = deployed.executions("replan")
    assert len(runs) == 1 and runs[0]["status"] == "SUCCEEDED"
    registry = deployed.runtime.registry
    from drac.ids import document_id_for

    for data in documents.values():
        record = registry.get(document_id_for(data, "acme"))
        assert record is not None and record.status is DocumentStatus.DELETED

    # an admin where another tenant should be refused (200), and one alarm firing
    cloudwatch = boto3.client("cloudwatch", region_name=deployed.region)
    cloudwatch.set_alarm_state(
        AlarmName=view.alarms[0], StateValue="ALARM", StateReason="smoke test"
    )
    checks = _run(deployed, view, documents, ADMIN_ROLE, lines)
    failed = {c.name: c.detail for c in checks if not c.ok}
    assert set(failed) == {"query as another tenant refused", "alarms"}, lines
    assert failed["query as another tenant refused"] == "status 200"
    assert f"IN ALARM: {view.alarms[0]}" in failed["alarms"]
    assert json.dumps(lines).count("FAIL") == 2
