"""The harness enforces the template's IAM: a grant taken out of it is a named denial."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from drac.ids import document_id_for
from tests.e2e.template import StackModel, StackTemplate

KEY = "incoming/acme/store_locations.pdf"


@pytest.fixture
def stack(stack_template: StackTemplate) -> StackTemplate:
    """The stack without the Register function's read access to the documents bucket."""
    register = StackModel(stack_template).function_for("register")
    return stack_template.revoke(register.role.logical_id, "s3:GetObject*")


def test_register_without_read_access_is_denied_by_name(cloud: Any) -> None:
    deployed, _bedrock, _opensearch, pdf = cloud
    register = deployed.model.function_for("register")
    boto3.client("s3", region_name=deployed.region).put_object(
        Bucket=deployed.documents_bucket, Key=KEY, Body=pdf)

    (run,) = deployed.wait("ingest")
    assert run["name"].startswith(document_id_for(pdf, "acme") + "-")
    assert run["status"] == "FAILED"
    # The handler saw what AWS answers (AccessDenied inside GetObject) ...
    failed = [e["taskFailedEventDetails"] for e in deployed.history(run["executionArn"])
              if e["type"] == "TaskFailed"]
    assert failed and failed[0]["error"] == "ClientError"
    assert "AccessDenied" in json.loads(failed[0]["cause"])["errorMessage"]
    # ... and the denial names the function, the action and the resource.
    denials = deployed.log.take_denials()
    assert [(d.principal, d.action, d.resource) for d in denials] == [(
        f"{register.logical_id} (functions/register)", "s3:GetObjectVersion",
        f"arn:aws:s3:::{deployed.documents_bucket}/{KEY}")]  # the upload's own version
    assert "no statement of its role allows it" in denials[0].reason
    # Each function has its own session: the Starter read the same object with its own role.
    starter = deployed.principal(deployed.model.function_for("starter")).label
    reads = [c for c in deployed.log.calls_of(starter) if c.operation == "GetObject"]
    assert [str(p) for c in reads for p in c.permissions] == [
        f"s3:GetObjectVersion on arn:aws:s3:::{deployed.documents_bucket}/{KEY}"]

