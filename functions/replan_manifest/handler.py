"""Write the re-plan manifest (documents to re-plan) for the Distributed Map."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.replan import ManifestInput, write_replan_manifest

check_at_cold_start("replan_manifest")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the manifest's bucket, key and count, and the resolved strategy."""
    payload = ManifestInput.model_validate(event)
    return write_replan_manifest(_runtime(), payload).model_dump(mode="json")
