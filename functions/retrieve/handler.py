"""The retrieval API behind an IAM-authenticated Lambda function URL: POST a
RetrieveRequest as JSON, get the best chunks of the active plan versions back."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import LambdaFunctionUrlResolver
from aws_lambda_powertools.logging import correlation_paths

from drac.aws.lambda_support import MetricUnit, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.retrieve import RetrieveRequest, RetrieveResponse, retrieve

app = LambdaFunctionUrlResolver(enable_validation=True)


@app.post("/")
def search(request: RetrieveRequest) -> RetrieveResponse:
    """Answer one query (a malformed body is a 422 naming the field)."""
    response = retrieve(_runtime(), request)
    metrics.add_metric(name="Retrievals", unit=MetricUnit.Count, value=1)
    return response


@logger.inject_lambda_context(correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Route the function URL request."""
    return app.resolve(event, context)
