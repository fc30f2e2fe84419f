"""Each Lambda function requires the resource names it is given, at cold start: one deployed
without a variable it needs fails while its handler module is imported (Lambda's init phase),
naming the variable, instead of at the first call that reads it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from drac.aws.resources import (
    FUNCTION_RESOURCES,
    ConverterResources,
    StageResources,
    function_resources,
)
from drac.errors import DracError
from drac.settings import SettingsError

REPO = Path(__file__).resolve().parents[3]
HANDLERS = sorted((REPO / "functions").glob("*/handler.py"))
STAGE_VARIABLES = {
    name.upper(): f"drac-{name}"
    for name in StageResources.model_fields
    if name not in ("region", "converter_access_role_arn")
}


def test_every_function_has_a_resource_model_and_checks_it_at_import() -> None:
    assert {path.parent.name for path in HANDLERS} == set(FUNCTION_RESOURCES)
    for path in HANDLERS:
        calls = [
            node
            for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", "") == "check_at_cold_start"
        ]
        assert [ast.literal_eval(call.value.args[0]) for call in calls] == [path.parent.name]


def test_a_missing_or_empty_variable_is_named() -> None:
    environ = {**STAGE_VARIABLES, "ELEMENTS_TABLE": ""}
    del environ["LEDGER_TABLE"]
    with pytest.raises(SettingsError, match="ELEMENTS_TABLE, LEDGER_TABLE") as raised:
        function_resources("parse", environ)
    assert isinstance(raised.value, DracError)
    resources = function_resources("parse", STAGE_VARIABLES)
    assert resources.elements_table == "drac-elements_table"
    with pytest.raises(SettingsError, match="CONVERTER_ACCESS_ROLE_ARN"):
        function_resources("render", STAGE_VARIABLES)
    role = {"CONVERTER_ACCESS_ROLE_ARN": "arn:aws:iam::123456789012:role/r"}
    assert isinstance(function_resources("render", {**STAGE_VARIABLES, **role}), ConverterResources)
    assert function_resources("index_setup", {"COLLECTION_ENDPOINT": "https://c"})
    with pytest.raises(SettingsError, match="KB_INTERMEDIATE_BUCKET"):
        function_resources("kb_transform", STAGE_VARIABLES)
    kb = function_resources("kb_transform", {"KB_INTERMEDIATE_BUCKET": "kb-bucket"})
    assert kb.kb_intermediate_bucket == "kb-bucket"  # type: ignore[attr-defined]


def _import_in_lambda(handler: str, variables: dict[str, str]) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key.upper() not in STAGE_VARIABLES}
    env.update(variables, AWS_LAMBDA_FUNCTION_NAME=f"Drac-{handler}", AWS_REGION="eu-west-1")
    path = str(REPO / "functions" / handler / "handler.py")
    code = (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('handler', {path!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )


def test_a_function_without_a_resource_it_needs_fails_at_cold_start() -> None:
    missing = {key: value for key, value in STAGE_VARIABLES.items() if key != "PLANS_TABLE"}
    failed = _import_in_lambda("parse", missing)
    assert failed.returncode != 0
    assert "SettingsError" in failed.stderr and "PLANS_TABLE" in failed.stderr
    started = _import_in_lambda("parse", STAGE_VARIABLES)
    assert started.returncode == 0, started.stderr
