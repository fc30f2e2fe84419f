"""What the harness deploys is what the template declares."""

from __future__ import annotations

import json

import boto3

from drac.aws.opensearch import index_body
from tests.e2e.harness import Cloud


def test_tables_queues_buckets_rules_and_functions_follow_the_template(deployed: Cloud) -> None:
    model, resolver, region = deployed.model, deployed.model.resolver, deployed.region
    stack = model.stack
    ddb = boto3.client("dynamodb", region_name=region)
    for logical_id, table in stack.of_type("AWS::DynamoDB::Table").items():
        described = ddb.describe_table(TableName=resolver.name(logical_id))["Table"]
        props = table["Properties"]
        assert described["KeySchema"] == props["KeySchema"]
        assert [i["IndexName"] for i in described.get("GlobalSecondaryIndexes", [])] == [
            i["IndexName"] for i in props.get("GlobalSecondaryIndexes", [])]
        ttl = ddb.describe_time_to_live(TableName=resolver.name(logical_id))
        declared = props.get("TimeToLiveSpecification")
        assert ttl["TimeToLiveDescription"].get("AttributeName") == (
            declared["AttributeName"] if declared else None)
    sqs = boto3.client("sqs", region_name=region)
    for queue in model.queues.values():
        attributes = sqs.get_queue_attributes(QueueUrl=queue.url,
                                              AttributeNames=["All"])["Attributes"]
        for name in ("VisibilityTimeout", "MessageRetentionPeriod"):
            if name in queue.attributes:
                assert attributes[name] == queue.attributes[name]
        if "RedrivePolicy" in queue.attributes:
            assert json.loads(attributes["RedrivePolicy"]) == json.loads(
                queue.attributes["RedrivePolicy"])
    s3 = boto3.client("s3", region_name=region)
    assert s3.get_bucket_versioning(Bucket=deployed.documents_bucket)["Status"] == "Enabled"
    from moto.s3.models import s3_backends  # moto's response omits EventBridgeConfiguration

    bucket = s3_backends[model.stack.account]["aws"].get_bucket(deployed.documents_bucket)
    assert bucket.notification_configuration.event_bridge is not None
    events = boto3.client("events", region_name=region)
    for logical_id, rule in stack.of_type("AWS::Events::Rule").items():
        props = resolver.resolve(rule["Properties"])
        described = events.describe_rule(Name=resolver.name(logical_id),
                                         EventBusName=props.get("EventBusName", "default"))
        assert json.loads(described["EventPattern"]) == props["EventPattern"]
    lam = boto3.client("lambda", region_name=region)
    for function in model.functions.values():
        configuration = lam.get_function_configuration(FunctionName=function.name)
        assert configuration["Environment"]["Variables"] == function.environment
        assert configuration["Role"] == function.role.arn
    sfn = boto3.client("stepfunctions", region_name=region)
    for name, arn in deployed.machines.items():
        definition = json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"])
        assert "${" not in json.dumps(definition), name
    assert set(deployed.machines) == {"ingest", "convert", "plan", "replan"}


def test_the_chunk_index_was_created_by_the_custom_resource_role(deployed: Cloud) -> None:
    index = deployed.runtime.settings.cloud.index_name
    assert deployed.opensearch.indices.bodies == {index: index_body(1024)}
    setup = deployed.principal(deployed.model.function_for("index_setup")).label
    assert [c.operation for c in deployed.log.calls_of(setup)] == ["exists", "create"]


def test_the_chunk_index_custom_resource_succeeds(deployed: Cloud) -> None:
    """It used to log extra={'created': ...}: 'created' is a reserved LogRecord attribute, the
    log call raised after the index was made, and CloudFormation would roll every deploy back."""
    assert deployed.custom_resource_errors == {}
