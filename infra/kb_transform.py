"""The optional KbTransform function: drac as a Bedrock Knowledge Base data source's custom
transformation (`-c kbTransformBucket=BUCKET [-c kbTransformPrefix=PREFIX/]`).

Its role reads and writes only objects under the intermediate storage the user names, and
invokes a Bedrock model only when the default strategy plans with the LLM planner.
"""

from __future__ import annotations

from aws_cdk import CfnOutput, Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from drac.settings import Settings
from infra.config import model_arns
from infra.functions import FunctionFactory

OUTPUT = "KbTransformFunctionArn"
# A knowledge base invokes the function synchronously; Lambda's ceiling is 900 s (AWS Lambda
# Developer Guide, "Configure Lambda function timeout").
TIMEOUT = Duration.minutes(15)


class KbTransform(Construct):
    """The function, its role's grants and the output of its ARN."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: Settings, factory: FunctionFactory
    ) -> None:
        """Create the function for `settings.deploy.kb_transform_bucket` (which must be set)."""
        super().__init__(scope, construct_id)
        bucket = settings.deploy.kb_transform_bucket
        if bucket is None:
            raise ValueError("KbTransform needs kbTransformBucket")
        prefix = settings.deploy.kb_transform_prefix
        stack = Stack.of(self)
        self.function: lambda_.Function = factory.make(
            "KbTransform",
            "kb_transform",
            memory=1024,
            timeout=TIMEOUT,
            environment={"KB_INTERMEDIATE_BUCKET": bucket, "KB_INTERMEDIATE_PREFIX": prefix},
        )
        objects = stack.format_arn(
            service="s3", region="", account="", resource=bucket, resource_name=f"{prefix}*"
        )
        # the batches the knowledge base wrote, and the chunked files written beside them
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["s3:GetObject", "s3:PutObject"], resources=[objects])
        )
        strategy = settings.conversion.strategy
        if strategy.planner == "llm":
            model = strategy.planner_model or settings.models.planning_model
            self.function.add_to_role_policy(
                iam.PolicyStatement(
                    actions=["bedrock:InvokeModel"],
                    resources=model_arns(model, stack.region, stack.account, stack.partition),
                )
            )
        CfnOutput(stack, OUTPUT, value=self.function.function_arn)
