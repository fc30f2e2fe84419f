"""EventBridge rules and patterns; the OpenSearch Serverless collection and its policies."""

from __future__ import annotations

import json
import re

import pytest

from drac.aws import opensearch
from tests.infrastructure.conftest import Synth
from tests.infrastructure.helpers import as_list, flatten, role_of_policy, statements


def rule(synth: Synth, attr: str) -> dict:
    construct = getattr(synth.stack.pipeline.intake, attr)
    return synth.resources[synth.logical_id(construct)]["Properties"]


def test_upload_and_delete_rules_match_incoming_of_the_documents_bucket(synth: Synth) -> None:
    documents = synth.logical_id(synth.stack.storage.documents)
    for attr, detail_type, queue in (
        ("created_rule", "Object Created", "ingest_queue"),
        ("deleted_rule", "Object Deleted", "delete_queue"),
    ):
        props = rule(synth, attr)
        assert props["EventPattern"] == {
            "source": ["aws.s3"],
            "detail-type": [detail_type],
            "detail": {
                "bucket": {"name": [{"Ref": documents}]},
                "object": {"key": [{"prefix": "incoming/"}]},
            },
        }
        assert "EventBusName" not in props, "S3 events arrive on the default bus"
        (target,) = props["Targets"]
        queue_id = synth.logical_id(getattr(synth.stack.pipeline.intake, queue))
        assert target["Arn"] == {"Fn::GetAtt": [queue_id, "Arn"]}


def test_tag_changes_and_deleted_sidecars_reach_the_starter(synth: Synth) -> None:
    """Metadata that changes after its document: S3's tag events (PutObjectTagging,
    DeleteObjectTagging) under incoming/, and deleted sidecars (any case), to the ingest
    queue; a new or replaced sidecar is an Object Created event of the created rule."""
    documents = {"Ref": synth.logical_id(synth.stack.storage.documents)}
    ingest_queue = synth.logical_id(synth.stack.pipeline.intake.ingest_queue)
    tags = rule(synth, "tags_rule")
    assert tags["EventPattern"] == {
        "source": ["aws.s3"],
        "detail-type": ["Object Tags Added", "Object Tags Deleted"],
        "detail": {"bucket": {"name": [documents]}, "object": {"key": [{"prefix": "incoming/"}]}},
    }
    sidecars = rule(synth, "sidecar_deleted_rule")
    assert sidecars["EventPattern"] == {
        "source": ["aws.s3"],
        "detail-type": ["Object Deleted"],
        "detail": {
            "bucket": {"name": [documents]},
            "object": {"key": [{"suffix": {"equals-ignore-case": ".metadata.json"}}]},
        },
    }
    for props in (tags, sidecars):
        assert "EventBusName" not in props, "S3 events arrive on the default bus"
        (target,) = props["Targets"]
        assert target["Arn"] == {"Fn::GetAtt": [ingest_queue, "Arn"]}


def test_deletion_pattern_accepts_delete_marker_events(synth: Synth) -> None:
    """In a versioned bucket a DELETE creates a marker: the event must still match."""
    pattern = rule(synth, "deleted_rule")["EventPattern"]
    assert "deletion-type" not in json.dumps(pattern)


def test_replan_rule_on_the_project_bus_starts_the_replan_machine(synth: Synth) -> None:
    pipeline = synth.stack.pipeline
    props = rule(synth, "replan_rule")
    assert props["EventBusName"] == {"Ref": synth.logical_id(pipeline.bus)}
    # without tenants mapped only admins may re-plan (and cdk.json maps none)
    assert props["EventPattern"] == {"source": ["drac.admin"], "detail-type": ["Replan Requested"]}
    (target,) = props["Targets"]
    assert target["Arn"] == {"Ref": synth.logical_id(pipeline.replan_machine)}
    assert target["InputPath"] == "$"  # the source travels: it names the request's scope
    assert target["DeadLetterConfig"]["Arn"] == {
        "Fn::GetAtt": [synth.logical_id(pipeline.intake.replan_dlq), "Arn"]
    }


