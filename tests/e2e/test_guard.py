"""Each function's calls are checked against its own role: boto3, Bedrock and OpenSearch."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from tests.e2e.authorization import Permission
from tests.e2e.guard import (
    AccessLog,
    Authorizer,
    FunctionPrincipal,
    GuardedBedrock,
    GuardedOpenSearch,
    data_access_allows,
    guarded_session,
)
from tests.e2e.template import CollectionSpec, StackModel, StackTemplate
from tests.fakes import FakeBedrockRuntime, FakeOpenSearch

REGION = "us-east-1"


def principal_of(model: StackModel, handler_dir: str, log: AccessLog) -> FunctionPrincipal:
    function = model.function_for(handler_dir)
    return FunctionPrincipal(function.logical_id, function.name, function.role,
                             Authorizer(model), log, handler_dir)


@pytest.fixture
def model(stack_template: StackTemplate) -> StackModel:
    return StackModel(stack_template)


@pytest.fixture
def documents(model: StackModel) -> Any:
    """The documents bucket on moto, with one object."""
    with mock_aws():
        bucket = model.function_for("delete").environment["DOCUMENTS_BUCKET"]
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="incoming/a.pdf", Body=b"%PDF")
        yield bucket


def test_a_denied_call_raises_inside_the_call_and_is_logged(model: StackModel,
                                                            documents: str) -> None:
    log = AccessLog()
    section = principal_of(model, "section", log)  # artifacts only, not the documents bucket
    s3 = guarded_session(section, REGION).client("s3")
    with pytest.raises(ClientError) as raised:
        s3.get_object(Bucket=documents, Key="incoming/a.pdf")
    assert raised.value.response["Error"]["Code"] == "AccessDenied"
    assert "s3:GetObject" in str(raised.value) and section.role.name in str(raised.value)
    (denial,) = log.take_denials()
    assert (denial.principal, denial.action, denial.resource) == (
        f"{section.logical_id} (functions/section)", "s3:GetObject",
        f"arn:aws:s3:::{documents}/incoming/a.pdf")
    assert log.calls == []


def test_an_allowed_call_is_recorded_with_its_permissions(model: StackModel,
                                                          documents: str) -> None:
    log = AccessLog()
    register = principal_of(model, "register", log)
    body = guarded_session(register, REGION).client("s3").get_object(
        Bucket=documents, Key="incoming/a.pdf")["Body"].read()
    assert body == b"%PDF" and log.denials == []
    (call,) = log.calls_of(register.label)
    assert (call.service, call.operation) == ("s3", "GetObject")
    assert {k: call.parameters[k] for k in ("Bucket", "Key")} == {
        "Bucket": documents, "Key": "incoming/a.pdf"}
    assert [str(p) for p in call.permissions] == [
        f"s3:GetObject on arn:aws:s3:::{documents}/incoming/a.pdf"]


def test_a_missing_key_is_404_only_with_list_bucket(stack_template: StackTemplate,
                                                    documents: str) -> None:
    """S3 answers 403 to a reader without s3:ListBucket, so "gone" cannot be told apart."""
    log = AccessLog()
    delete = principal_of(StackModel(stack_template), "delete", log)
    with pytest.raises(ClientError) as raised:
        guarded_session(delete, REGION).client("s3").head_object(Bucket=documents, Key="gone")
    assert raised.value.response["Error"]["Code"] == "404"
    assert log.denials == []

    without = StackModel(stack_template.revoke(delete.role.logical_id, "s3:List*"))
    delete = principal_of(without, "delete", log)
    with pytest.raises(ClientError) as raised:
        guarded_session(delete, REGION).client("s3").head_object(Bucket=documents, Key="gone")
    assert raised.value.response["Error"]["Code"] == "403"
    assert [(d.action, d.resource) for d in log.take_denials()] == [
        ("s3:ListBucket", f"arn:aws:s3:::{documents}")]


def test_bedrock_is_checked_on_the_model_arn(model: StackModel) -> None:
    log = AccessLog()
    fake = FakeBedrockRuntime(None, "google.gemma-3-27b-it", "amazon.titan-embed-text-v2:0")
    body = '{"inputText": "x", "dimensions": 1024, "normalize": true}'
    commit = GuardedBedrock(fake, principal_of(model, "index_chunks", log))
    assert commit.invoke_model(modelId="amazon.titan-embed-text-v2:0", body=body)
    convert = GuardedBedrock(fake, principal_of(model, "convert", log))
    with pytest.raises(ClientError, match="AccessDeniedException"):
        convert.invoke_model(modelId="amazon.titan-embed-text-v2:0", body=body)
    assert [(d.action, d.resource) for d in log.take_denials()] == [(
        "bedrock:InvokeModel",
        f"arn:aws:bedrock:{REGION}::foundation-model/amazon.titan-embed-text-v2:0")]
    assert len(fake.embed_requests) == 1  # the denied request never reached the model


def test_opensearch_needs_iam_and_the_data_access_policy(model: StackModel) -> None:
    from opensearchpy.exceptions import AuthorizationException, ConnectionError

    log = AccessLog()
    (collection,) = model.collections.values()
    fake = FakeOpenSearch()

    def client(handler_dir: str, endpoint: str = collection.endpoint) -> GuardedOpenSearch:
        return GuardedOpenSearch(fake, principal_of(model, handler_dir, log), endpoint,
                                 model.collections)

    query = {"query": {"term": {"document_id": "d"}}}
    assert client("finalise").search(index="drac-chunks", body=query)["hits"]["hits"] == []
    with pytest.raises(AuthorizationException):
        client("parse").search(index="drac-chunks", body=query)  # no aoss:APIAccessAll
    assert [(d.action, d.resource) for d in log.take_denials()] == [
        ("aoss:APIAccessAll", collection.arn)]
    with pytest.raises(AuthorizationException):  # not an index the policy names
        client("finalise").search(index="other-index", body=query)
    assert [(d.action, d.resource) for d in log.take_denials()] == [
        ("aoss:ReadDocument", f"index/{collection.name}/other-index")]
    with pytest.raises(ConnectionError):
        client("finalise", "https://elsewhere.aoss.amazonaws.com").search(
            index="drac-chunks", body=query)


def test_data_access_rules_name_principal_permission_and_resource() -> None:
    collection = CollectionSpec("C", "drac", "arn:c", "https://c", (
        (("arn:aws:iam::1:role/reader",), (
            {"ResourceType": "index", "Resource": ["index/drac/*"],
             "Permission": ["aoss:ReadDocument", "aoss:Describe*"]},)),))
    reader = "arn:aws:iam::1:role/reader"
    assert data_access_allows(collection, reader, "aoss:ReadDocument", "index/drac/chunks")
    assert data_access_allows(collection, reader, "aoss:DescribeIndex", "index/drac/chunks")
    assert not data_access_allows(collection, reader, "aoss:WriteDocument", "index/drac/chunks")
    assert not data_access_allows(collection, reader, "aoss:ReadDocument", "index/other/x")
    assert not data_access_allows(collection, "arn:aws:iam::1:role/other", "aoss:ReadDocument",
                                  "index/drac/chunks")


def test_eventbridge_may_fill_each_queue_only_from_its_own_rule(model: StackModel) -> None:
    authorizer = Authorizer(model)
    starter, delete = model.function_for("starter"), model.function_for("delete")
    (ingest,) = [s.queue for s in model.event_sources if s.function == starter]
    (deletes,) = [s.queue for s in model.event_sources if s.function == delete]
    rules = {model.resolver.name(r): model.resolver.get_att(r, "Arn")
             for r in model.stack.of_type("AWS::Events::Rule")}
    created = next(arn for name, arn in rules.items() if "ObjectCreated" in name)
    deleted = next(arn for name, arn in rules.items() if "ObjectDeleted" in name)

    def may_send(queue: str, rule: str) -> bool:
        permission = Permission("sqs:SendMessage", queue, {"aws:SourceArn": (rule,)})
        return authorizer.evaluate("events.amazonaws.com", [], permission).allowed

    assert may_send(ingest.arn, created) and may_send(deletes.arn, deleted)
    assert not may_send(ingest.arn, deleted) and not may_send(deletes.arn, created)


def test_dynamodb_item_sizes_are_counted_as_dynamodb_does() -> None:
    from decimal import Decimal

    from tests.e2e.guard import dynamodb_item_size

    item = {"pk": "abc", "n": Decimal(5), "flag": True}
    assert dynamodb_item_size(item) == 2 + 3 + 1 + 21 + 4 + 1
    wire = {"pk": {"S": "abc"}, "m": {"M": {"k": {"S": "v"}}}}
    assert dynamodb_item_size(wire) == 2 + 3 + 1 + (3 + 1 + 1)  # a map: 3 bytes + members
    assert dynamodb_item_size({"data": "é" * 100}) == 4 + 200
