"""Deployment settings from CDK context, and the ARNs and policies derived from them.

The settings model itself (fields, defaults, validation) is `drac.settings.Settings`, shared
with the CLI and the Lambda functions.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from constructs import Node

from drac.settings import Settings

GEO_PREFIXES = ("us.", "eu.", "apac.", "us-gov.", "global.", "jp.", "au.", "ca.")


def settings_from_context(node: Node) -> Settings:
    """The deployment's settings from the app's context (cdk.json, `-c key=value`).

    Raises drac.settings.SettingsError naming the field when a value is invalid or a key is
    unknown.
    """
    return Settings.from_context(node.get_all_context())


def removal_policy(settings: Settings) -> RemovalPolicy:
    """The CloudFormation removal policy of stateful resources (and log groups)."""
    return (
        RemovalPolicy.DESTROY
        if settings.deploy.removal_policy == "destroy"
        else RemovalPolicy.RETAIN
    )


def model_arns(model_id: str, region: str, account: str, partition: str = "aws") -> list[str]:
    """Return the ARNs bedrock:InvokeModel needs for a model id or inference-profile id.

    A cross-region inference profile (``us.``/``eu.``/... prefix) routes to the foundation
    model in any region of its geography, so the grant names the profile and the model.
    """
    if model_id.startswith("arn:"):
        return [model_id]
    if model_id.startswith(GEO_PREFIXES):
        base = model_id.split(".", 1)[1]
        return [
            f"arn:{partition}:bedrock:{region}:{account}:inference-profile/{model_id}",
            f"arn:{partition}:bedrock:*::foundation-model/{base}",
        ]
    return [f"arn:{partition}:bedrock:{region}::foundation-model/{model_id}"]
