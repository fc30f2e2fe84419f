"""The one HTTP client for OpenAI-compatible servers: which failures are retried, how long it
waits, and what the caller is told once the attempts are spent."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from drac.clients.http_json import Backoff, JsonClient
from drac.errors import ModelCallError


class Script:
    """An httpx transport answering from a list of responses (or exceptions to raise)."""

    def __init__(self, answers: list[httpx.Response | Exception]) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def _client(script: Script, sleeps: list[float], **backoff: float) -> JsonClient:
    return JsonClient(
        "http://model.test/v1/",
        api_key="sk-test",
        backoff=Backoff(**backoff),  # type: ignore[arg-type]
        sleep=sleeps.append,
        transport=httpx.MockTransport(script),
    )


def test_the_request_is_a_json_post_with_the_key():
    script = Script([httpx.Response(200, json={"ok": True})])
    assert _client(script, []).post("embeddings", {"input": ["a"]}) == {"ok": True}
    [request] = script.requests
    assert (request.method, str(request.url)) == ("POST", "http://model.test/v1/embeddings")
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == {"input": ["a"]}


def test_waits_are_full_jitter_under_a_doubling_cap():
    script = Script([httpx.Response(503)] * 5 + [httpx.Response(200, json={})])
    sleeps: list[float] = []
    _client(script, sleeps, attempts=6, base_s=1.0, max_s=4.0).post("x", {})
    assert len(script.requests) == 6
    caps = [1.0, 2.0, 4.0, 4.0, 4.0]
    assert all(0 <= wait <= cap for wait, cap in zip(sleeps, caps, strict=True))


def test_retry_after_in_seconds_or_as_a_date_is_honoured_up_to_the_cap():
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    script = Script(
        [
            httpx.Response(429, headers={"Retry-After": "2.5"}),
            httpx.Response(503, headers={"Retry-After": later}),
            httpx.Response(429, headers={"Retry-After": "3600"}),
            httpx.Response(200, json={}),
        ]
    )
    sleeps: list[float] = []
    _client(script, sleeps, attempts=4, base_s=0.1, max_s=30.0).post("x", {})
    assert sleeps[0] >= 2.5
    assert 15 <= sleeps[1] <= 20
    assert sleeps[2] == 30.0  # a server asking for an hour does not hold the CLI for an hour


@pytest.mark.parametrize(
    ("failure", "hint"),
    [
        (httpx.Response(429, text="quota"), "throttled"),
        (httpx.Response(502, text="bad gateway"), "transient"),
        (httpx.ConnectError("refused"), "transient"),
        (httpx.ReadTimeout("slow"), "transient"),
        (httpx.RemoteProtocolError("closed"), "transient"),
    ],
)
def test_after_the_last_attempt_the_error_carries_the_retry_hint(failure, hint):
    script = Script([failure] * 3)
    sleeps: list[float] = []
    with pytest.raises(ModelCallError, match="failed after 3 attempts") as caught:
        _client(script, sleeps, attempts=3).post("x", {})
    assert caught.value.retry == hint
    assert len(script.requests) == 3 and len(sleeps) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 413, 422])
def test_client_errors_are_not_retried(status):
    script = Script([httpx.Response(status, text="no such model")])
    with pytest.raises(ModelCallError, match=f"HTTP {status}: no such model") as caught:
        _client(script, []).post("x", {})
    assert caught.value.retry is None
    assert len(script.requests) == 1


def test_unusable_answers_and_urls_are_not_retried():
    script = Script([httpx.Response(200, text="<html>"), httpx.Response(200, json=[1, 2])])
    client = _client(script, [])
    with pytest.raises(ModelCallError, match="not JSON") as caught:
        client.post("x", {})
    assert caught.value.retry is None
    with pytest.raises(ModelCallError, match="not a JSON object"):
        client.post("x", {})
    with pytest.raises(ModelCallError) as caught:
        JsonClient("localhost:11434/v1", sleep=lambda _s: None).post("x", {})
    assert caught.value.retry is None


def test_backoff_is_validated():
    with pytest.raises(ValueError):
        Backoff(attempts=0)
