"""Small readers over a synthesised template."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def definition(resource: dict[str, Any]) -> dict[str, Any]:
    """A state machine's ASL after CloudFormation's substitutions.

    Each `${Name}` becomes `SUB:Name` (the value CloudFormation puts there is checked
    separately, in DefinitionSubstitutions); a placeholder without a substitution fails.
    """
    props = resource["Properties"]
    text = props["DefinitionString"]
    assert isinstance(text, str), "numbers are filled at synth; the definition is one string"
    names = set(PLACEHOLDER.findall(text))
    missing = names - set(props.get("DefinitionSubstitutions", {}))
    assert not missing, f"placeholders without a substitution: {missing}"
    return json.loads(PLACEHOLDER.sub(lambda m: f"SUB:{m.group(1)}", text))


def states(asl: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every state, including those inside Map item processors, as (name, state)."""
    for name, state in asl["States"].items():
        yield name, state
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from states(processor)


def state(asl: dict[str, Any], name: str) -> dict[str, Any]:
    """One state by name, at any depth."""
    found = dict(states(asl))
    assert name in found, f"no state {name!r} (have {sorted(found)})"
    return found[name]


def statements(resources: dict[str, dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(policy logical id, statement) of every AWS::IAM::Policy in the template."""
    for logical_id, resource in resources.items():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            yield logical_id, statement


def as_list(value: Any) -> list[Any]:
    """A policy field that may be a scalar or a list, as a list."""
    return value if isinstance(value, list) else [value]


def role_of_policy(resource: dict[str, Any]) -> list[str]:
    """Logical ids of the roles a policy is attached to."""
    return [role["Ref"] for role in resource["Properties"].get("Roles", [])]


def flatten(value: Any) -> str:
    """A CloudFormation value (Fn::Join, GetAtt, ...) as one comparable string."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(flatten(part) for part in parts)
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return "<{}.{}>".format(*value["Fn::GetAtt"])
    if isinstance(value, dict) and "Ref" in value:
        return "<{}>".format(value["Ref"])
    return json.dumps(value, sort_keys=True)
