"""No transient error fails a document: S3 and DynamoDB throttling that outlasts botocore's
own retries (S3 `SlowDown` 503, DynamoDB `ProvisionedThroughputExceededException` and
`ThrottlingException`) becomes TransientError in every function, which the state machines
retry with their hours-long backoff; the starter waits instead of failing. Injected into a
real run on moto, with every function under its own role."""

from __future__ import annotations

import json
from typing import Any

from drac.ids import document_id_for
from drac.models import DocumentStatus
from tests.e2e.conftest import upload

KEY = "incoming/acme/store_locations.pdf"
SUSTAINED = 12
"""Consecutive calls answered with the fault: far more than any one task's first try."""


def _task_errors(deployed: Any) -> list[str]:
    """Every TaskFailed error of every execution of the run."""
    errors = []
    for machine in deployed.machines:
        for run in deployed.executions(machine):
            pages = deployed.sfn.get_paginator("get_execution_history").paginate(
                executionArn=run["executionArn"]
            )
            errors += [
                e["taskFailedEventDetails"]["error"]
                for page in pages
                for e in page["events"]
                if e["type"] == "TaskFailed"
            ]
    return errors


def _transient_retrier(deployed: Any) -> dict[str, Any]:
    definition = json.loads(
        deployed.sfn.describe_state_machine(stateMachineArn=deployed.machines["ingest"])[
            "definition"
        ]
    )
    (retrier,) = [
        r for r in definition["States"]["Parse"]["Retry"] if "TransientError" in r["ErrorEquals"]
    ]
    return retrier


def test_sustained_s3_and_dynamodb_throttling_ends_indexed(cloud: Any, sleeps: list[float]) -> None:
    deployed, _bedrock, opensearch, pdf = cloud
    faults = deployed.faults
    # the tasks' calls (the starter's transient errors make an upload wait: unit-tested, and
    # its waits take queue time, not Step Functions' recorded backoff)
    faults.spared = {"starter", "delete"}
    faults.fail_next("s3", "SlowDown", 503, SUSTAINED)
    faults.fail_next("dynamodb", "ProvisionedThroughputExceededException", 400, SUSTAINED)
    faults.fail_next("dynamodb", "ThrottlingException", 400, SUSTAINED)
    upload(deployed, pdf, KEY)
    (run,) = deployed.wait("ingest")
    assert run["status"] == "SUCCEEDED"
    document_id = document_id_for(pdf, "acme")
    assert deployed.runtime.registry.get(document_id).status is DocumentStatus.INDEXED
    assert opensearch.chunks(document_id)
    assert faults.left() == 0
    hit = {(service, code) for _fn, service, _op, code in faults.injected}
    assert hit == {
        ("s3", "SlowDown"),
        ("dynamodb", "ProvisionedThroughputExceededException"),
        ("dynamodb", "ThrottlingException"),
    }
    # each fault failed one try of a task, which Step Functions retried
    errors = _task_errors(deployed)
    assert len(errors) == len(faults.injected) == 3 * SUSTAINED
    assert errors and set(errors) == {"TransientError"}, set(errors)
    retrier = _transient_retrier(deployed)
    assert (retrier["MaxAttempts"], retrier["MaxDelaySeconds"]) == (40, 900)
    assert len(sleeps) >= len(errors) and max(sleeps) <= 900