def test_queues_feed_starter_and_delete_with_partial_batch_failures(synth: Synth) -> None:
    stages, intake = synth.stack.pipeline.stages, synth.stack.pipeline.intake
    mappings = {
        m["Properties"]["FunctionName"]["Ref"]: m["Properties"]
        for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()
    }
    for fn, queue in ((stages.starter, intake.ingest_queue), (stages.delete, intake.delete_queue)):
        props = mappings[synth.logical_id(fn)]
        assert props["EventSourceArn"] == {"Fn::GetAtt": [synth.logical_id(queue), "Arn"]}
        assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        assert props["ScalingConfig"]["MaximumConcurrency"] == 2
    for resource in synth.of_type("AWS::SQS::Queue").values():
        assert resource["Properties"].get("SqsManagedSseEnabled") is True
    functions = synth.of_type("AWS::Lambda::Function")
    for fn, queue in ((stages.starter, intake.ingest_queue), (stages.delete, intake.delete_queue)):
        # SQS requires a visibility timeout of at least the consumer's timeout
        timeout = functions[synth.logical_id(fn)]["Properties"]["Timeout"]
        visibility = synth.resources[synth.logical_id(queue)]["Properties"]["VisibilityTimeout"]
        assert visibility >= timeout
    # waiting uploads are sent again (delayed copies) instead of burning their receives, so
    # a few receives count failures only; the starter may send to its own queue
    ingest = synth.resources[synth.logical_id(intake.ingest_queue)]["Properties"]
    assert ingest["RedrivePolicy"]["maxReceiveCount"] == 5
    role = synth.logical_id(stages.starter.role)
    sends = [
        statement
        for policy in synth.of_type("AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if "sqs:SendMessage" in statement["Action"]
    ]
    assert [s["Resource"] for s in sends] == [
        {"Fn::GetAtt": [synth.logical_id(intake.ingest_queue), "Arn"]}
    ]
    assert ingest["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_vector_collection_with_encryption_and_network_policies(synth: Synth) -> None:
    (collection,) = synth.of_type("AWS::OpenSearchServerless::Collection").values()
    assert collection["Properties"]["Type"] == "VECTORSEARCH"
    assert collection["Properties"]["Name"] == "drac"  # derived from the stack name
    policies = {
        p["Properties"]["Type"]: p
        for p in synth.of_type("AWS::OpenSearchServerless::SecurityPolicy").values()
    }
    assert set(policies) == {"encryption", "network"}
    encryption = json.loads(policies["encryption"]["Properties"]["Policy"])
    assert encryption["Rules"] == [{"ResourceType": "collection", "Resource": ["collection/drac"]}]
    network = json.loads(policies["network"]["Properties"]["Policy"])
    assert network[0]["Rules"][0]["Resource"] == ["collection/drac"]
    # the collection is created only after its policies exist
    depends = set(as_list(collection.get("DependsOn", [])))
    assert len(depends & set(synth.of_type("AWS::OpenSearchServerless::SecurityPolicy"))) == 2


def role_id(synth: Synth, fn) -> str:
    return synth.stack.resolve(synth.stack.get_logical_id(fn.role.node.default_child))


def index_roles(synth: Synth) -> set[str]:
    """Roles that write the index: exactly the stages that index, activate, clean up."""
    stages, search = synth.stack.pipeline.stages, synth.stack.search
    return {
        role_id(synth, fn)
        for fn in (
            stages.index_chunks,
            stages.activate,
            stages.abandon,
            stages.finalise,
            stages.delete,
            search.index_function,
        )
    }


def test_data_access_policy_names_exactly_the_index_roles(synth: Synth) -> None:
    (policy,) = synth.of_type("AWS::OpenSearchServerless::AccessPolicy").values()
    props = policy["Properties"]
    assert props["Type"] == "data"
    document = json.loads(flatten(props["Policy"]))  # role ARNs become "<LogicalId.Arn>"
    entry, readers = document  # the writers, then the readers (the retrieval API)
    principals = {p.strip("<>").removesuffix(".Arn") for p in entry["Principal"]}
    assert principals == index_roles(synth)
    retrieve = role_id(synth, synth.stack.pipeline.stages.retrieve)
    assert [p.strip("<>").removesuffix(".Arn") for p in readers["Principal"]] == [retrieve]
    assert "aoss:WriteDocument" not in json.dumps(readers)
    rules = {r["ResourceType"]: r for r in entry["Rules"]}
    assert rules["index"]["Resource"] == ["index/drac/drac-chunks"]
    assert "aoss:DeleteIndex" not in rules["index"]["Permission"]
    assert "aoss:*" not in json.dumps(entry)


def test_only_index_roles_may_call_the_collection(synth: Synth) -> None:
    (collection_id,) = synth.of_type("AWS::OpenSearchServerless::Collection")
    granted = set()
    for policy_id, statement in statements(synth.resources):
        if any(a.startswith("aoss:") for a in as_list(statement["Action"])):
            assert as_list(statement["Action"]) == ["aoss:APIAccessAll"]
            assert as_list(statement["Resource"]) == [{"Fn::GetAtt": [collection_id, "Arn"]}]
            granted.update(role_of_policy(synth.resources[policy_id]))
    assert granted == index_roles(synth) | {role_id(synth, synth.stack.pipeline.stages.retrieve)}


def test_index_is_created_by_a_custom_resource(synth: Synth) -> None:
    (index,) = synth.of_type("Custom::DracChunkIndex").values()
    props = index["Properties"]
    assert props["IndexName"] == "drac-chunks" and props["Dimension"] == "1024"
    (collection_id,) = synth.of_type("AWS::OpenSearchServerless::Collection")
    assert props["Endpoint"] == {"Fn::GetAtt": [collection_id, "CollectionEndpoint"]}
    (access_id,) = synth.of_type("AWS::OpenSearchServerless::AccessPolicy")
    assert access_id in as_list(index.get("DependsOn", []))


def test_a_changed_index_mapping_updates_the_index_resource(
    synth: Synth, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CloudFormation sends Update (which adds new fields to the live index) only when a
    # property changes, so the resource carries the mapping's digest
    (index,) = synth.of_type("Custom::DracChunkIndex").values()
    assert index["Properties"]["Mapping"] == opensearch.mapping_digest(1024)
    extended = {**opensearch.META_MAPPING, "properties": {
        **opensearch.META_MAPPING["properties"], "text": {"type": "keyword"}}}  # fmt: skip
    monkeypatch.setattr(opensearch, "META_MAPPING", extended)
    assert opensearch.mapping_digest(1024) != index["Properties"]["Mapping"]
    assert opensearch.mapping_digest(768) != opensearch.mapping_digest(1024)


def test_reader_principals_get_a_read_only_rule(alternate: Synth) -> None:
    """`readerPrincipals` adds named roles that may query the index, and nothing more."""
    (policy,) = alternate.of_type("AWS::OpenSearchServerless::AccessPolicy").values()
    writers, readers = json.loads(flatten(policy["Properties"]["Policy"]))
    assert "arn:aws:iam::123456789012:role/analytics" in readers["Principal"]
    assert "arn:aws:iam::123456789012:role/analytics" not in writers["Principal"]
    rules = {r["ResourceType"]: r["Permission"] for r in readers["Rules"]}
    assert rules == {
        "index": ["aoss:DescribeIndex", "aoss:ReadDocument"],
        "collection": ["aoss:DescribeCollectionItems"],
    }


NAME_PROPERTIES = (
    "Name",
    "BucketName",
    "TableName",
    "StateMachineName",
    "LogGroupName",
    "EventBusName",
    "FunctionName",
    "QueueName",
    "RoleName",
    "CollectionName",
)


def physical_names(synth: Synth) -> set[tuple[str, str]]:
    """(resource type, name) of every resource given a name in the template."""
    names = set()
    for resource in synth.resources.values():
        for prop in NAME_PROPERTIES:
            value = resource.get("Properties", {}).get(prop)
            if isinstance(value, str) or (isinstance(value, dict) and "Fn::Join" in value):
                names.add((resource["Type"], flatten(value)))
    return names


def test_two_stacks_in_one_account_share_no_physical_name() -> None:
    """Named resources derive from the stack name, and follow the services' naming rules."""
    from tests.infrastructure.conftest import synthesise

    first = synthesise({"stackName": "DracDocsA"}, account="123456789012", region="eu-west-1")
    second = synthesise({"stackName": "DracDocsB"}, account="123456789012", region="eu-west-1")
    assert len(physical_names(first)) >= 10
    assert physical_names(first) & physical_names(second) == set()
    for synth in (first, second):
        for kind in (
            "AWS::OpenSearchServerless::Collection",
            "AWS::OpenSearchServerless::SecurityPolicy",
            "AWS::OpenSearchServerless::AccessPolicy",
        ):
            for resource in synth.of_type(kind).values():
                name = resource["Properties"]["Name"]
                assert re.fullmatch(r"[a-z][a-z0-9-]{2,31}", name), name


ACME, BETA = (
    "arn:aws:iam::123456789012:role/acme-app",
    "arn:aws:iam::123456789012:role/apps/beta-app",
)
OPERATOR = "arn:aws:iam::123456789012:role/operator"


def test_the_bus_lets_only_mapped_principals_send_each_replan_source(
    synth: Synth, alternate: Synth
) -> None:
    props = rule(alternate, "replan_rule")
    assert props["EventPattern"]["source"] == ["drac.admin", "drac.tenant.acme", "drac.tenant.beta"]
    denies = {}
    for policy in alternate.of_type("AWS::Events::EventBusPolicy").values():
        statement = policy["Properties"]["Statement"]
        assert (statement["Effect"], statement["Principal"], statement["Action"]) == (
            "Deny",
            {"AWS": "*"},
            "events:PutEvents",
        )
        source = statement["Condition"]["StringEquals"]["events:source"]
        denies[source] = statement["Condition"].get("StringNotEquals", {}).get("aws:PrincipalArn")
    assert denies == {
        "drac.admin": [OPERATOR],
        "drac.tenant.acme": [ACME],
        "drac.tenant.beta": [BETA],
    }
    # no admin configured: nobody may send drac.admin
    (policy,) = synth.of_type("AWS::Events::EventBusPolicy").values()
    assert policy["Properties"]["Statement"]["Condition"] == {
        "StringEquals": {"events:source": "drac.admin"}
    }


def test_mapped_callers_may_invoke_the_function_url_with_both_actions(
    synth: Synth, alternate: Synth
) -> None:
    """Function URLs created since October 2025 need lambda:InvokeFunctionUrl and
    lambda:InvokeFunction (AWS Lambda Developer Guide, "Control access to function URLs")."""
    retrieve = alternate.logical_id(alternate.stack.pipeline.stages.retrieve)
    granted: dict[str, set[tuple[str, str]]] = {}
    for permission in alternate.of_type("AWS::Lambda::Permission").values():
        props = permission["Properties"]
        if props["FunctionName"] != {"Fn::GetAtt": [retrieve, "Arn"]}:
            continue
        condition = (
            "FunctionUrlAuthType=" + props["FunctionUrlAuthType"]
            if "FunctionUrlAuthType" in props
            else f"InvokedViaFunctionUrl={props.get('InvokedViaFunctionUrl')}"
        )
        granted.setdefault(props["Principal"], set()).add((props["Action"], condition))
    both = {
        ("lambda:InvokeFunctionUrl", "FunctionUrlAuthType=AWS_IAM"),
        ("lambda:InvokeFunction", "InvokedViaFunctionUrl=True"),
    }
    assert granted == {ACME: both, BETA: both, OPERATOR: both}
    assert not [
        p
        for p in synth.of_type("AWS::Lambda::Permission").values()
        if "FunctionUrlAuthType" in p["Properties"]
    ]


def test_queue_visibility_is_six_times_its_consumers_timeout(synth: Synth) -> None:
    """Lambda's SQS guidance: a visibility timeout of at least six times the function's, so
    a batch still being processed is not handed to another poller."""
    stages, intake = synth.stack.pipeline.stages, synth.stack.pipeline.intake
    for fn, queue in ((stages.starter, intake.ingest_queue), (stages.delete, intake.delete_queue)):
        timeout = synth.resources[synth.logical_id(fn)]["Properties"]["Timeout"]
        visibility = synth.resources[synth.logical_id(queue)]["Properties"]["VisibilityTimeout"]
        assert visibility >= 6 * timeout, fn.node.id


def test_capacity_options_put_the_collection_in_a_group_that_caps_its_ocus(
    synth: Synth, alternate: Synth
) -> None:
    assert not synth.of_type("AWS::OpenSearchServerless::CollectionGroup")  # no cap by default
    (collection,) = synth.of_type("AWS::OpenSearchServerless::Collection").values()
    assert "CollectionGroupName" not in collection["Properties"]
    ((group_id, group),) = alternate.of_type("AWS::OpenSearchServerless::CollectionGroup").items()
    props = group["Properties"]
    assert props["CapacityLimits"] == {"MaxIndexingCapacityInOcu": 4, "MaxSearchCapacityInOcu": 6}
    (collection,) = alternate.of_type("AWS::OpenSearchServerless::Collection").values()
    assert collection["Properties"]["CollectionGroupName"] == props["Name"]
    assert props["StandbyReplicas"] == collection["Properties"]["StandbyReplicas"]
    assert group_id in collection["DependsOn"]
