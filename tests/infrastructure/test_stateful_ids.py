"""A refactor cannot replace a stateful resource: CloudFormation identifies a resource by its
logical id, and a changed id is a new resource (created empty) plus the old one deleted or,
retained, orphaned. Every table, bucket, queue and the collection is pinned here by logical
id; renaming a construct, moving it to another scope or adding one fails this test until the
pin is changed on purpose (with a migration for the data: see docs/aws.md, "Safe updates")."""

from __future__ import annotations

from tests.infrastructure.conftest import Synth

PINNED = {
    "AWS::S3::Bucket": {
        "StorageAccessLogs96FB524C",
        "StorageDocumentsCD3FCE94",
        "StorageArtifacts08431D1F",
    },
    "AWS::DynamoDB::Table": {
        "StorageDocumentsTableF859B0E6",
        "StorageSourcesTable592981C7",
        "StorageElementsTable1EDF5D8D",
        "StoragePlansTableF304645E",
        "StorageLedgerTable795D73B2",
    },
    "AWS::OpenSearchServerless::Collection": {"SearchCollectionE9B440CC"},
    "AWS::SQS::Queue": {
        "PipelineIntakeIngestQueue0A9FADF6",
        "PipelineIntakeIngestQueueDlq96BB56AC",
        "PipelineIntakeDeleteQueue2D2A9784",
        "PipelineIntakeDeleteQueueDlq66EA0297",
        "PipelineIntakeObjectEventsDlq6A2385A4",
        "PipelineIntakeReplanTargetDlqE466B243",
    },
}
CAPACITY_GROUP = "SearchCapacityGroupA27D9EF6"


def test_every_stateful_resource_keeps_its_logical_id(synth: Synth, alternate: Synth) -> None:
    for stack in (synth, alternate):
        for kind, pinned in PINNED.items():
            assert set(stack.of_type(kind)) == pinned, kind


def test_the_capacity_group_keeps_its_logical_id() -> None:
    from tests.infrastructure.conftest import synthesise

    capped = synthesise({"maxIndexingOcu": 2, "maxSearchOcu": 2})
    assert set(capped.of_type("AWS::OpenSearchServerless::CollectionGroup")) == {CAPACITY_GROUP}
    assert (
        set(capped.of_type("AWS::OpenSearchServerless::Collection"))
        == PINNED["AWS::OpenSearchServerless::Collection"]
    )


def test_the_collection_is_retained_like_the_tables_unless_the_stack_is_disposable(
    synth: Synth, alternate: Synth
) -> None:
    (collection,) = synth.of_type("AWS::OpenSearchServerless::Collection").values()
    assert (collection["DeletionPolicy"], collection["UpdateReplacePolicy"]) == (
        "Retain",
        "Retain",
    )
    (disposable,) = alternate.of_type("AWS::OpenSearchServerless::Collection").values()
    assert disposable["DeletionPolicy"] == "Delete"  # removalPolicy=destroy
