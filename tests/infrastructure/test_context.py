"""Context options change the template (the second synth uses ALTERNATE_CONTEXT)."""

from __future__ import annotations

import pytest

from drac.settings import SETTINGS_VARIABLE, Settings
from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import definition, flatten, state, statements


def asl(synth: Synth, name: str) -> dict:
    construct = getattr(synth.stack.pipeline, f"{name}_machine")
    return definition(synth.resources[synth.logical_id(construct)])


def test_concurrency_options_reach_the_map_states(synth: Synth, alternate: Synth) -> None:
    for which, expected in ((synth, (5, 10, 4, 10)), (alternate, (3, 7, 2, 4))):
        found = (
            state(asl(which, "convert"), "ConvertBatches")["MaxConcurrency"],
            state(asl(which, "plan"), "PlanSections")["MaxConcurrency"],
            state(asl(which, "plan"), "IndexRanges")["MaxConcurrency"],
            state(asl(which, "replan"), "ReplanDocuments")["MaxConcurrency"],
        )
        assert found == expected
    # groups of items run one after the other; each group is at most 1,000 items
    for machine, outer in (
        ("ingest", "ConvertGroups"),
        ("plan", "PlanGroups"),
        ("plan", "IndexGroups"),
    ):
        assert state(asl(synth, machine), outer)["MaxConcurrency"] == 1


def test_conversion_model_option_changes_environment_and_grant(alternate: Synth) -> None:
    convert = alternate.stack.pipeline.stages.convert
    props = alternate.resources[alternate.logical_id(convert)]["Properties"]
    settings = Settings.from_json(props["Environment"]["Variables"][SETTINGS_VARIABLE])
    assert settings.models.conversion_model == "us.google.gemma-3-12b-it"
    assert settings == alternate.stack.settings
    role = alternate.stack.resolve(alternate.stack.get_logical_id(convert.role.node.default_child))
    resources = set()
    for policy_id, statement in statements(alternate.resources):
        if statement["Action"] == "bedrock:InvokeModel" and role in [
            r["Ref"] for r in alternate.resources[policy_id]["Properties"]["Roles"]
        ]:
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


@pytest.mark.parametrize(
    ("context", "named"),
    [
        ({"removalPolicy": "sometimes"}, "removal_policy"),
        ({"batchSize": 0}, "batch_size"),
        ({"batchSize": "0"}, "batch_size"),  # `-c batchSize=0` arrives as a string
        ({"collectionName": "Not_Valid"}, "collection name"),
        ({"readerPrincipals": ["somebody"]}, "reader_principals"),
        ({"strategy": {"name": "default", "planner": "oracle"}}, "planner"),
        ({"batchSise": 4}, "unknown context key 'batchSise'"),
    ],
)
def test_invalid_context_is_refused_at_synth_with_the_field_named(
    context: dict, named: str
) -> None:
    from app import build_app

    with pytest.raises(ValueError, match=named):
        build_app(context)


def test_context_strings_are_read_as_their_types() -> None:
    settings = Settings.from_context(
        {
            "batchSize": "4",
            "readerPrincipals": '["arn:aws:iam::123456789012:role/reader"]',
            "stackName": "X",
            "@aws-cdk/core:flag": True,
        }
    )
    assert settings.conversion.batch_size == 4
    assert settings.cloud.reader_principals == ("arn:aws:iam::123456789012:role/reader",)


def test_running_documents_stay_countable_by_one_list_call() -> None:
    """The starter counts running ingests with one ListExecutions call (at most 1,000)."""
    from drac.settings import SettingsError

    assert Settings.from_context({"maxRunningDocuments": 1000}).cloud.max_running_documents == 1000
    with pytest.raises(SettingsError, match=r"maxRunningDocuments|max_running_documents"):
        Settings.from_context({"maxRunningDocuments": 1001})
