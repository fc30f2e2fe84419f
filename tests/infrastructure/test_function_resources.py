"""The stack gives every function the resource names its model requires
(drac.aws.resources): a function the stack left without one would fail at cold start."""

from __future__ import annotations

import pytest

from drac.aws.resources import FUNCTION_RESOURCES, function_resources
from tests.infrastructure.conftest import Synth


def _environments(synth: Synth) -> dict[str, dict[str, str]]:
    """Each function's environment variables by handler folder (values: their names, since
    the template holds references the deployment resolves)."""
    factory = synth.stack.factory
    resources = synth.template.to_json()["Resources"]
    environments = {}
    for construct_id, function in factory.functions.items():
        properties = resources[synth.logical_id(function)]["Properties"]
        variables = properties.get("Environment", {}).get("Variables", {})
        environments[factory.handler_dirs[construct_id]] = {name: name for name in variables}
    return environments


@pytest.mark.parametrize("context", ["pinned", "alternate"])
def test_every_function_is_given_the_resources_its_model_requires(
    context: str, request: pytest.FixtureRequest
) -> None:
    environments = _environments(request.getfixturevalue(context))
    assert set(environments) <= set(FUNCTION_RESOURCES)
    assert {"parse", "render", "retrieve"} <= set(environments)
    for handler, variables in environments.items():
        function_resources(handler, variables)  # raises naming what is missing
