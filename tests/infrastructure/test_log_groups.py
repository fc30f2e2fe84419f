"""Log groups never block a redeploy and go with the stack when it is destroyed."""

from __future__ import annotations

import json

from tests.infrastructure.conftest import Synth


def _log_groups(synth: Synth) -> dict[str, dict]:
    return synth.of_type("AWS::Logs::LogGroup")


def _machine_log_groups(synth: Synth) -> dict[str, dict]:
    return {
        k: v
        for k, v in _log_groups(synth).items()
        if "vendedlogs/states" in json.dumps(v["Properties"].get("LogGroupName", ""))
    }


def test_every_named_log_group_is_new_for_each_stack(synth: Synth) -> None:
    """A retained group of a destroyed or rolled-back stack must not collide with the next
    create: names carry the stack's UUID (from its stack id); the rest are unnamed."""
    machines = _machine_log_groups(synth)
    assert len(machines) == 4  # ingest, convert, plan, re-plan
    for logical_id, group in _log_groups(synth).items():
        name = group["Properties"].get("LogGroupName")
        if name is None:
            continue  # CloudFormation generates a unique name
        text = json.dumps(name)
        assert "AWS::StackId" in text and "Fn::Split" in text, logical_id


def test_retained_by_default_and_destroyed_with_removal_policy_destroy(
    synth: Synth, alternate: Synth
) -> None:
    assert {g["DeletionPolicy"] for g in _machine_log_groups(synth).values()} == {"Retain"}
    assert {g["DeletionPolicy"] for g in _log_groups(alternate).values()} == {"Delete"}
    # a function's log group follows the removal policy too (its name is generated, so a
    # retained one never blocks the next deploy); CDK's provider helper's goes with it
    functions = {
        k: v
        for k, v in _log_groups(synth).items()
        if "LogGroupName" not in v["Properties"] and "Provider" not in k
    }
    assert functions and {g["DeletionPolicy"] for g in functions.values()} == {"Retain"}


def test_every_function_logs_to_its_own_group_with_a_retention(synth: Synth) -> None:
    groups = _log_groups(synth)
    checked = set()
    for logical_id, function in synth.of_type("AWS::Lambda::Function").items():
        config = function["Properties"].get("LoggingConfig")
        if config is None:
            continue  # CDK's own provider functions
        (group_id,) = [ref for ref in json.dumps(config).split('"') if ref in groups]
        assert groups[group_id]["Properties"]["RetentionInDays"] == 30, logical_id
        checked.add(group_id)
    assert len(checked) >= 19  # every pipeline function, each its own group
