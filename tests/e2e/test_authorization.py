"""The IAM actions and ARNs each API call needs (Service Authorization Reference)."""

from __future__ import annotations

import pytest

from tests.e2e.authorization import (
    Caller,
    UnmappedCall,
    bedrock_model_arns,
    permissions_for,
    sqs_queue_arn,
)

CALLER = Caller("us-east-1", "123456789012")
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/Docs"
MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:Drac-ingest"
EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:Drac-ingest:doc1"


def needed(service: str, operation: str, **params: object) -> list[tuple[str, str]]:
    return [(p.action, p.resource) for p in permissions_for(service, operation, params, CALLER)]


@pytest.mark.parametrize(("operation", "params", "expected"), [
    ("GetObject", {"Bucket": "b", "Key": "incoming/a b.pdf"},
     [("s3:GetObject", "arn:aws:s3:::b/incoming/a b.pdf")]),  # the key as stored
    ("GetObject", {"Bucket": "b", "Key": "k", "VersionId": "v1"},
     [("s3:GetObjectVersion", "arn:aws:s3:::b/k")]),
    ("HeadObject", {"Bucket": "b", "Key": "k"}, [("s3:GetObject", "arn:aws:s3:::b/k")]),
    ("PutObject", {"Bucket": "b", "Key": "k", "Body": b""}, [("s3:PutObject", "arn:aws:s3:::b/k")]),
    ("PutObject", {"Bucket": "b", "Key": "k", "Tagging": "a=1"},
     [("s3:PutObject", "arn:aws:s3:::b/k"), ("s3:PutObjectTagging", "arn:aws:s3:::b/k")]),
    ("CreateMultipartUpload", {"Bucket": "b", "Key": "k"}, [("s3:PutObject", "arn:aws:s3:::b/k")]),
    ("UploadPart", {"Bucket": "b", "Key": "k", "PartNumber": 1, "UploadId": "u"},
     [("s3:PutObject", "arn:aws:s3:::b/k")]),
    ("CompleteMultipartUpload", {"Bucket": "b", "Key": "k", "UploadId": "u"},
     [("s3:PutObject", "arn:aws:s3:::b/k")]),
    ("AbortMultipartUpload", {"Bucket": "b", "Key": "k", "UploadId": "u"},
     [("s3:AbortMultipartUpload", "arn:aws:s3:::b/k")]),
    ("DeleteObject", {"Bucket": "b", "Key": "k"}, [("s3:DeleteObject", "arn:aws:s3:::b/k")]),
    ("DeleteObject", {"Bucket": "b", "Key": "k", "VersionId": "v"},
     [("s3:DeleteObjectVersion", "arn:aws:s3:::b/k")]),
    ("DeleteObjects", {"Bucket": "b", "Delete": {"Objects": [{"Key": "x"},
                                                             {"Key": "y", "VersionId": "v"}]}},
     [("s3:DeleteObject", "arn:aws:s3:::b/x"), ("s3:DeleteObjectVersion", "arn:aws:s3:::b/y")]),
    ("CopyObject", {"Bucket": "b", "Key": "to", "CopySource": "src/a b?versionId=v"},
     [("s3:PutObject", "arn:aws:s3:::b/to"), ("s3:GetObjectVersion", "arn:aws:s3:::src/a b")]),
    ("ListObjectsV2", {"Bucket": "b", "Prefix": "runs/"}, [("s3:ListBucket", "arn:aws:s3:::b")]),
    ("ListObjectVersions", {"Bucket": "b"}, [("s3:ListBucketVersions", "arn:aws:s3:::b")]),
])
def test_s3(operation: str, params: dict, expected: list) -> None:
    assert needed("s3", operation, **params) == expected


def test_list_bucket_carries_the_prefix_condition_key() -> None:
    (permission,) = permissions_for("s3", "ListObjectsV2", {"Bucket": "b", "Prefix": "runs/"},
                                    CALLER)
    assert permission.context == {"s3:prefix": ("runs/",)}


