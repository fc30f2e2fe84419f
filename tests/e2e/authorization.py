"""Which IAM actions on which resources an AWS API call needs.

Follows the Service Authorization Reference ("Actions, resources, and condition keys for ...")
and the services' API references for the operations the pipeline makes. A call this module does
not know raises `UnmappedCall`, so a new call is never silently allowed: add its mapping here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from infra.config import GEO_PREFIXES


class UnmappedCall(LookupError):
    """An API call whose required permissions the harness does not know."""


@dataclass(frozen=True)
class Permission:
    """One IAM action on one resource, with the request's condition context."""

    action: str
    resource: str
    context: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.action} on {self.resource}"


@dataclass(frozen=True)
class Caller:
    """Where a call is made: the partition, region and account of the ARNs it builds."""

    region: str
    account: str
    partition: str = "aws"

    def arn(self, service: str, resource: str, *, region: bool = True,
            account: bool = True) -> str:
        """An ARN of this caller's partition (and region and account unless told not to)."""
        return (f"arn:{self.partition}:{service}:{self.region if region else ''}:"
                f"{self.account if account else ''}:{resource}")


Mapper = Callable[[str, Mapping[str, Any], Caller], list[Permission]]


# --- S3 ---------------------------------------------------------------------------------------

S3_OBJECT_ACTIONS = {
    # operation: (action, action when a VersionId is given)
    "GetObject": ("s3:GetObject", "s3:GetObjectVersion"),
    "HeadObject": ("s3:GetObject", "s3:GetObjectVersion"),
    "GetObjectTagging": ("s3:GetObjectTagging", "s3:GetObjectVersionTagging"),
    "GetObjectAcl": ("s3:GetObjectAcl", "s3:GetObjectVersionAcl"),
    "DeleteObject": ("s3:DeleteObject", "s3:DeleteObjectVersion"),
    "PutObjectTagging": ("s3:PutObjectTagging", "s3:PutObjectVersionTagging"),
    "DeleteObjectTagging": ("s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging"),
    # multipart uploads are authorised as s3:PutObject on the object being written
    "PutObject": ("s3:PutObject", "s3:PutObject"),
    "CreateMultipartUpload": ("s3:PutObject", "s3:PutObject"),
    "UploadPart": ("s3:PutObject", "s3:PutObject"),
    "CompleteMultipartUpload": ("s3:PutObject", "s3:PutObject"),
    "AbortMultipartUpload": ("s3:AbortMultipartUpload", "s3:AbortMultipartUpload"),
    "ListParts": ("s3:ListMultipartUploadParts", "s3:ListMultipartUploadParts"),
}
S3_BUCKET_ACTIONS = {
    "ListObjects": "s3:ListBucket",
    "ListObjectsV2": "s3:ListBucket",
    "HeadBucket": "s3:ListBucket",
    "ListObjectVersions": "s3:ListBucketVersions",
    "ListMultipartUploads": "s3:ListBucketMultipartUploads",
    "GetBucketLocation": "s3:GetBucketLocation",
    "GetBucketVersioning": "s3:GetBucketVersioning",
}


def s3_bucket_arn(bucket: str, caller: Caller) -> str:
    """The ARN of a bucket (S3 ARNs carry neither region nor account)."""
    return f"arn:{caller.partition}:s3:::{bucket}"


def s3_object_arn(bucket: str, key: str, caller: Caller) -> str:
    """The ARN of an object: the key as stored, not URL-encoded."""
    return f"{s3_bucket_arn(bucket, caller)}/{key}"


def _copy_source(source: Any) -> tuple[str, str, str | None]:
    """(bucket, key, version) of CopySource as boto3 takes it: a dict or `bucket/key[?versionId=v]`
    with the key unencoded (botocore encodes it)."""
    if isinstance(source, Mapping):
        return source["Bucket"], source["Key"], source.get("VersionId")
    path, _, query = str(source).lstrip("/").partition("?versionId=")
    bucket, _, key = path.partition("/")
    return bucket, key, query or None


def s3_permissions(operation: str, params: Mapping[str, Any], caller: Caller) -> list[Permission]:
    """S3 object operations need the object ARN, bucket operations the bucket ARN."""
    bucket = params.get("Bucket", "")
    if operation in S3_OBJECT_ACTIONS:
        plain, versioned = S3_OBJECT_ACTIONS[operation]
        action = versioned if params.get("VersionId") else plain
        needed = [Permission(action, s3_object_arn(bucket, params["Key"], caller))]
        if operation == "PutObject" and params.get("Tagging"):
            needed.append(Permission("s3:PutObjectTagging", needed[0].resource))
        if operation == "PutObject" and (params.get("ACL") or any(
                k.startswith("Grant") for k in params)):
            needed.append(Permission("s3:PutObjectAcl", needed[0].resource))
        return needed
    if operation in {"CopyObject", "UploadPartCopy"}:
        source_bucket, source_key, version = _copy_source(params["CopySource"])
        read = "s3:GetObjectVersion" if version else "s3:GetObject"
        return [Permission("s3:PutObject", s3_object_arn(bucket, params["Key"], caller)),
                Permission(read, s3_object_arn(source_bucket, source_key, caller))]
    if operation == "DeleteObjects":
        return [Permission("s3:DeleteObjectVersion" if item.get("VersionId")
                           else "s3:DeleteObject", s3_object_arn(bucket, item["Key"], caller))
                for item in params["Delete"]["Objects"]]
    if operation in S3_BUCKET_ACTIONS:
        context = {f"s3:{name}": (str(params[param]),) for name, param in
                   (("prefix", "Prefix"), ("delimiter", "Delimiter"), ("max-keys", "MaxKeys"))
                   if param in params}
        return [Permission(S3_BUCKET_ACTIONS[operation], s3_bucket_arn(bucket, caller), context)]
    raise UnmappedCall(f"s3:{operation}")


