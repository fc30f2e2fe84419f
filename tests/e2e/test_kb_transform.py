"""KbTransform on moto under its own role: a Bedrock Knowledge Base's custom transformation.

The events and batch files are shaped as AWS documents them (Amazon Bedrock User Guide, "Use a
custom transformation Lambda function to define how your data is ingested",
https://docs.aws.amazon.com/bedrock/latest/userguide/kb-custom-transformation.html: the input
event with `version`, `knowledgeBaseId`, `dataSourceId`, `ingestionJobId`, `bucketName`,
`priorTask` and `inputFiles[]` of `originalFileLocation`, `fileMetadata` and
`contentBatches[].key`; the batch files `{"fileContents": [{"contentBody", "contentType",
"contentMetadata"}]}`). One synth of the app with `-c kbTransformBucket`; the handler runs
in-process with a boto3 session that checks every call against the function's role in the
synthesised template (tests/e2e/guard.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from drac.aws.runtime import CloudResources, Runtime
from drac.aws.stages.errors import KbTransformError
from drac.aws.stages.kb_transform import OUTPUT_SUFFIX
from drac.settings import SETTINGS_VARIABLE, Settings
from tests.e2e.guard import AccessLog, Authorizer, FunctionPrincipal, guarded_session
from tests.e2e.harness import LambdaContext, _FunctionSession, load_handler
from tests.e2e.synth import synthesise_stack
from tests.e2e.template import FunctionSpec, StackModel

BUCKET = "acme-kb-intermediate"
PREFIX = "kb-work/"
REGION = "us-east-1"

# Sections long enough (about 900 characters) for the default strategy to chunk them apart.
SALES = " ".join(f"Store {n} reported steady sales in every month of the year." for n in range(15))
STAFF = " ".join(f"Team {n} kept its headcount and trained two apprentices." for n in range(15))
LADDERS = " ".join(f"Ladder {n} was inspected and tagged before use." for n in range(18))
SOLVENTS = " ".join(f"Cabinet {n} holds solvents away from heat and is logged." for n in range(16))

REPORT = f"""# Annual report

## Revenue

Revenue grew by 12 percent to 4.1 million euros, driven by the northern stores. {SALES}

| Region | Revenue |
|---|---|
| North | 2.3 |
| South | 1.8 |

## Staff

The company employed 48 people at the end of the year, up from 41. {STAFF}
"""

PAGED = f"""<!-- Page 1 -->
# Safety manual

## Ladders

Inspect every ladder before use; never stand on the top two rungs. {LADDERS}

<!-- Page 2 -->
## Chemicals

Store solvents in the ventilated cabinet, away from heat, and log every use. {SOLVENTS}
"""


@pytest.fixture(scope="module")
def model() -> StackModel:
    """The app synthesised with the KbTransform function (`-c kbTransformBucket=...`)."""
    return StackModel(synthesise_stack({"kbTransformBucket": BUCKET, "kbTransformPrefix": PREFIX}))


@dataclass
class Invoker:
    """The function's handler with its own guarded session, and what it may see."""

    spec: FunctionSpec
    principal: FunctionPrincipal
    module: Any
    s3: Any

    def __call__(self, event: dict[str, Any], context: Any = None) -> dict[str, Any]:
        return self.module.handler(event, context or LambdaContext(self.spec))

    def keys(self) -> list[str]:
        listed = self.s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
        return sorted(item["Key"] for item in listed)

    def read(self, key: str) -> dict[str, Any]:
        return json.loads(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())


@pytest.fixture
def invoke(model: StackModel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Invoker]:
    spec = model.function_for("kb_transform")
    for name in ("KB_INTERMEDIATE_BUCKET", "KB_INTERMEDIATE_PREFIX"):
        monkeypatch.setenv(name, spec.environment[name])
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.create_bucket(Bucket="someone-else")
        principal = FunctionPrincipal(
            spec.logical_id, spec.name, spec.role, Authorizer(model), AccessLog(), spec.handler_dir
        )
        variables = {**spec.environment, "AWS_REGION": REGION}
        runtime = Runtime(
            CloudResources.from_environ(variables),
            Settings.from_json(variables[SETTINGS_VARIABLE]),
            _FunctionSession(guarded_session(principal, REGION), bedrock=None),
        )
        module = load_handler("kb_transform")
        module._runtime = lambda: runtime
        yield Invoker(spec, principal, module, s3)


def batch(s3: Any, key: str, *bodies: str, content_type: str = "TEXT") -> None:
    """A batch file as the knowledge base writes it."""
    contents = [
        {
            "contentBody": body,
            "contentType": content_type,
            "contentMetadata": {"x-amz-bedrock-kb-source-uri": f"s3://acme-docs/{n}"},
        }
        for n, body in enumerate(bodies)
    ]
    s3.put_object(Bucket=BUCKET, Key=key, Body=json.dumps({"fileContents": contents}))


def event(*files: tuple[str, list[str]]) -> dict[str, Any]:
    """The input event, as the documentation shows it."""
    return {
        "version": "1.0",
        "knowledgeBaseId": "KBID123456",
        "dataSourceId": "DSID123456",
        "ingestionJobId": "JOBID12345",
        "bucketName": BUCKET,
        "priorTask": "CHUNKING",
        "inputFiles": [
            {
                "originalFileLocation": {
                    "type": "S3",
                    "s3_location": {"key": name, "bucket": "acme-docs"},
                },
                "fileMetadata": {"department": "finance", "file": name},
                "contentBatches": [{"key": key} for key in keys],
            }
            for name, keys in files
        ],
    }


