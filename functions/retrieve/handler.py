"""The retrieval API behind an IAM-authenticated Lambda function URL: POST a
RetrieveRequest as JSON, get the best chunks of the active plan versions back.

The tenant comes from the caller's IAM identity (`drac.aws.identity`), never from the body: a
request naming another tenant, or every tenant without being an admin, is a 403."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import LambdaFunctionUrlResolver
from aws_lambda_powertools.event_handler.exceptions import ServiceError
from aws_lambda_powertools.logging import correlation_paths

from drac.aws.errors import Forbidden
from drac.aws.identity import caller_scope, function_url_caller
from drac.aws.lambda_support import MetricUnit, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.retrieve import (
    RetrieveRequest,
    RetrieveResponse,
    retrieve,
    scoped_request,
)

check_at_cold_start("retrieve")  # a missing resource name fails the init phase

app = LambdaFunctionUrlResolver(enable_validation=True)
FORBIDDEN = 403


@app.post("/")
def search(request: RetrieveRequest) -> RetrieveResponse:
    """Answer one query within the caller's tenant (a malformed body is a 422 naming the
    field, a request outside the caller's tenant a 403)."""
    rt = _runtime()
    caller = function_url_caller(app.current_event.raw_event)
    try:
        scoped = scoped_request(caller_scope(rt.settings, caller), request)
    except Forbidden as exc:
        logger.warning("retrieval refused", extra={"caller": caller, "reason": str(exc)})
        metrics.add_metric(name="RetrievalsRefused", unit=MetricUnit.Count, value=1)
        raise ServiceError(FORBIDDEN, str(exc)) from exc
    response = retrieve(rt, scoped)
    metrics.add_metric(name="Retrievals", unit=MetricUnit.Count, value=1)
    return response


@logger.inject_lambda_context(
    correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL, clear_state=True
)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Route the function URL request."""
    return app.resolve(event, context)
