"""Moto-backed cloud with Lambda dispatched to the real handlers (see harness.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from moto import mock_aws  # noqa: E402
from moto.awslambda_simple.models import LambdaSimpleBackend  # noqa: E402
from moto.events.models import Rule  # noqa: E402
from shared_paths import VELVERA, require  # noqa: E402

from tests.e2e.fakes import FakeBedrockRuntime, FakeOpenSearch  # noqa: E402
from tests.e2e.harness import Cloud, Context, deploy, load_handler  # noqa: E402

CORPUS = require(VELVERA) / "pdf"
PDF = CORPUS / "store_locations.pdf"


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
                        "POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_METRICS_NAMESPACE": "Drac",
                        "POWERTOOLS_DEV": "0"}.items():
        monkeypatch.setenv(name, value)


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
def cloud(monkeypatch: pytest.MonkeyPatch, sleeps: list[float]) -> Any:
    """Deploy on moto; yield (cloud, bedrock fake, opensearch fake)."""
    pdf = PDF.read_bytes()
    bedrock = FakeBedrockRuntime(pdf, "google.gemma-3-27b-it", "amazon.titan-embed-text-v2:0")
    opensearch = FakeOpenSearch()
    invocations: list[str] = []

    def invoke(self, function_name, qualifier, body, headers, response_headers):
        name = function_name.rsplit(":", 1)[-1].removeprefix("drac-")
        invocations.append(name)
        module = load_handler(name)
        try:
            result = module.handler(json.loads(body or "{}"), Context())
        except Exception as exc:  # the Lambda runtime reports the class name as errorType
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)}).encode()
        return json.dumps(result).encode()

    original = Rule.send_to_targets

    def send_to_targets(self, original_event, transform_input=True):
        """moto delivers only to SQS/logs/buses: start Step Functions targets like EventBridge."""
        state_targets = [t for t in self.targets if ":states:" in t["Arn"]]
        if state_targets and self.event_pattern.matches_event(original_event):
            import boto3

            sfn = boto3.client("stepfunctions", region_name="us-east-1")
            for target in state_targets:
                assert target.get("InputPath") == "$.detail"
                sfn.start_execution(stateMachineArn=target["Arn"],
                                    input=json.dumps(original_event["detail"]))
        others = [t for t in self.targets if ":states:" not in t["Arn"]]
        saved, self.targets = self.targets, others
        try:
            original(self, original_event, transform_input)
        finally:
            self.targets = saved

    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_sfn as sfn_service,
    )

    original_normalise = sfn_service.StateTaskServiceSfn._normalise_parameters

    def normalise(self, parameters, boto_service_name=None, service_action_name=None):
        """moto passes the ASL's PascalCase names (StateMachineArn) to boto3 unchanged; the
        service maps them to the API's camelCase (stateMachineArn), so do that here."""
        original_normalise(self, parameters, boto_service_name, service_action_name)
        for key in list(parameters):
            if key[:1].isupper():
                parameters[key[0].lower() + key[1:]] = parameters.pop(key)

    original_response = sfn_service.StateTaskServiceSfn._normalise_response

    def normalise_response(self, response, boto_service_name=None, service_action_name=None):
        """...and the service integration answers in PascalCase (ExecutionArn, Output)."""
        original_response(self, response, boto_service_name, service_action_name)
        if isinstance(response, dict):
            for key in list(response):
                if key[:1].islower():
                    response[key[0].upper() + key[1:]] = response.pop(key)

    monkeypatch.setattr(sfn_service.StateTaskServiceSfn, "_normalise_parameters", normalise)
    monkeypatch.setattr(sfn_service.StateTaskServiceSfn, "_normalise_response",
                        normalise_response)
    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    monkeypatch.setattr(Rule, "send_to_targets", send_to_targets)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True},
                          "lambda": {"use_docker": False}}):
        deployed: Cloud = deploy(bedrock, opensearch, batch_size=2)
        deployed.invocations = invocations
        yield deployed, bedrock, opensearch, pdf
        for machine in ("ingest", "replan", "plan"):  # let child executions end inside the mock
            if deployed.executions(machine):
                deployed.wait(machine, timeout=60)
    os.environ.pop("MOTO_DUMMY", None)