# --- DynamoDB ---------------------------------------------------------------------------------

DYNAMODB_ITEM_ACTIONS = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "DescribeTable",
                         "Query", "Scan"}
TRANSACT_WRITE_ACTIONS = {"Put": "dynamodb:PutItem", "Update": "dynamodb:UpdateItem",
                          "Delete": "dynamodb:DeleteItem",
                          "ConditionCheck": "dynamodb:ConditionCheckItem"}


def dynamodb_table_arn(table: str, caller: Caller) -> str:
    """A table's ARN (the API accepts a table name or its ARN)."""
    return table if table.startswith("arn:") else caller.arn("dynamodb", f"table/{table}")


def dynamodb_permissions(operation: str, params: Mapping[str, Any],
                         caller: Caller) -> list[Permission]:
    """Item and query operations name the table, or `table/<t>/index/<i>` for an index;
    batch and transaction operations need their action on every table they touch."""
    if operation in DYNAMODB_ITEM_ACTIONS:
        arn = dynamodb_table_arn(params["TableName"], caller)
        if params.get("IndexName") and operation in {"Query", "Scan"}:
            arn = f"{arn}/index/{params['IndexName']}"
        return [Permission(f"dynamodb:{operation}", arn)]
    if operation in {"BatchGetItem", "BatchWriteItem"}:
        return [Permission(f"dynamodb:{operation}", dynamodb_table_arn(table, caller))
                for table in params["RequestItems"]]
    if operation == "TransactWriteItems":
        needed = []
        for item in params["TransactItems"]:
            ((kind, body),) = item.items()
            needed.append(Permission(TRANSACT_WRITE_ACTIONS[kind],
                                     dynamodb_table_arn(body["TableName"], caller)))
        return needed
    if operation == "TransactGetItems":
        return [Permission("dynamodb:GetItem",
                           dynamodb_table_arn(item["Get"]["TableName"], caller))
                for item in params["TransactItems"]]
    raise UnmappedCall(f"dynamodb:{operation}")


# --- Step Functions, SQS, EventBridge, Lambda -------------------------------------------------

SFN_MACHINE_ACTIONS = {"StartExecution", "StartSyncExecution", "ListExecutions",
                       "DescribeStateMachine"}
SFN_EXECUTION_ACTIONS = {"DescribeExecution", "StopExecution", "GetExecutionHistory"}


def sfn_permissions(operation: str, params: Mapping[str, Any], caller: Caller) -> list[Permission]:
    """State machine operations name the state machine ARN, execution ones the execution ARN."""
    if operation in SFN_MACHINE_ACTIONS:
        return [Permission(f"states:{operation}", params["stateMachineArn"])]
    if operation in SFN_EXECUTION_ACTIONS:
        return [Permission(f"states:{operation}", params["executionArn"])]
    if operation == "ListStateMachines":
        return [Permission("states:ListStateMachines", "*")]
    raise UnmappedCall(f"states:{operation}")


def sqs_queue_arn(url: str, caller: Caller) -> str:
    """The ARN of the queue a QueueUrl names (https://sqs.<region>.amazonaws.com/<acct>/<q>)."""
    parsed = urlparse(url)
    account, name = parsed.path.strip("/").split("/")[-2:]
    host = parsed.hostname or ""
    region = host.split(".")[1] if host.startswith("sqs.") else caller.region
    return f"arn:{caller.partition}:sqs:{region}:{account}:{name}"


SQS_QUEUE_ACTIONS = {
    "SendMessage": "sqs:SendMessage", "SendMessageBatch": "sqs:SendMessage",
    "ReceiveMessage": "sqs:ReceiveMessage", "DeleteMessage": "sqs:DeleteMessage",
    "DeleteMessageBatch": "sqs:DeleteMessage",
    "ChangeMessageVisibility": "sqs:ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
    "GetQueueAttributes": "sqs:GetQueueAttributes", "SetQueueAttributes": "sqs:SetQueueAttributes",
    "PurgeQueue": "sqs:PurgeQueue",
}


