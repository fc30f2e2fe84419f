"""Synthesise the real CDK app once per session (and once more with other context values).

The first synth on a clean machine pip-downloads the Lambda dependency layer from PyPI into
`layers/deps/` (cached there for later runs); no Docker and no AWS credentials are needed.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# A different value for every knob the second synth changes (see test_context.py).
ALTERNATE_CONTEXT = {
    "batchConcurrency": 3,
    "sectionConcurrency": 7,
    "indexConcurrency": 2,
    "replanConcurrency": 4,
    "conversionModelId": "us.google.gemma-3-12b-it",
    "escalateTo": "bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "indexName": "other-chunks",
    "removalPolicy": "destroy",
    "pageImageExpirationDays": 7,
    "readerPrincipals": ["arn:aws:iam::123456789012:role/analytics"],
    "tenantPrincipals": {
        "arn:aws:iam::123456789012:role/acme-app": "acme",
        "arn:aws:iam::123456789012:role/apps/beta-app": "beta",
    },
    "adminPrincipals": ["arn:aws:iam::123456789012:role/operator"],
    "alarmEmail": "oncall@example.com",
    "isolatedConverters": False,
    "maxIndexingOcu": 4,
    "maxSearchOcu": 6,
}


@dataclass
class Synth:
    """One synthesised stack: its template, the stack object and the validation report."""

    template: Any  # aws_cdk.assertions.Template
    stack: Any
    report: dict[str, Any]
    assembly_dir: Path
    docker_contexts: list[Path]
    docker_sources: list[dict[str, Any]]
    """Each image asset's build source (directory, dockerFile, dockerBuildArgs, ...)."""

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        """Logical id -> resource of the template."""
        return self.template.to_json()["Resources"]

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        """Resources of one CloudFormation type."""
        return {k: v for k, v in self.resources.items() if v["Type"] == kind}

    def logical_id(self, construct: Any) -> str:
        """The logical id of an L2 construct's CloudFormation resource."""
        return self.stack.resolve(self.stack.get_logical_id(construct.node.default_child))


def cdk_json_context() -> dict[str, Any]:
    """The context of cdk.json, as `cdk synth` passes it (feature flags included)."""
    return json.loads((ROOT / "cdk.json").read_text())["context"]


ACCOUNT = "123456789012"
REGION = "eu-west-1"


def synthesise(
    overrides: dict[str, Any] | None = None,
    *,
    account: str | None = None,
    region: str | None = None,
) -> Synth:
    """Build and synthesise the app with cdk.json's context (plus overrides), environment-
    agnostic or pinned to an account and region as `cdk deploy` pins it."""
    from aws_cdk.assertions import Template

    from app import build_app

    context = {**cdk_json_context(), **(overrides or {})}
    app, stack = build_app(context, account=account, region=region)
    assembly = app.synth()
    directory = Path(assembly.directory)
    report = json.loads((directory / "validation-report.json").read_text())
    sources = [
        image["source"]
        for manifest in directory.glob("*.assets.json")
        for image in json.loads(manifest.read_text()).get("dockerImages", {}).values()
    ]
    contexts = [directory / source["directory"] for source in sources]
    return Synth(Template.from_stack(stack), stack, report, directory, contexts, sources)


@pytest.fixture(scope="session")
def synth() -> Synth:
    """The stack as `cdk synth` builds it from cdk.json."""
    return synthesise()


@pytest.fixture(scope="session")
def pinned() -> Synth:
    """The stack as `cdk deploy` synthesises it: pinned to the deploying account and region."""
    return synthesise(account=ACCOUNT, region=REGION)


@pytest.fixture(scope="session")
def alternate() -> Synth:
    """The stack synthesised with ALTERNATE_CONTEXT."""
    return synthesise(ALTERNATE_CONTEXT)
