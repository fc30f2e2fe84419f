"""The synthesised stack deployed on moto, its functions run in-process with their own roles.

See harness.py (deployment, Lambda service), guard.py (IAM enforcement), moto_patches.py
(where moto differs from AWS) and template.py (names and intrinsics).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from moto import mock_aws  # noqa: E402
from shared_paths import VELVERA, require  # noqa: E402

from tests.e2e import moto_patches  # noqa: E402
from tests.e2e.harness import Cloud, deploy  # noqa: E402
from tests.e2e.synth import synthesise_stack  # noqa: E402
from tests.e2e.template import StackModel, StackTemplate  # noqa: E402
from tests.fakes import FakeBedrockRuntime, FakeOpenSearch  # noqa: E402

CORPUS = require(VELVERA) / "pdf"
PDF = CORPUS / "store_locations.pdf"
CONVERSION_MODEL = "google.gemma-3-27b-it"
EMBEDDING_MODEL = "amazon.titan-embed-text-v2:0"


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
                        "POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_METRICS_NAMESPACE": "Drac",
                        "POWERTOOLS_DEV": "0"}.items():
        monkeypatch.setenv(name, value)


# `cdk deploy -c batchSize=2`: the 4-page test PDF then spans two conversion batches. Two
# tenants' applications (one role with a path) and an operator role call the API and re-plan.
ACME_ROLE = "arn:aws:iam::123456789012:role/acme-search"
BETA_ROLE = "arn:aws:iam::123456789012:role/apps/beta-search"
ADMIN_ROLE = "arn:aws:iam::123456789012:role/drac-operator"
DEPLOY_CONTEXT = {
    "batchSize": 2,
    "tenantPrincipals": {ACME_ROLE: "acme", BETA_ROLE: "beta"},
    "adminPrincipals": [ADMIN_ROLE],
}


@pytest.fixture(scope="session")
def stack_template() -> StackTemplate:
    """The real app synthesised as `cdk deploy -c batchSize=2` does (cdk.json's context)."""
    return synthesise_stack(DEPLOY_CONTEXT)


@pytest.fixture
def stack(stack_template: StackTemplate) -> StackTemplate:
    """The template a test deploys (override in a test module to deploy a changed one)."""
    return stack_template


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Step Functions retry waits, recorded instead of slept (the ASL's backoff is real)."""
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    recorded: list[float] = []

    class Clock:
        @staticmethod
        def sleep(seconds: float) -> None:
            recorded.append(seconds)

    monkeypatch.setattr(retrier_decl, "time", Clock)
    return recorded


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch, sleeps: list[float],
             stack: StackTemplate) -> Iterator[Cloud]:
    """The stack deployed on moto. At the end the pipeline must be idle, with no call denied
    and nothing in a dead-letter queue (a test expecting denials takes them first)."""
    bedrock = FakeBedrockRuntime(PDF.read_bytes(), CONVERSION_MODEL, EMBEDDING_MODEL)
    cloud = Cloud(StackModel(stack), bedrock, FakeOpenSearch())
    moto_patches.patch_s3_notifications(monkeypatch)
    moto_patches.patch_eventbridge_targets(monkeypatch, cloud.model, cloud.authorizer, cloud.log)
    moto_patches.patch_step_functions(monkeypatch)
    moto_patches.patch_sfn_clients(monkeypatch, cloud.machine_session)
    moto_patches.patch_lambda(monkeypatch, cloud.dispatch)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True},
                          "lambda": {"use_docker": False}}):
        deploy(cloud)
        cloud.start()
        problems: list[str] = []
        try:
            yield cloud
        finally:
            try:
                cloud.settle()
            except AssertionError as exc:
                problems.append(str(exc))
            cloud.close()
        problems += [f"denied: {denial}" for denial in cloud.log.take_denials()]
        problems += [f"over a limit: {violation}" for violation in cloud.violations]
        problems += [f"over a limit: {limit}" for limit in cloud.log.limits]
        problems += [f"dead letters: {queue}: {count}"
                     for queue, count in cloud.dead_letters().items()]
    os.environ.pop("MOTO_DUMMY", None)
    if problems:
        details = "\n".join(problems + [f"handler error: {e}" for e in cloud.errors[:5]])
        pytest.fail(f"the deployment did not end clean:\n{details}", pytrace=False)


@pytest.fixture
def cloud(deployed: Cloud) -> tuple[Cloud, FakeBedrockRuntime, FakeOpenSearch, bytes]:
    """(cloud, bedrock fake, opensearch fake, the test PDF's bytes)."""
    return deployed, deployed.bedrock, deployed.opensearch, PDF.read_bytes()


def upload(cloud: Cloud, data: bytes, key: str) -> None:
    """Put an object into the documents bucket (as a user would)."""
    import boto3

    boto3.client("s3", region_name=cloud.region).put_object(
        Bucket=cloud.documents_bucket, Key=key, Body=data)



def put_events_as(cloud: Cloud, role_arn: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """PutEvents on the project's bus as a role whose identity policy allows PutEvents on it
    (the bus policy decides the rest)."""
    from tests.e2e.iam import Statement

    bus = f"arn:aws:events:{cloud.region}:{cloud.model.stack.account}:event-bus/{cloud.bus_name}"
    allow = Statement.from_json({"Effect": "Allow", "Action": "events:PutEvents",
                                 "Resource": bus}, "caller policy")
    caller = cloud.caller(role_arn, (allow,))
    events = cloud.caller_session(caller).client("events", region_name=cloud.region)
    return events.put_events(Entries=[{"EventBusName": cloud.bus_name, **e} for e in entries])
