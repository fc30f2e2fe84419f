"""The real CDK app synthesised as `cdk deploy` synthesises it, for the end-to-end harness.

A synthesised template is kept under `.pytest_cache/drac-synth/`, named by the digest of
everything it is built from, so a rerun with unchanged infrastructure, package, functions and
CDK versions reads it back instead of synthesising again.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib.metadata import version
from pathlib import Path
from typing import Any

from tests.e2e.template import ACCOUNT, REGION, StackTemplate

ROOT = Path(__file__).resolve().parents[2]
SYNTH_CACHE = ROOT / ".pytest_cache" / "drac-synth"
"""Synthesised templates by the digest of what they are built from (a rerun skips the synth)."""
SYNTH_INPUTS = ("app.py", "cdk.json", "pyproject.toml", "README.md", "infra", "src/drac",
                "functions", "statemachine", "layers/core", "layers/deps")
SYNTH_PACKAGES = ("aws-cdk-lib", "constructs", "cdk-nag", "jsii")


def synth_digest(context: dict[str, Any] | None, region: str, account: str) -> str:
    """A digest of everything a synthesised template is built from: the context, account and
    region, the files of the app, its infrastructure code, the package and the functions, and
    the versions of the CDK packages."""
    digest = hashlib.sha256(json.dumps([context, region, account], sort_keys=True).encode())
    for package in SYNTH_PACKAGES:
        digest.update(f"{package}=={version(package)}\0".encode())
    for name in SYNTH_INPUTS:
        top = ROOT / name
        for path in sorted(top.rglob("*")) if top.is_dir() else [top]:
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def synthesise_stack(context: dict[str, Any] | None = None, region: str = REGION,
                     account: str = ACCOUNT) -> StackTemplate:
    """Synthesise the real app with cdk.json's context (plus `-c` style overrides), pinned
    to an account and region as `cdk deploy` pins it; a template synthesised from the same
    inputs before (SYNTH_CACHE, keyed by `synth_digest`) is read back instead."""
    cached = SYNTH_CACHE / f"{synth_digest(context, region, account)}.json"
    if cached.is_file():
        saved = json.loads(cached.read_text("utf-8"))
        return StackTemplate(saved["stack_name"], saved["template"], saved["handler_dirs"],
                             region, account)
    from tests.infrastructure.conftest import synthesise

    synth = synthesise(context, account=account, region=region)
    factory = synth.stack.factory
    handler_dirs = {synth.logical_id(fn): factory.handler_dirs[construct_id]
                    for construct_id, fn in factory.functions.items()}
    template = StackTemplate(synth.stack.stack_name, synth.template.to_json(), handler_dirs,
                             region, account)
    SYNTH_CACHE.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.tmp")  # renamed whole: readers never see half
    partial.write_text(json.dumps({"stack_name": template.stack_name,
                                   "template": template.template,
                                   "handler_dirs": template.handler_dirs}), "utf-8")
    partial.replace(cached)
    return template
