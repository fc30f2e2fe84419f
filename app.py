#!/usr/bin/env python3
"""CDK entry point: `cdk synth` / `cdk deploy` the drac stack with cdk-nag AwsSolutions checks."""

from __future__ import annotations

import os

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.nag import apply_suppressions
from infra.stack import DracStack


def build_app(
    context: dict | None = None, *, account: str | None = None, region: str | None = None
) -> tuple[cdk.App, DracStack]:
    """Return the app and its stack, with AwsSolutions checks and reasoned suppressions.

    The stack is pinned to `account`/`region`, else to the CDK CLI's CDK_DEFAULT_ACCOUNT and
    CDK_DEFAULT_REGION (set by `cdk deploy` when it finds credentials), else environment-agnostic.
    """
    app = cdk.App(context=context or {})
    stack_name = app.node.try_get_context("stackName") or "Drac"
    account = account or os.environ.get("CDK_DEFAULT_ACCOUNT")
    region = region or os.environ.get("CDK_DEFAULT_REGION")
    env = cdk.Environment(account=account, region=region) if account or region else None
    stack = DracStack(app, stack_name, env=env)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    apply_suppressions(stack)
    return app, stack


if __name__ == "__main__":
    build_app()[0].synth()
