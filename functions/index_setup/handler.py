"""Custom resource: create the chunk index (knn_vector + BM25 text + keyword fields)."""

from __future__ import annotations

import os
from typing import Any

from drac.aws.lambda_support import logger
from drac.aws.resources import check_at_cold_start

check_at_cold_start("index_setup")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Create or keep the index on Create/Update; leave it on Delete (it holds the chunks)."""
    import boto3

    from drac.aws.opensearch import ensure_index, make_client

    props = event["ResourceProperties"]
    physical_id = f"{props['Endpoint']}/{props['IndexName']}"
    if event["RequestType"] == "Delete":
        return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}
    session = boto3.session.Session()
    client = make_client(props["Endpoint"], os.environ["AWS_REGION"], session.get_credentials())
    created = ensure_index(client, props["IndexName"], int(props["Dimension"]))
    logger.info("index ready", extra={"index": props["IndexName"], "index_created": created})
    return {"PhysicalResourceId": physical_id, "Data": {"IndexName": props["IndexName"]}}
