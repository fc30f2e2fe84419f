"""The optional KbTransform function (-c kbTransformBucket): its role's exact grants and its
output; absent without the option."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infrastructure.conftest import Synth, synthesise
from tests.infrastructure.helpers import flatten, statements

BUCKET = "acme-kb-intermediate"
PREFIX = "drac/"


@pytest.fixture(scope="module")
def kb() -> Synth:
    """The stack with the KbTransform function (rules planner, the default strategy)."""
    return synthesise({"kbTransformBucket": BUCKET, "kbTransformPrefix": PREFIX})


def _function(synth: Synth) -> tuple[str, dict[str, Any]]:
    functions = {
        logical_id: fn
        for logical_id, fn in synth.of_type("AWS::Lambda::Function").items()
        if logical_id.startswith("KbTransform")
    }
    assert len(functions) == 1, sorted(functions)
    return next(iter(functions.items()))


def _grants(synth: Synth, fn: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """(actions, resource) of every statement of the function's role's policies."""
    role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    found = []
    for logical_id, statement in statements(synth.resources):
        policy = synth.resources[logical_id]
        if {"Ref": role} not in policy["Properties"].get("Roles", []):
            continue
        actions = statement["Action"]
        actions = tuple(sorted([actions] if isinstance(actions, str) else actions))
        resources = statement["Resource"]
        for resource in resources if isinstance(resources, list) else [resources]:
            found.append((actions, flatten(resource)))
    return found


def test_without_the_option_there_is_no_kb_function(synth: Synth) -> None:
    assert not [k for k in synth.of_type("AWS::Lambda::Function") if k.startswith("KbTransform")]
    assert "KbTransformFunctionArn" not in synth.template.to_json().get("Outputs", {})


def test_the_role_reads_and_writes_only_the_named_prefix(kb: Synth) -> None:
    logical_id, fn = _function(kb)
    grants = _grants(kb, fn)
    objects = [g for g in grants if not g[0][0].startswith("xray:")]
    assert objects == [
        (("s3:GetObject", "s3:PutObject"), f"arn:<AWS::Partition>:s3:::{BUCKET}/{PREFIX}*")
    ]
    props = fn["Properties"]
    assert props["Timeout"] == 900  # the knowledge base waits for it; Lambda's maximum
    env = props["Environment"]["Variables"]
    assert env["KB_INTERMEDIATE_BUCKET"] == BUCKET and env["KB_INTERMEDIATE_PREFIX"] == PREFIX
    output = kb.template.to_json()["Outputs"]["KbTransformFunctionArn"]
    assert output["Value"] == {"Fn::GetAtt": [logical_id, "Arn"]}
    nag = {r["pluginName"]: r for r in kb.report["pluginReports"]}["AwsSolutions"]
    assert nag["violations"] == [], [v["ruleName"] for v in nag["violations"]]


def test_the_llm_planner_adds_exactly_its_model() -> None:
    llm = synthesise(
        {"kbTransformBucket": BUCKET, "strategy": {"name": "default", "planner": "llm"}}
    )
    _, fn = _function(llm)
    models = [g for g in _grants(llm, fn) if g[0] == ("bedrock:InvokeModel",)]
    assert models == [
        (
            ("bedrock:InvokeModel",),
            "arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/google.gemma-3-12b-it",
        )
    ]
    objects = [g for g in _grants(llm, fn) if g[0][0].startswith("s3:")]
    assert objects == [(("s3:GetObject", "s3:PutObject"), f"arn:<AWS::Partition>:s3:::{BUCKET}/*")]


def test_the_documented_data_source_uses_cloudformation_names() -> None:
    """docs/integrations.md's AWS::Bedrock::DataSource, rebuilt with CDK's CfnDataSource (its
    keyword arguments are checked, its output names come from the resource specification)."""
    import json
    import re

    from aws_cdk import App, Stack
    from aws_cdk import aws_bedrock as bedrock
    from aws_cdk.assertions import Template

    from tests.infrastructure.conftest import ROOT

    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    block = re.search(r"Attach it to a data source.*?```json\n(.*?)```", text, re.DOTALL)
    assert block, "the example is gone from docs/integrations.md"
    documented = json.loads(block.group(1))
    props = documented["Properties"]
    transformation = props["VectorIngestionConfiguration"]["CustomTransformationConfiguration"]
    lambda_arn = transformation["Transformations"][0]["TransformationFunction"][
        "TransformationLambdaConfiguration"
    ]["LambdaArn"]

    stack = Stack(App(), "Example")
    cfn = bedrock.CfnDataSource
    cfn(
        stack,
        "DataSource",
        knowledge_base_id=props["KnowledgeBaseId"],
        name=props["Name"],
        data_source_configuration=cfn.DataSourceConfigurationProperty(
            type="S3",
            s3_configuration=cfn.S3DataSourceConfigurationProperty(
                bucket_arn="arn:aws:s3:::acme-docs"
            ),
        ),
        vector_ingestion_configuration=cfn.VectorIngestionConfigurationProperty(
            chunking_configuration=cfn.ChunkingConfigurationProperty(chunking_strategy="NONE"),
            custom_transformation_configuration=cfn.CustomTransformationConfigurationProperty(
                intermediate_storage=cfn.IntermediateStorageProperty(
                    s3_location=cfn.S3LocationProperty(uri="s3://acme-kb-intermediate/drac/")
                ),
                transformations=[
                    cfn.TransformationProperty(
                        step_to_apply="POST_CHUNKING",
                        transformation_function=cfn.TransformationFunctionProperty(
                            transformation_lambda_configuration=(
                                cfn.TransformationLambdaConfigurationProperty(lambda_arn=lambda_arn)
                            )
                        ),
                    )
                ],
            ),
        ),
    )
    (resource,) = Template.from_stack(stack).to_json()["Resources"].values()
    assert resource == documented