def sqs_permissions(operation: str, params: Mapping[str, Any], caller: Caller) -> list[Permission]:
    """Queue operations name the queue's ARN (derived from its URL)."""
    if operation in SQS_QUEUE_ACTIONS:
        return [Permission(SQS_QUEUE_ACTIONS[operation], sqs_queue_arn(params["QueueUrl"], caller))]
    if operation == "GetQueueUrl":
        account = params.get("QueueOwnerAWSAccountId", caller.account)
        return [Permission("sqs:GetQueueUrl", f"arn:{caller.partition}:sqs:{caller.region}:"
                                              f"{account}:{params['QueueName']}")]
    raise UnmappedCall(f"sqs:{operation}")


def event_bus_arn(name: str | None, caller: Caller) -> str:
    """The ARN of an event bus given by name or ARN (none: the default bus)."""
    if name and name.startswith("arn:"):
        return name
    return caller.arn("events", f"event-bus/{name or 'default'}")


def events_permissions(operation: str, params: Mapping[str, Any],
                       caller: Caller) -> list[Permission]:
    """PutEvents needs events:PutEvents on the bus of every entry."""
    if operation == "PutEvents":
        return [Permission("events:PutEvents", event_bus_arn(entry.get("EventBusName"), caller),
                           {"events:source": (entry.get("Source", ""),),
                            "events:detail-type": (entry.get("DetailType", ""),)})
                for entry in params["Entries"]]
    raise UnmappedCall(f"events:{operation}")


def lambda_function_arn(name: str, caller: Caller) -> str:
    """A function's ARN from its name, partial ARN or ARN (a qualifier is kept)."""
    if name.startswith("arn:"):
        return name
    if ":" in name:  # "<account>:function:<name>" or "<name>:<qualifier>"
        return (f"arn:{caller.partition}:lambda:{caller.region}:{name}" if ":function:" in name
                else caller.arn("lambda", f"function:{name}"))
    return caller.arn("lambda", f"function:{name}")


def lambda_permissions(operation: str, params: Mapping[str, Any],
                       caller: Caller) -> list[Permission]:
    """Invoke needs lambda:InvokeFunction on the function (or the qualified version)."""
    if operation in {"Invoke", "InvokeAsync"}:
        return [Permission("lambda:InvokeFunction",
                           lambda_function_arn(params["FunctionName"], caller))]
    raise UnmappedCall(f"lambda:{operation}")


# --- Bedrock, OpenSearch Serverless, and calls that need no permission ------------------------

def bedrock_model_arns(model_id: str, caller: Caller) -> list[str]:
    """The ARNs bedrock:InvokeModel is checked on for a model id: the foundation model, or an
    inference profile and the foundation model it routes to in this region."""
    if model_id.startswith("arn:"):
        if ":inference-profile/" not in model_id:
            return [model_id]
        profile, model_id = model_id, model_id.split("/", 1)[1]
    elif model_id.startswith(GEO_PREFIXES):
        profile = caller.arn("bedrock", f"inference-profile/{model_id}")
    else:
        return [caller.arn("bedrock", f"foundation-model/{model_id}", account=False)]
    base = model_id.split(".", 1)[1]
    return [profile, caller.arn("bedrock", f"foundation-model/{base}", account=False)]


def bedrock_permissions(operation: str, params: Mapping[str, Any],
                        caller: Caller) -> list[Permission]:
    """Converse and InvokeModel are both authorised as bedrock:InvokeModel (the streaming
    forms as bedrock:InvokeModelWithResponseStream) on the model."""
    actions = {"Converse": "bedrock:InvokeModel", "InvokeModel": "bedrock:InvokeModel",
               "ConverseStream": "bedrock:InvokeModelWithResponseStream",
               "InvokeModelWithResponseStream": "bedrock:InvokeModelWithResponseStream"}
    if operation not in actions:
        raise UnmappedCall(f"bedrock:{operation}")
    return [Permission(actions[operation], arn)
            for arn in bedrock_model_arns(params["modelId"], caller)]


def sts_permissions(operation: str, params: Mapping[str, Any], caller: Caller) -> list[Permission]:
    """STS GetCallerIdentity needs no permission; AssumeRole needs sts:AssumeRole on the role
    (the role's trust policy is checked where the session is made: tests/e2e/sessions.py)."""
    if operation == "GetCallerIdentity":
        return []
    if operation == "AssumeRole":
        return [Permission("sts:AssumeRole", params["RoleArn"])]
    raise UnmappedCall(f"sts:{operation}")


MAPPERS: dict[str, Mapper] = {
    "s3": s3_permissions,
    "dynamodb": dynamodb_permissions,
    "stepfunctions": sfn_permissions,
    "sqs": sqs_permissions,
    "events": events_permissions,
    "lambda": lambda_permissions,
    "bedrock-runtime": bedrock_permissions,
    "sts": sts_permissions,
}


def permissions_for(service: str, operation: str, params: Mapping[str, Any],
                    caller: Caller) -> list[Permission]:
    """The permissions one call needs; `service` is the botocore client name (`s3`,
    `stepfunctions`, ...), `operation` the API name (`GetObject`), `params` its parameters."""
    mapper = MAPPERS.get(service)
    if mapper is None:
        raise UnmappedCall(f"{service}:{operation}")
    return mapper(operation, params, caller)
