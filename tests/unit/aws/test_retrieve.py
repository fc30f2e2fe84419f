"""The retrieval API: exact OpenSearch requests, active versions only, the function URL
handler, and the SigV4-signed client the CLI uses."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from handlers import LambdaContext, load_handler

from drac.aws.opensearch import chunk_document
from drac.aws.retrieval_client import retrieve_remote, stack_retrieve_url
from drac.aws.runtime import INTERACTIVE_BEDROCK, Runtime
from drac.aws.stages.retrieve import RetrieveRequest, retrieve
from drac.models import Chunk, DocumentRecord, DocumentStatus
from drac.retrieval.rank import Mode
from tests.fakes import FakeBedrockRuntime


def _index(opensearch: Any, rt: Runtime, document_id: str, version: int, text: str,
           tenant: str | None = "acme") -> None:
    chunk = Chunk(document_id=document_id, source=f"{document_id}.pdf",
                  chunk_id=f"{document_id}-v{version}-{abs(hash(text)) % 10**6}",
                  plan_version=version, text=text, breadcrumb="Guide", element_ids=("p1",),
                  pages=(1,), tenant=tenant)
    vector = rt.embedder().embed([text])[0]
    opensearch.docs.append({**chunk_document(chunk, vector), "_id": f"id-{len(opensearch.docs)}"})


@pytest.fixture
def indexed(cloud: Any) -> Iterator[tuple[Runtime, Any]]:
    rt, opensearch = cloud
    fake = FakeBedrockRuntime(None, "google.gemma-3-27b-it")
    rt._clients["bedrock-runtime"] = rt._clients[INTERACTIVE_BEDROCK] = fake
    for document_id, tenant, status, active in (
        ("d1", "acme", DocumentStatus.INDEXED, 2),
        ("d2", "acme", DocumentStatus.DELETED, None),
        ("d3", "beta", DocumentStatus.INDEXED, 1),
    ):
        rt.registry.put(DocumentRecord(document_id=document_id, source=f"{document_id}.pdf",
                                       source_path=f"incoming/{tenant}/{document_id}.pdf",
                                       sha256="0" * 64, tenant=tenant, status=status,
                                       active_version=active))
    _index(opensearch, rt, "d1", 1, "Opening hours of the Lyon store (old plan)")
    _index(opensearch, rt, "d1", 2, "Opening hours of the Lyon store are 9 to 18")
    _index(opensearch, rt, "d1", 2, "Returns are accepted within 30 days")
    _index(opensearch, rt, "d2", 1, "Opening hours of a deleted document")
    _index(opensearch, rt, "d3", 1, "Opening hours in another tenant", tenant="beta")
    opensearch.requests.clear()
    yield rt, opensearch


def test_hybrid_retrieval_sends_both_queries_with_the_tenant_inside_knn(indexed: Any) -> None:
    rt, opensearch = indexed
    response = retrieve(rt, RetrieveRequest(query="opening hours Lyon", tenant="acme", k=2))
    (lexical, _), (nearest, _) = [(body, kind) for kind, body in opensearch.requests]
    tenant = [{"term": {"tenant": "acme"}}]
    assert lexical == {"size": 8, "_source": {"excludes": ["embedding"]},
                       "query": {"bool": {"must": [{"match": {"text": "opening hours Lyon"}}],
                                          "filter": tenant}}}
    knn = nearest["query"]["knn"]["embedding"]
    assert knn["k"] == 8 and knn["filter"] == {"bool": {"filter": tenant}}
    assert len(knn["vector"]) == 1024 and nearest["size"] == 8
    # only the active version of live documents of the tenant come back
    assert response.chunks[0].text == "Opening hours of the Lyon store are 9 to 18"
    assert {(c.document_id, c.plan_version) for c in response.chunks} == {("d1", 2)}
    top = response.chunks[0]
    assert top.source_key == "incoming/acme/d1.pdf" and top.pages == [1]
    assert response.mode == "hybrid"


def test_bm25_mode_narrowed_to_documents_and_all_tenants(indexed: Any) -> None:
    rt, opensearch = indexed
    response = retrieve(rt, RetrieveRequest(query="opening hours", all_tenants=True,
                                            mode=Mode.BM25,
                                            filters={"document_ids": ["d3", "d2"]}))
    ((_, body),) = opensearch.requests
    assert body["query"]["bool"]["filter"] == [{"terms": {"document_id": ["d3", "d2"]}}]
    assert [c.document_id for c in response.chunks] == ["d3"]  # d2 is deleted
    with pytest.raises(ValueError, match="not both"):
        RetrieveRequest(query="q", tenant="acme", all_tenants=True)


ACME_APP = "arn:aws:iam::123456789012:role/acme-app"


def _url_event(body: Any, caller: str = ACME_APP) -> dict[str, Any]:
    return {"version": "2.0", "rawPath": "/", "rawQueryString": "", "headers": {
        "content-type": "application/json"}, "requestContext": {
        "http": {"method": "POST", "path": "/", "sourceIp": "127.0.0.1"},
        "authorizer": {"iam": {"userArn": caller.replace(":iam::", ":sts::").replace(
            ":role/", ":assumed-role/") + "/session"}},
        "requestId": "r1", "accountId": "123456789012", "domainName": "x.lambda-url.aws",
        "stage": "$default", "routeKey": "$default", "timeEpoch": 0},
        "body": body if isinstance(body, str) else json.dumps(body), "isBase64Encoded": False}


def test_the_function_url_handler_answers_and_names_bad_fields(indexed: Any) -> None:
    rt, _ = indexed
    rt.settings = rt.settings.changed(tenant_principals={ACME_APP: "acme"})
    handler = load_handler("retrieve")
    handler._runtime = lambda: rt
    answer = handler.handler(_url_event({"query": "returns", "tenant": "acme"}),
                             LambdaContext())
    assert answer["statusCode"] == 200
    chunks = json.loads(answer["body"])["chunks"]
    assert chunks[0]["text"] == "Returns are accepted within 30 days"
    refused = handler.handler(_url_event({"query": "", "k": 500}), LambdaContext())
    assert refused["statusCode"] == 422
    assert "query" in refused["body"] and "k" in refused["body"]
    # the tenant is the caller's: another tenant, or an unmapped caller, is a 403
    other = handler.handler(_url_event({"query": "hours", "tenant": "beta"}), LambdaContext())
    assert other["statusCode"] == 403 and "may not read tenant 'beta'" in other["body"]
    stranger = handler.handler(_url_event({"query": "hours"}, "arn:aws:iam::123456789012:"
                                          "role/other"), LambdaContext())
    assert stranger["statusCode"] == 403 and "mapped to no tenant" in stranger["body"]


class _Stub(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        _Stub.seen.append({"headers": dict(self.headers),
                           "body": json.loads(self.rfile.read(length))})
        body = json.dumps({"query": "q", "mode": "hybrid", "chunks": [{
            "chunk_id": "d1-v2-x", "document_id": "d1", "source": "guide.pdf",
            "source_key": "incoming/acme/guide.pdf", "tenant": "acme", "pages": [3],
            "breadcrumb": "Guide >> Hours", "text": "Guide >> Hours\n\nOpen 9 to 18",
            "plan_version": 2, "score": 0.03}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def test_the_cli_finds_the_url_in_the_stack_and_signs_its_request(
    aws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/"
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {"RetrieveUrl": {"Value": url}}}
    aws.client("cloudformation").create_stack(StackName="Drac", TemplateBody=json.dumps(template))
    assert stack_retrieve_url(aws, "Drac") == url
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    from drac.cli import _register_commands, cli

    _register_commands()
    _Stub.seen.clear()
    try:
        result = CliRunner().invoke(cli, ["search", "opening hours", "--stack", "Drac",
                                          "--tenant", "acme", "-k", "3", "--json"])
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.output
    (sent,) = _Stub.seen
    assert sent["body"] == {"query": "opening hours", "tenant": "acme", "all_tenants": False,
                            "k": 3, "mode": "hybrid", "filters": {"document_ids": []}}
    authorization = sent["headers"]["Authorization"]
    assert re.fullmatch(
        r"AWS4-HMAC-SHA256 Credential=\w+/\d{8}/us-east-1/lambda/aws4_request, "
        r"SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}", authorization)
    (hit,) = json.loads(result.output)
    assert (hit["source"], hit["pages"], hit["rank"]) == ("guide.pdf", [3], 1)


def test_an_api_refusal_is_reported_with_its_message(aws: Any) -> None:
    class Refusing(_Stub):
        def do_POST(self) -> None:
            self.send_response(403)
            self.end_headers()
            self.wfile.write(b'{"Message":"Forbidden"}')

    server = HTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        from drac.errors import DracError

        with pytest.raises(DracError, match=r"403.*Forbidden"):
            retrieve_remote(aws, f"http://127.0.0.1:{server.server_port}/",
                            RetrieveRequest(query="q", tenant="acme"), region="us-east-1")
    finally:
        server.shutdown()


class _Throttling(BaseHTTPRequestHandler):
    """Bedrock's InvokeModel on 127.0.0.1: throttles the first `throttles` calls."""

    throttles = 2
    calls: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        _Throttling.calls.append(self.path)
        if len(_Throttling.calls) <= _Throttling.throttles:
            body, status = b'{"message": "Too many requests"}', 429
            self.send_response(status)
            self.send_header("x-amzn-ErrorType", "ThrottlingException")
        else:
            body = json.dumps({"embedding": [0.5] * 256, "inputTextTokenCount": 2}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def test_the_api_retries_a_throttled_embedding_the_pipeline_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One throttle used to be a 502 for the caller: the retrieval API's Bedrock client
    retries (botocore standard mode, real HTTP against a local server); the pipeline's
    clients make one try (Step Functions owns their retries)."""
    import boto3

    from drac.aws.runtime import CloudResources
    from drac.errors import ModelCallError
    from drac.settings import Settings

    server = HTTPServer(("127.0.0.1", 0), _Throttling)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", f"http://127.0.0.1:{server.server_port}")
    for name, value in {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}.items():
        monkeypatch.setenv(name, value)
    settings = Settings(embedding_dimension=256)
    try:
        _Throttling.calls.clear()
        rt = Runtime(CloudResources(region="us-east-1"), settings,
                     boto3.session.Session(region_name="us-east-1"))
        (vector,) = rt.embedder(interactive=True).embed(["opening hours"])
        assert len(vector) == 256 and len(_Throttling.calls) == 3  # two 429s, then 200
        _Throttling.calls.clear()
        with pytest.raises(ModelCallError):
            rt.embedder().embed(["opening hours"])
        assert len(_Throttling.calls) == 1
    finally:
        server.shutdown()
