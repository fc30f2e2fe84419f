"""Shared fixtures of the core unit tests: real Markdown documents and a scripted text model."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from drac.errors import ModelCallError
from drac.models import TokenUsage
from drac.ports import ModelReply, TextModel
from tests.unit.aws.conftest import MACHINE, REGION, make_stack_tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "markdown"


@pytest.fixture
def markdown_fixtures() -> dict[str, str]:
    """The Markdown fixture documents by file name."""
    return {path.name: path.read_text("utf-8") for path in sorted(FIXTURES.glob("*.md"))}


Script = str | Exception | Callable[[str, str], str]


class ScriptedModel(TextModel):
    """A TextModel answering from a script: one item per call (text, exception, or function).

    The last item repeats once the script runs out; every call is recorded (`calls` as
    (system, prompt), `requests` with everything else asked). A ModelReply item is returned
    as it is (to script a finish reason).
    """

    def __init__(
        self,
        script: Sequence[Script | ModelReply],
        name: str = "fake-planner",
        structured_output: bool = False,
    ) -> None:
        self.name = name
        self.script = list(script)
        self.calls: list[tuple[str, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.structured_output = structured_output

    def complete(
        self,
        system: str,
        prompt: str,
        max_tokens: int = 2048,
        *,
        schema: Any = None,
        grammar: str | None = None,
        earlier: Sequence[tuple[str, str]] = (),
    ) -> ModelReply:
        item = self.script[min(len(self.calls), len(self.script) - 1)]
        self.calls.append((system, prompt))
        self.requests.append(
            {
                "max_tokens": max_tokens,
                "schema": schema,
                "grammar": grammar,
                "earlier": list(earlier),
            }
        )
        if isinstance(item, Exception):
            raise item
        if isinstance(item, ModelReply):
            return item
        text = item(system, prompt) if callable(item) else item
        return ModelReply(
            text=text,
            model=self.name,
            usage=TokenUsage(input_tokens=len(prompt) // 4, output_tokens=len(text) // 4),
            latency_ms=5.0,
        )


@pytest.fixture
def scripted_model() -> type[ScriptedModel]:
    """The ScriptedModel class, to build fakes with a per-test script."""
    return ScriptedModel


__all__ = ["FIXTURES", "ModelCallError", "ScriptedModel"]


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A moto session: yields a boto3 Session in us-east-1 (no network, fake credentials)."""
    import boto3
    from moto import mock_aws

    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield boto3.session.Session(region_name=REGION)


@pytest.fixture
def cloud(aws: Any) -> Any:
    """A Runtime over moto (buckets, tables, a long-running ingest machine) and a fake
    OpenSearch collection; yields (runtime, opensearch)."""
    import json

    from drac.aws.runtime import CloudResources, Runtime
    from drac.settings import Settings
    from tests.fakes import FakeOpenSearch

    s3 = aws.client("s3")
    for bucket in ("docs", "art"):
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    make_stack_tables(aws)
    aws.client("stepfunctions").create_state_machine(
        name="Drac-ingest",
        roleArn="arn:aws:iam::123456789012:role/r",
        definition=json.dumps(
            {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 600, "End": True}}}
        ),
    )
    resources = CloudResources(
        documents_bucket="docs",
        artifacts_bucket="art",
        documents_table="documents",
        sources_table="sources",
        elements_table="elements",
        plans_table="plans",
        ledger_table="ledger",
        collection_endpoint="https://fake.aoss",
        ingest_state_machine_arn=MACHINE,
        converter_access_role_arn="arn:aws:iam::123456789012:role/converter-access",
        region=REGION,
    )
    opensearch = FakeOpenSearch()
    settings = Settings(max_running_documents=2, batch_size=2)
    return Runtime(resources, settings, aws, opensearch_client=opensearch), opensearch
