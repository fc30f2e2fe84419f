"""Every role is enforced in e2e: one grant taken out of each function's role and of each state
machine's role is a denial naming that role and action, during the scenario that needs it.

AbandonPlan runs in the cases whose commit fails (IndexChunks, ActivatePlan): it needs the
documents table (found missing by these tests). Two functions are covered statically instead:
BatchFailed runs only for a batch that failed permanently, and IndexSetup, the
deploy-time custom resource, retries a denied index creation for minutes (access policies
propagate slowly), which a grant removed would only make the deployment wait out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from shared_paths import REPO, VELVERA

from tests.e2e.conftest import ACME_ROLE, ADMIN_ROLE, put_events_as, upload
from tests.e2e.harness import Cloud
from tests.e2e.template import StackModel, StackTemplate
from tests.e2e.test_scans import one_page_scan

MARKDOWN = (VELVERA / "md" / "contact_info.md").read_bytes()
DOCX = (VELVERA / "docx" / "contact_info.docx").read_bytes()
CSV = b"route,fare\nLyon,12\nParis,15\n"
MD_KEY = "incoming/acme/contact_info.md"


@dataclass(frozen=True)
class Case:
    """Revoke `action` from the role of `owner` (a handler folder or a state machine name),
    run `scenario`, expect a denial of `denied` (an action prefix) for that role."""

    owner: str
    action: str
    scenario: str
    denied: str
    resource: str = ""
    """Revoke it only where the statement names this resource (a logical id's start)."""


CASES = [
    Case("starter", "states:StartExecution", "markdown", "states:StartExecution"),
    # a late sidecar: the record's new metadata, what the active version was indexed with
    Case("starter", "dynamodb:PutItem", "sidecar", "dynamodb:PutItem", "StorageDocumentsTable"),
    Case("starter", "s3:GetObject*", "sidecar", "s3:GetObject", "StorageArtifacts"),
    Case("delete", "aoss:APIAccessAll", "delete", "aoss:APIAccessAll"),
    Case("register", "s3:GetObject*", "markdown", "s3:GetObject"),
    # a converter's own role may only assume its access role; what it reads and writes is
    # granted to that role's session ("access:<handler>"), narrowed to one document
    Case("normalise", "sts:AssumeRole", "docx", "sts:AssumeRole"),
    Case("access:normalise", "s3:GetObjectVersion", "docx", "s3:GetObjectVersion"),
    Case("access:read_spreadsheet", "s3:GetObjectVersion", "csv", "s3:GetObjectVersion"),
    Case("access:render", "s3:PutObject", "pdf", "s3:PutObject"),
    Case("access:read_scans", "s3:PutObject", "scan", "s3:PutObject"),  # a scan's OCR words
    Case("convert", "bedrock:InvokeModel", "pdf", "bedrock:InvokeModel"),
    Case("parse", "dynamodb:BatchWriteItem", "markdown", "dynamodb:BatchWriteItem"),
    Case("section", "s3:PutObject", "replan", "s3:PutObject"),  # re-plans only
    Case("plan_section", "s3:PutObject", "markdown", "s3:PutObject"),
    Case("prepare_plan", "s3:PutObject", "markdown", "s3:PutObject"),
    Case("index_chunks", "bedrock:InvokeModel", "markdown", "bedrock:InvokeModel"),
    Case("activate_plan", "aoss:APIAccessAll", "markdown", "aoss:APIAccessAll"),
    Case("finalise", "dynamodb:GetItem", "markdown", "dynamodb:GetItem"),
    Case("replan_manifest", "s3:PutObject", "replan", "s3:PutObject"),
    Case("retrieve", "dynamodb:BatchGetItem", "retrieve", "dynamodb:BatchGetItem"),
    Case("ingest", "events:PutRule", "markdown", "events:PutRule"),
    Case("plan", "lambda:InvokeFunction", "markdown", "lambda:InvokeFunction"),
    Case("replan", "s3:GetObject*", "replan", "s3:GetObject"),
    # the bus rule's own role: the stack names it among the re-plan machine's starters
    Case("rule:ReplanRequested", "states:StartExecution", "replan", "states:StartExecution"),
]


def _role_of(model: StackModel, owner: str) -> tuple[str, str]:
    """(role logical id, how denials name the principal) of a function or state machine
    (a handler folder wins: `convert` is both a function and the batch machine), or of an
    EventBridge rule's target (`rule:<construct id>`)."""
    if owner.startswith("rule:"):
        prefix = f"PipelineIntake{owner.removeprefix('rule:')}"
        (logical_id,) = [r for r in model.stack.of_type("AWS::Events::Rule")
                         if r.startswith(prefix)]
        (target,) = model.stack.resources[logical_id]["Properties"]["Targets"]
        role = model.role_by_arn(model.resolver.resolve(target["RoleArn"]))
        return role.logical_id, (f"EventBridge rule {model.resolver.name(logical_id)} "
                                 f"(role {role.logical_id})")
    if owner.startswith("access:"):  # a converter's per-document access role
        handler = owner.removeprefix("access:")
        function = model.function_for(handler)
        role = model.role_by_arn(function.environment["CONVERTER_ACCESS_ROLE_ARN"])
        return role.logical_id, f"{function.logical_id} as {role.name} (functions/{handler})"
    if (REPO / "functions" / owner).is_dir():
        function = model.function_for(owner)
        return function.role.logical_id, f"{function.logical_id} (functions/{owner})"
    for logical_id, machine in model.stack.of_type("AWS::StepFunctions::StateMachine").items():
        name = model.resolver.name(logical_id)
        if name.endswith(f"-{owner}"):
            role = model.role_by_arn(model.resolver.resolve(machine["Properties"]["RoleArn"]))
            return role.logical_id, f"{logical_id} (state machine {name})"
    function = model.function_for(owner)
    return function.role.logical_id, f"{function.logical_id} (functions/{owner})"


@pytest.fixture(
    params=CASES, ids=lambda case: "-".join(filter(None, (case.owner, case.action, case.resource)))
)
def case(request: pytest.FixtureRequest) -> Case:
    return request.param


@pytest.fixture
def stack(stack_template: StackTemplate, case: Case) -> StackTemplate:
    role, _label = _role_of(StackModel(stack_template), case.owner)
    return stack_template.revoke(role, case.action, case.resource)


def _run(deployed: Cloud, scenario: str, pdf: bytes) -> None:
    data, key = {
        "pdf": (pdf, "incoming/acme/store_locations.pdf"),
        "docx": (DOCX, "incoming/acme/contact_info.docx"),
        "csv": (CSV, "incoming/acme/fares.csv"),
        "scan": (one_page_scan(), "incoming/acme/scan.pdf"),
    }.get(scenario, (MARKDOWN, MD_KEY))
    upload(deployed, data, key)
    _settle_or_drain(deployed)
    if scenario == "delete":
        boto3.client("s3", region_name=deployed.region).delete_object(
            Bucket=deployed.documents_bucket, Key=MD_KEY
        )
        _settle_or_drain(deployed)
    elif scenario == "sidecar":
        sidecar = {"metadataAttributes": {"dept": "travel"}}
        upload(deployed, json.dumps(sidecar).encode(), MD_KEY + ".metadata.json")
        _settle_or_drain(deployed)
    elif scenario == "replan":
        put_events_as(
            deployed,
            ADMIN_ROLE,
            [
                {
                    "Source": "drac.admin",
                    "DetailType": "Replan Requested",
                    "Detail": json.dumps({"tenant": "acme", "strategy": "fine"}),
                }
            ],
        )
        deployed.settle()
    elif scenario == "retrieve":
        answer = deployed.invoke_url(
            deployed.model.function_for("retrieve"),
            deployed.caller(ACME_ROLE),
            {"query": "contact"},
        )
        assert answer["statusCode"] == 502  # the handler failed: Lambda answers 502


def _settle_or_drain(deployed: Cloud) -> None:
    """Wait until idle; a queue consumer whose calls are denied retries forever, so once its
    denial is recorded its queues are purged (the test has what it needs)."""
    try:
        deployed.settle(timeout=60)
    except AssertionError:
        if not deployed.log.denials:
            raise
        for poller in deployed.pollers:
            deployed.sqs.purge_queue(QueueUrl=poller.source.queue.url)
        deployed.settle()


def test_a_revoked_grant_is_denied_by_name(cloud: Any, case: Case) -> None:
    # Only the revoked role is denied anything: the failure paths a denial starts (MarkFailed,
    # Abandon after a failed commit) run with their own roles' grants and succeed.
    deployed, _bedrock, _opensearch, pdf = cloud
    _role, label = _role_of(deployed.model, case.owner)
    _run(deployed, case.scenario, pdf)
    denials = deployed.log.take_denials()
    assert denials, f"nothing was denied to {label}"
    assert {d.principal for d in denials} == {label}
    assert denials[0].action.startswith(case.denied), denials[0]