@pytest.mark.parametrize(("operation", "params", "expected"), [
    ("GetItem", {"TableName": "Docs", "Key": {}}, [("dynamodb:GetItem", TABLE)]),
    ("PutItem", {"TableName": TABLE, "Item": {}}, [("dynamodb:PutItem", TABLE)]),  # by ARN
    ("Query", {"TableName": "Docs"}, [("dynamodb:Query", TABLE)]),
    ("Query", {"TableName": "Docs", "IndexName": "by-source"},
     [("dynamodb:Query", f"{TABLE}/index/by-source")]),
    ("Scan", {"TableName": "Docs", "IndexName": "i"}, [("dynamodb:Scan", f"{TABLE}/index/i")]),
    ("BatchWriteItem", {"RequestItems": {"Docs": [], "Other": []}},
     [("dynamodb:BatchWriteItem", TABLE),
      ("dynamodb:BatchWriteItem", TABLE.replace("Docs", "Other"))]),
    ("BatchGetItem", {"RequestItems": {"Docs": {}}}, [("dynamodb:BatchGetItem", TABLE)]),
    ("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": "Docs"}}, {"Update": {"TableName": "Docs"}},
        {"Delete": {"TableName": "Docs"}}, {"ConditionCheck": {"TableName": "Docs"}}]},
     [("dynamodb:PutItem", TABLE), ("dynamodb:UpdateItem", TABLE),
      ("dynamodb:DeleteItem", TABLE), ("dynamodb:ConditionCheckItem", TABLE)]),
])
def test_dynamodb(operation: str, params: dict, expected: list) -> None:
    assert needed("dynamodb", operation, **params) == expected


def test_step_functions_machines_and_executions() -> None:
    assert needed("stepfunctions", "StartExecution", stateMachineArn=MACHINE, name="d") == [
        ("states:StartExecution", MACHINE)]
    assert needed("stepfunctions", "ListExecutions", stateMachineArn=MACHINE) == [
        ("states:ListExecutions", MACHINE)]
    assert needed("stepfunctions", "DescribeExecution", executionArn=EXECUTION) == [
        ("states:DescribeExecution", EXECUTION)]
    assert needed("stepfunctions", "StopExecution", executionArn=EXECUTION) == [
        ("states:StopExecution", EXECUTION)]


def test_sqs_queue_arn_from_url() -> None:
    url = "https://sqs.eu-west-1.amazonaws.com/111122223333/Drac-Queue"
    assert sqs_queue_arn(url, CALLER) == "arn:aws:sqs:eu-west-1:111122223333:Drac-Queue"
    assert needed("sqs", "DeleteMessageBatch", QueueUrl=url, Entries=[]) == [
        ("sqs:DeleteMessage", "arn:aws:sqs:eu-west-1:111122223333:Drac-Queue")]
    assert needed("sqs", "GetQueueUrl", QueueName="q") == [
        ("sqs:GetQueueUrl", "arn:aws:sqs:us-east-1:123456789012:q")]


def test_put_events_needs_every_entry_bus() -> None:
    bus = "arn:aws:events:us-east-1:123456789012:event-bus/"
    assert needed("events", "PutEvents", Entries=[
        {"EventBusName": "Drac-bus", "Source": "drac.api", "DetailType": "Replan Requested"},
        {"Source": "x", "DetailType": "y"},
        {"EventBusName": f"{bus}other"}]) == [
        ("events:PutEvents", f"{bus}Drac-bus"), ("events:PutEvents", f"{bus}default"),
        ("events:PutEvents", f"{bus}other")]


def test_lambda_invoke_by_name_or_arn() -> None:
    arn = "arn:aws:lambda:us-east-1:123456789012:function:Drac-Fn"
    assert needed("lambda", "Invoke", FunctionName="Drac-Fn") == [("lambda:InvokeFunction", arn)]
    assert needed("lambda", "Invoke", FunctionName=arn) == [("lambda:InvokeFunction", arn)]


@pytest.mark.parametrize(("model_id", "arns"), [
    ("google.gemma-3-27b-it",
     ["arn:aws:bedrock:us-east-1::foundation-model/google.gemma-3-27b-it"]),
    ("us.google.gemma-3-27b-it",
     ["arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.google.gemma-3-27b-it",
      "arn:aws:bedrock:us-east-1::foundation-model/google.gemma-3-27b-it"]),
    ("arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0",
     ["arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0"]),
])
def test_bedrock_models(model_id: str, arns: list[str]) -> None:
    assert bedrock_model_arns(model_id, CALLER) == arns
    assert [a for a, _ in needed("bedrock-runtime", "Converse", modelId=model_id)] == [
        "bedrock:InvokeModel"] * len(arns)


@pytest.mark.parametrize(("service", "operation"), [
    ("s3", "PutBucketPolicy"), ("dynamodb", "DeleteTable"), ("stepfunctions", "DeleteStateMachine"),
    ("sqs", "DeleteQueue"), ("events", "PutRule"), ("kms", "Decrypt"),
    ("bedrock-runtime", "ApplyGuardrail"),
])
def test_an_unknown_call_is_never_silently_allowed(service: str, operation: str) -> None:
    with pytest.raises(UnmappedCall):
        permissions_for(service, operation, {}, CALLER)
