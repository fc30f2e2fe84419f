import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from drac.clients.http_json import Backoff
from drac.clients.openai_compat import OpenAICompatTextModel, OpenAICompatVisionModel
from drac.errors import ModelCallError


class FakeServer:
    """A local chat-completions endpoint answering POSTs from a queue of (status, body,
    headers), and GET /props with `props` when given (as llama.cpp's server does)."""

    def __init__(self, answers, props=None):
        self.answers = list(answers)
        self.requests: list[dict] = []
        self.gets: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.gets.append(self.path)
                found = props is not None and self.path == "/props"
                payload = json.dumps(props if found else {"error": "not found"}).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):
                length = int(self.headers["Content-Length"])
                outer.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": json.loads(self.rfile.read(length)),
                    }
                )
                status, body, headers = outer.answers.pop(0)
                payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_args):
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _ok(text: str = "<!-- Page 1 -->\n# T") -> tuple:
    return (
        200,
        {
            "model": "gemma3:27b",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 120},
        },
        {"Content-Type": "application/json"},
    )


def _model(server, sleeps=None, **kwargs):
    return OpenAICompatVisionModel(
        "gemma3:27b",
        base_url=server.url,
        backoff=Backoff(attempts=3, base_s=0.5, max_s=4),
        sleep=(sleeps.append if sleeps is not None else lambda _s: None),
        **kwargs,
    )


def test_the_exact_vision_request_is_sent():
    with FakeServer([_ok()]) as server:
        reply = _model(server, api_key="sk-local").convert("RULES", "pages 1", [b"PNG1", b"PNG2"])
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-local"
    assert request["body"] == {
        "model": "gemma3:27b",
        "messages": [
            {"role": "system", "content": "RULES"},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,UE5HMQ=="}},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,UE5HMg=="}},
                    {"type": "text", "text": "pages 1"},
                ],
            },
        ],
        "temperature": 0.1,
        "max_tokens": 8192,
        "stream": False,
    }
    assert base64.b64decode("UE5HMQ==") == b"PNG1"
    assert reply.text == "<!-- Page 1 -->\n# T"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (900, 120)
    assert reply.model == "gemma3:27b"


def test_no_authorization_header_without_a_key():
    with FakeServer([_ok()]) as server:
        _model(server).convert("s", "p", [b"x"])
    assert "Authorization" not in server.requests[0]["headers"]


def test_429_and_5xx_are_retried_honouring_retry_after():
    answers = [
        (429, {"error": "slow down"}, {"Retry-After": "3"}),
        (503, {"error": "loading"}, {}),
        _ok("fine"),
    ]
    sleeps: list[float] = []
    with FakeServer(answers) as server:
        reply = _model(server, sleeps).convert("s", "p", [b"x"])
    assert reply.text == "fine"
    assert len(server.requests) == 3
    assert sleeps[0] >= 3 and 0 <= sleeps[1] <= 1.0


def test_retries_are_bounded():
    with (
        FakeServer([(500, {"error": "boom"}, {})] * 4) as server,
        pytest.raises(ModelCallError, match="failed after 3 attempts: HTTP 500") as caught,
    ):
        _model(server).convert("s", "p", [b"x"])
    assert len(server.requests) == 3
    assert caught.value.retry == "transient"


def test_throttling_past_the_attempts_is_a_throttled_error():
    with (
        FakeServer([(429, {"error": "slow down"}, {})] * 3) as server,
        pytest.raises(ModelCallError, match="failed after 3 attempts: HTTP 429") as caught,
    ):
        _model(server).convert("s", "p", [b"x"])
    assert caught.value.retry == "throttled"


def test_a_client_error_is_not_retried():
    with (
        FakeServer([(400, {"error": "bad image"}, {})]) as server,
        pytest.raises(ModelCallError, match=r"HTTP 400.*bad image") as caught,
    ):
        _model(server).convert("s", "p", [b"x"])
    assert len(server.requests) == 1
    assert caught.value.retry is None


def test_garbage_answers_are_model_call_errors():
    with FakeServer([(200, b"not json", {}), (200, {"choices": []}, {})]) as server:
        model = _model(server)
        with pytest.raises(ModelCallError, match="not JSON"):
            model.convert("s", "p", [b"x"])
        with pytest.raises(ModelCallError, match="no choices"):
            model.convert("s", "p", [b"x"])


def test_an_unreachable_server_is_retried_then_fails():
    sleeps: list[float] = []
    model = OpenAICompatTextModel(
        "m", base_url="http://127.0.0.1:9", backoff=Backoff(attempts=2), sleep=sleeps.append
    )
    with pytest.raises(ModelCallError, match="failed after 2 attempts: connection") as caught:
        model.complete("s", "p")
    assert caught.value.retry == "transient"
    assert len(sleeps) == 1


def test_the_text_model_request():
    with FakeServer([_ok('[["h1"]]')]) as server:
        model = OpenAICompatTextModel("qwen", base_url=server.url + "/")
        reply = model.complete("plan", "ids", max_tokens=512)
    body = server.requests[0]["body"]
    assert body["messages"] == [
        {"role": "system", "content": "plan"},
        {"role": "user", "content": "ids"},
    ]
    assert body["max_tokens"] == 512 and body["model"] == "qwen"
    assert reply.text == '[["h1"]]'
