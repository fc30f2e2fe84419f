"""Query a deployed stack's retrieval API from anywhere with AWS credentials: find the
function URL in the stack's outputs, sign the request with SigV4 (service `lambda`), POST it."""

from __future__ import annotations

from typing import Any

import httpx

from drac.aws.stages.retrieve import RetrieveRequest, RetrieveResponse
from drac.errors import DracError

URL_OUTPUT = "RetrieveUrl"


def stack_retrieve_url(session: Any, stack_name: str) -> str:
    """The retrieval function URL a drac stack outputs; DracError naming what is missing."""
    cloudformation = session.client("cloudformation")
    try:
        (stack,) = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except Exception as exc:  # botocore's errors vary: say which stack could not be read
        raise DracError(f"cannot read stack {stack_name!r}: {exc}") from exc
    for output in stack.get("Outputs", []):
        if output["OutputKey"] == URL_OUTPUT:
            return str(output["OutputValue"])
    raise DracError(f"stack {stack_name!r} has no {URL_OUTPUT} output (deployed before the API?)")


def signed_headers(session: Any, url: str, body: str, region: str) -> dict[str, str]:
    """Headers of a SigV4-signed POST of `body` to a Lambda function URL."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    credentials = session.get_credentials()
    if credentials is None:
        raise DracError("no AWS credentials found (configure a profile or environment variables)")
    request = AWSRequest(
        method="POST", url=url, data=body, headers={"Content-Type": "application/json"}
    )
    SigV4Auth(credentials.get_frozen_credentials(), "lambda", region).add_auth(request)
    return dict(request.headers.items())


def retrieve_remote(
    session: Any,
    url: str,
    request: RetrieveRequest,
    *,
    region: str,
    client: httpx.Client | None = None,
) -> RetrieveResponse:
    """Ask the retrieval API; DracError with the API's own message when it refuses."""
    body = request.model_dump_json()
    headers = signed_headers(session, url, body, region)
    http = client or httpx.Client(timeout=30.0)
    try:
        response = http.post(url, content=body.encode("utf-8"), headers=headers)
    except httpx.HTTPError as exc:
        raise DracError(f"retrieval API {url} unreachable: {exc}") from exc
    finally:
        if client is None:
            http.close()
    if response.status_code != 200:
        raise DracError(f"retrieval API answered {response.status_code}: {response.text[:500]}")
    return RetrieveResponse.model_validate_json(response.text)