def test_a_batch_of_several_files_gets_drac_chunks(invoke: Invoker) -> None:
    batch(invoke.s3, f"{PREFIX}job/report/1.json", REPORT)
    batch(invoke.s3, f"{PREFIX}job/report/2.json", PAGED)
    # a second, empty content entry gives no chunk
    batch(invoke.s3, f"{PREFIX}job/notes/1.json", "Only one line of notes.", "")
    answer = invoke(
        event(
            ("report.md", [f"{PREFIX}job/report/1.json", f"{PREFIX}job/report/2.json"]),
            ("notes.txt", [f"{PREFIX}job/notes/1.json"]),
        )
    )

    files = answer["outputFiles"]
    assert [f["fileMetadata"]["file"] for f in files] == ["report.md", "notes.txt"]
    assert files[0]["originalFileLocation"]["s3_location"]["key"] == "report.md"
    outputs = [b["key"] for f in files for b in f["contentBatches"]]
    assert outputs == [
        f"{PREFIX}job/report/1.json{OUTPUT_SUFFIX}",
        f"{PREFIX}job/report/2.json{OUTPUT_SUFFIX}",
        f"{PREFIX}job/notes/1.json{OUTPUT_SUFFIX}",
    ]

    report = invoke.read(outputs[0])["fileContents"]
    texts = [entry["contentBody"] for entry in report]
    # verbatim: breadcrumb, blank line, the document's own lines; the table keeps its header
    assert any(
        t.startswith("Annual report >> Revenue\n\nRevenue grew by 12 percent") for t in texts
    )
    table = next(t for t in texts if "| North | 2.3 |" in t)
    assert "| Region | Revenue |\n|---|---|\n| North | 2.3 |\n| South | 1.8 |" in table
    assert any(
        "The company employed 48 people at the end of the year, up from 41." in t for t in texts
    )
    for entry in report:
        meta = entry["contentMetadata"]
        assert entry["contentType"] == "TEXT"
        assert meta["x-amz-bedrock-kb-source-uri"] == "s3://acme-docs/0"
        assert meta["drac_breadcrumb"].startswith("Annual report")
        assert meta["drac_chunk_id"]
        assert "drac_page_start" not in meta  # no page markers in this content

    paged = invoke.read(outputs[1])["fileContents"]
    pages = {
        e["contentMetadata"]["drac_breadcrumb"]: (
            e["contentMetadata"]["drac_page_start"],
            e["contentMetadata"]["drac_page_end"],
        )
        for e in paged
    }
    assert pages == {"Safety manual >> Ladders": (1, 1), "Safety manual >> Chemicals": (2, 2)}
    notes = invoke.read(outputs[2])["fileContents"]
    assert [e["contentBody"] for e in notes] == ["Only one line of notes."]
    assert invoke.principal.log.take_denials() == []


def test_malformed_batch_fails_clearly_and_writes_nothing(invoke: Invoker) -> None:
    good, bad = f"{PREFIX}job/a/1.json", f"{PREFIX}job/b/1.json"
    batch(invoke.s3, good, REPORT)
    invoke.s3.put_object(Bucket=BUCKET, Key=bad, Body=b'{"fileContents": [{"contentType": 1}]')
    before = invoke.keys()
    with pytest.raises(KbTransformError, match=r"batch 'kb-work/job/b/1\.json' is not a"):
        invoke(event(("a.md", [good]), ("b.md", [bad])))
    assert invoke.keys() == before  # the good batch's chunks were not written either


@dataclass
class _Clock(LambdaContext):
    """A Lambda context whose remaining time runs out after `calls` questions."""

    calls: int = 0

    def get_remaining_time_in_millis(self) -> int:
        """10 minutes left for the first `calls` questions, then 20 seconds."""
        self.calls -= 1
        return 600_000 if self.calls >= 0 else 20_000


def test_a_file_too_large_for_the_time_left_fails_before_writing(invoke: Invoker) -> None:
    sections = "\n\n".join(f"## Part {n}\n\n" + "Words of the part. " * 400 for n in range(60))
    key = f"{PREFIX}job/big/1.json"
    batch(invoke.s3, key, "# Big\n\n" + sections)
    before = invoke.keys()
    with pytest.raises(KbTransformError, match=r"ms left in this invocation.*nothing was written"):
        invoke(event(("big.md", [key])), _Clock(invoke.spec, calls=3))
    assert invoke.keys() == before


def test_only_the_named_bucket_and_prefix(invoke: Invoker) -> None:
    other = {**event(("x.md", [f"{PREFIX}job/x/1.json"])), "bucketName": "someone-else"}
    with pytest.raises(KbTransformError, match="not the configured intermediate bucket"):
        invoke(other)
    with pytest.raises(KbTransformError, match="outside the intermediate prefix"):
        invoke(event(("x.md", ["elsewhere/1.json"])))
    # and the role itself: a read outside the prefix is denied by IAM, not only by the code
    s3 = invoke.module._runtime().client("s3")
    invoke.s3.put_object(Bucket=BUCKET, Key="elsewhere/1.json", Body=b"{}")
    with pytest.raises(s3.exceptions.ClientError, match="AccessDenied"):
        s3.get_object(Bucket=BUCKET, Key="elsewhere/1.json")
    with pytest.raises(s3.exceptions.ClientError, match="AccessDenied"):
        s3.put_object(Bucket="someone-else", Key=f"{PREFIX}x", Body=b"x")
