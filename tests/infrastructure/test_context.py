"""Context options change the template (the second synth uses ALTERNATE_CONTEXT)."""

from __future__ import annotations

import pytest

from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import definition, flatten, state, statements


def asl(synth: Synth, name: str) -> dict:
    construct = getattr(synth.stack.pipeline, f"{name}_machine")
    return definition(synth.resources[synth.logical_id(construct)])


def test_concurrency_options_reach_the_map_states(synth: Synth, alternate: Synth) -> None:
    for which, expected in ((synth, (5, 10, 10)), (alternate, (3, 7, 4))):
        found = (state(asl(which, "ingest"), "ConvertBatches")["MaxConcurrency"],
                 state(asl(which, "plan"), "PlanSections")["MaxConcurrency"],
                 state(asl(which, "replan"), "ReplanDocuments")["MaxConcurrency"])
        assert found == expected


def test_conversion_model_option_changes_environment_and_grant(alternate: Synth) -> None:
    convert = alternate.stack.pipeline.convert
    props = alternate.resources[alternate.logical_id(convert)]["Properties"]
    assert props["Environment"]["Variables"]["CONVERSION_MODEL_ID"] == "us.google.gemma-3-12b-it"
    role = alternate.stack.resolve(alternate.stack.get_logical_id(convert.role.node.default_child))
    resources = set()
    for policy_id, statement in statements(alternate.resources):
        if statement["Action"] == "bedrock:InvokeModel" and role in [
                r["Ref"] for r in alternate.resources[policy_id]["Properties"]["Roles"]]:
            resources.update(flatten(r) for r in statement["Resource"])
    # a cross-region inference profile: the profile in this region and the model anywhere
    assert resources == {
        "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:"
        "inference-profile/us.google.gemma-3-12b-it",
        "arn:<AWS::Partition>:bedrock:*::foundation-model/google.gemma-3-12b-it",
    }


def test_index_name_removal_policy_and_expiry_options(alternate: Synth) -> None:
    (index,) = alternate.of_type("Custom::DracChunkIndex").values()
    assert index["Properties"]["IndexName"] == "other-chunks"
    for kind in ("AWS::S3::Bucket", "AWS::DynamoDB::Table"):
        for resource in alternate.of_type(kind).values():
            assert resource["DeletionPolicy"] == "Delete"
    artifacts = alternate.resources[alternate.logical_id(alternate.stack.storage.artifacts)]
    rules = {r["Id"]: r for r in artifacts["Properties"]["LifecycleConfiguration"]["Rules"]}
    assert rules["expire-page-images"]["ExpirationInDays"] == 7


def test_invalid_context_is_refused() -> None:
    from app import build_app

    with pytest.raises(ValueError, match="removalPolicy"):
        build_app({"removalPolicy": "sometimes"})
