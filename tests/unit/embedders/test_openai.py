import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from drac.clients.http_json import Backoff
from drac.embedders.openai import OpenAIEmbedder
from drac.errors import ModelCallError


class _Server:
    def __init__(self, status: int = 200, shuffle: bool = False, refusals: int = 0,
                 answer: dict | None = None):
        self.requests: list[dict] = []
        self.refusals = refusals
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "headers": dict(self.headers),
                                       "json": body})
                if outer.refusals:
                    outer.refusals -= 1
                    self.send_response(429)
                    self.send_header("Retry-After", "2")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if status != 200:
                    self.send_response(status)
                    self.end_headers()
                    self.wfile.write(b'{"error": "bad model"}')
                    return
                data = [{"index": i, "embedding": [float(len(t)), 1.0]}
                        for i, t in enumerate(body["input"])]
                if shuffle:
                    data.reverse()
                payload = answer or {"data": data, "usage": {"prompt_tokens": 7}}
                raw = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_openai_request_json_batches_and_order():
    with _Server(shuffle=True) as server:
        embedder = OpenAIEmbedder(server.url + "/", "nomic-embed-text", api_key="k", batch_size=2)
        vectors = embedder.embed(["a", "bbb", "cc"])
    assert vectors == [[1.0, 1.0], [3.0, 1.0], [2.0, 1.0]]
    assert [r["path"] for r in server.requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert server.requests[0]["json"] == {"model": "nomic-embed-text", "input": ["a", "bbb"]}
    assert server.requests[1]["json"] == {"model": "nomic-embed-text", "input": ["cc"]}
    assert server.requests[0]["headers"]["Authorization"] == "Bearer k"
    assert embedder.usage.input_tokens == 14
    assert embedder.dimension == 2


def test_openai_429_is_retried_honouring_retry_after():
    sleeps: list[float] = []
    with _Server(refusals=2) as server:
        embedder = OpenAIEmbedder(server.url, "m", backoff=Backoff(attempts=3, base_s=0.1),
                                  sleep=sleeps.append)
        assert embedder.embed(["ab"]) == [[2.0, 1.0]]
    assert len(server.requests) == 3
    assert len(sleeps) == 2 and all(wait >= 2 for wait in sleeps)


def test_openai_429_retries_are_bounded_and_throttled():
    with _Server(refusals=5) as server, pytest.raises(ModelCallError, match="429") as caught:
        OpenAIEmbedder(server.url, "m", backoff=Backoff(attempts=2),
                       sleep=lambda _s: None).embed(["a"])
    assert len(server.requests) == 2
    assert caught.value.retry == "throttled"


def test_openai_http_error_is_reported_and_not_retried():
    with _Server(status=404) as server, pytest.raises(ModelCallError, match="404") as caught:
        OpenAIEmbedder(server.url, "missing").embed(["a"])
    assert len(server.requests) == 1
    assert caught.value.retry is None


def test_openai_no_auth_header_without_key_and_unreachable_endpoint():
    request = OpenAIEmbedder("http://127.0.0.1:9/v1", "m").request(["x"])
    assert "Authorization" not in request.headers
    sleeps: list[float] = []
    embedder = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", timeout=2,
                              backoff=Backoff(attempts=3), sleep=sleeps.append)
    with pytest.raises(ModelCallError, match="failed after 3 attempts") as caught:
        embedder.embed(["x"])
    assert caught.value.retry == "transient"
    assert len(sleeps) == 2


def test_openai_answer_without_vectors_is_a_model_call_error():
    with (_Server(answer={"data": [{"index": 0}]}) as server,
          pytest.raises(ModelCallError, match="no usable vectors")):
        OpenAIEmbedder(server.url, "m").embed(["x"])
