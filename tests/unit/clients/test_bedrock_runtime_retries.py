"""botocore, not drac, retries Bedrock calls: a local stand-in for bedrock-runtime answers
Converse requests, and the client built with `bedrock_config` makes exactly as many attempts
as configured; with one attempt (the Lambda runtime's) a read timeout is not retried."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from botocore.retries.standard import ExponentialBackoff

from drac.clients.bedrock import BedrockTextModel
from drac.clients.bedrock_runtime import bedrock_config
from drac.errors import ModelCallError

OK = {
    "output": {"message": {"role": "assistant", "content": [{"text": "done"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 5, "outputTokens": 1, "totalTokens": 6},
    "metrics": {"latencyMs": 1},
}


class FakeBedrockRuntime(ThreadingHTTPServer):
    """Answers each Converse request from a queue of (status, error code or None, delay)."""

    daemon_threads = True

    def __init__(self, answers: list[tuple[int, str | None, float]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers = list(answers)
        self.paths: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeBedrockRuntime

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.paths.append(self.path)
        status, code, delay = self.server.answers.pop(0)
        time.sleep(delay)
        body: dict[str, Any] = OK if code is None else {"message": f"{code} from the fake"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if code is not None:
            self.send_header("x-amzn-ErrorType", code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client may have given up (read timeout)
            self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(autouse=True)
def no_backoff_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda _self, _context: 0.0)


@contextmanager
def _serve(answers: list[tuple[int, str | None, float]]) -> Iterator[FakeBedrockRuntime]:
    server = FakeBedrockRuntime(answers)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _model(server: FakeBedrockRuntime, *, attempts: int, read_timeout_s: float = 5.0):
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=server.url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=bedrock_config(read_timeout_s, attempts),
    )
    return BedrockTextModel("google.gemma-3-27b-it", client=client)


def test_botocore_retries_5xx_within_the_configured_attempts() -> None:
    answers = [(503, "ServiceUnavailableException", 0.0), (500, "InternalServerException", 0.0),
               (200, None, 0.0)]  # fmt: skip
    with _serve(answers) as server:
        reply = _model(server, attempts=3).complete("s", "p")
        assert reply.text == "done" and reply.usage.input_tokens == 5
        assert server.paths == ["/model/google.gemma-3-27b-it/converse"] * 3


def test_throttling_past_the_attempts_is_a_throttled_model_call_error() -> None:
    with _serve([(429, "ThrottlingException", 0.0)] * 4) as server:
        with pytest.raises(
            ModelCallError, match="failed after 3 attempts: ThrottlingException"
        ) as caught:
            _model(server, attempts=3).complete("s", "p")
        assert caught.value.retry == "throttled"
        assert len(server.paths) == 3


def test_one_attempt_means_no_sdk_retry() -> None:
    with _serve([(503, "ServiceUnavailableException", 0.0)] * 2) as server:
        with pytest.raises(ModelCallError, match="ServiceUnavailableException") as caught:
            _model(server, attempts=1).complete("s", "p")
        assert caught.value.retry == "transient"
        assert len(server.paths) == 1


def test_a_read_timeout_is_transient_and_not_retried_with_one_attempt() -> None:
    with _serve([(200, None, 1.0)] * 2) as server:
        with pytest.raises(ModelCallError, match="Read timeout") as caught:
            _model(server, attempts=1, read_timeout_s=0.2).complete("s", "p")
        assert caught.value.retry == "transient"
        assert len(server.paths) == 1


def test_validation_errors_are_not_retried_by_botocore() -> None:
    with _serve([(400, "ValidationException", 0.0)] * 3) as server:
        with pytest.raises(ModelCallError, match="ValidationException") as caught:
            _model(server, attempts=3).complete("", "p")
        assert caught.value.retry is None
        assert len(server.paths) == 1
