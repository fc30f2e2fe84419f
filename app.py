#!/usr/bin/env python3
"""CDK entry point: `cdk synth` / `cdk deploy` the drac stack with cdk-nag AwsSolutions checks."""

from __future__ import annotations

import os

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.nag import apply_suppressions
from infra.stack import DracStack


def build_app(context: dict | None = None) -> tuple[cdk.App, DracStack]:
    """Return the app and its stack, with AwsSolutions checks and reasoned suppressions."""
    app = cdk.App(context=context or {})
    stack_name = app.node.try_get_context("stackName") or "Drac"
    env = None
    if os.environ.get("CDK_DEFAULT_ACCOUNT"):
        env = cdk.Environment(
            account=os.environ["CDK_DEFAULT_ACCOUNT"], region=os.environ.get("CDK_DEFAULT_REGION")
        )
    stack = DracStack(app, stack_name, env=env)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    apply_suppressions(stack)
    return app, stack


if __name__ == "__main__":
    build_app()[0].synth()
