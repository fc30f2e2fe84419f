import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from drac.embedders.openai import OpenAIEmbedder
from drac.ports import ModelCallError


class _Server:
    def __init__(self, status: int = 200, shuffle: bool = False):
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "headers": dict(self.headers),
                                       "json": body})
                if status != 200:
                    self.send_response(status)
                    self.end_headers()
                    self.wfile.write(b'{"error": "bad model"}')
                    return
                data = [{"index": i, "embedding": [float(len(t)), 1.0]}
                        for i, t in enumerate(body["input"])]
                if shuffle:
                    data.reverse()
                payload = {"data": data, "usage": {"prompt_tokens": 7}}
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
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

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


def test_openai_http_error_is_reported():
    with _Server(status=404) as server, pytest.raises(ModelCallError, match="404"):
        OpenAIEmbedder(server.url, "missing").embed(["a"])


def test_openai_no_auth_header_without_key_and_unreachable_endpoint():
    request = OpenAIEmbedder("http://127.0.0.1:9/v1", "m").request(["x"])
    assert "Authorization" not in request.headers
    with pytest.raises(ModelCallError, match="failed"):
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", timeout=2).embed(["x"])
