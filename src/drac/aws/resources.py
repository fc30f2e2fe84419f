"""The names of a deployment's resources, as each Lambda function receives them.

The stack passes them as upper-case environment variables (infra/stages.py, infra/search.py,
infra/kb_transform.py). Each function has a model requiring the names it is given, checked
while its handler module is imported (Lambda's init phase): a function deployed without one
fails at cold start with the variable named, not at the first call that reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, StringConstraints, ValidationError

from drac.settings import SettingsError

Name = Annotated[str, StringConstraints(min_length=1)]
"""A resource name that must be set (an empty variable counts as missing)."""

IN_LAMBDA = "AWS_LAMBDA_FUNCTION_NAME"
"""Set by Lambda in every function's environment (AWS Lambda Developer Guide, "Defined
runtime environment variables", docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html)."""


class CloudResources(BaseModel):
    """Names of the deployment's resources; any may be absent (tests and tools build the
    ones they use). The per-function models below require theirs."""

    documents_bucket: str = ""
    artifacts_bucket: str = ""
    documents_table: str = ""
    sources_table: str = ""
    elements_table: str = ""
    plans_table: str = ""
    ledger_table: str = ""
    collection_endpoint: str = ""
    ingest_state_machine_arn: str = ""
    replan_state_machine_arn: str = ""
    converter_access_role_arn: str = ""
    region: str = ""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> CloudResources:
        """Read the names from the environment (and the region from AWS_REGION); a model
        that requires a name fails with SettingsError naming its variable."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            name: env[name.upper()] for name in cls.model_fields if name.upper() in env
        }
        values.setdefault("region", env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION", ""))
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            variables = sorted({str(error["loc"][0]).upper() for error in exc.errors()})
            raise SettingsError(
                f"{cls.__name__}: environment variable(s) {', '.join(variables)} missing or "
                "empty (the stack sets them: redeploy it)"
            ) from exc


class StageResources(CloudResources):
    """What every pipeline function is given (infra/stages.py)."""

    documents_bucket: Name
    artifacts_bucket: Name
    documents_table: Name
    sources_table: Name
    elements_table: Name
    plans_table: Name
    ledger_table: Name
    collection_endpoint: Name
    ingest_state_machine_arn: Name
    replan_state_machine_arn: Name


class ConverterResources(StageResources):
    """A converter's, which reaches storage only through its per-document access role."""

    converter_access_role_arn: Name


class IndexSetupResources(CloudResources):
    """The index-setup custom resource's (infra/search.py): the collection only."""

    collection_endpoint: Name


class KbTransformResources(CloudResources):
    """The knowledge-base transformation's (infra/kb_transform.py): the intermediate bucket
    it reads and writes, and the prefix there."""

    kb_intermediate_bucket: Name
    kb_intermediate_prefix: str = ""


CONVERTERS = ("normalise", "read_scans", "read_spreadsheet", "render")
_STAGES = (
    "abandon_plan", "activate_plan", "batch_failed", "convert", "delete", "escalate", "finalise",
    "index_chunks", "parse", "plan_section", "prepare_plan", "register", "replan_manifest",
    "retrieve", "section", "starter",
)  # fmt: skip
FUNCTION_RESOURCES: dict[str, type[CloudResources]] = {
    **dict.fromkeys(_STAGES, StageResources),
    **dict.fromkeys(CONVERTERS, ConverterResources),
    "index_setup": IndexSetupResources,
    "kb_transform": KbTransformResources,
}
"""Each function (its folder under functions/) and the resources it must be given."""


def function_resources(function: str, environ: Mapping[str, str] | None = None) -> CloudResources:
    """The resources of `function` read from the environment; SettingsError names any
    variable it needs that is missing or empty."""
    return FUNCTION_RESOURCES[function].from_environ(environ)


def check_at_cold_start(function: str) -> None:
    """In Lambda, fail the init phase unless the environment holds every resource name
    `function` needs; elsewhere (tests, tools), nothing: they hand functions their resources."""
    if IN_LAMBDA in os.environ:
        function_resources(function)
