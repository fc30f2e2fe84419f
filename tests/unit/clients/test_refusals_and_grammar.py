"""Errors classified, not guessed, and the plan's grammar sent to llama.cpp servers: a server
that says a feature is not supported (whatever its status) is not asked again in the same
form; only transport errors, 429 and other 5xx are retried."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from drac.clients.http_json import Backoff
from drac.clients.openai_compat import NO_IMAGES, OpenAICompatTextModel, OpenAICompatVisionModel
from drac.planning.plan_format import plan_grammar, plan_schema
from drac.ports import ModelCallError
from tests.unit.clients.test_clients_openai_compat import _ok

IDS = ["p1", "p2", "p3"]
NO_IMAGE_BODY = {
    "error": {
        "code": 500,
        "message": "image input is not supported - hint: if this is unexpected, you may "
        "need to provide the mmproj",
        "type": "server_error",
    }
}  # what llama.cpp's server answers a text-only model given an image


class ScriptedServer:
    """A local server: POSTs answered from a queue, GET /props answered with `props`."""

    def __init__(self, answers, props=None):
        self.answers = list(answers)
        self.requests: list[dict] = []
        self.gets: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status, body):
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):
                outer.gets.append(self.path)
                if props is not None and self.path == "/props":
                    self._send(200, props)
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self):
                length = int(self.headers["Content-Length"])
                outer.requests.append(json.loads(self.rfile.read(length)))
                status, body, _headers = outer.answers.pop(0)
                self._send(status, body)

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


def _text(server, sleeps, **kwargs) -> OpenAICompatTextModel:
    return OpenAICompatTextModel(
        "gemma", base_url=server.url, backoff=Backoff(attempts=4), sleep=sleeps.append, **kwargs
    )


def test_auto_finds_a_llamacpp_server_and_sends_the_grammar_not_a_schema() -> None:
    props = {"default_generation_settings": {"n_ctx": 8192}, "build_info": "b1"}
    sleeps: list[float] = []
    with ScriptedServer([_ok('{"b":["p3"]}')], props=props) as server:
        model = _text(server, sleeps, structured="auto")
        reply = model.complete("s", "p", schema=plan_schema(IDS), grammar=plan_grammar(IDS))
    assert server.gets == ["/props"]
    [body] = server.requests
    assert body["grammar"] == plan_grammar(IDS)
    assert "response_format" not in body
    assert model.structured == "grammar" and model.server_kind == "llama.cpp"
    assert reply.text == '{"b":["p3"]}'


def test_auto_on_another_server_asks_for_json_schema() -> None:
    with ScriptedServer([_ok('{"b":[]}')]) as server:
        model = _text(server, [], structured="auto")
        model.complete("s", "p", schema=plan_schema(IDS), grammar=plan_grammar(IDS))
    [body] = server.requests
    assert body["response_format"]["type"] == "json_schema" and "grammar" not in body


def test_a_500_saying_the_schema_is_unsupported_steps_down_at_once_without_retries() -> None:
    refusal = (500, {"error": {"message": "json_schema response_format is not supported"}}, {})
    sleeps: list[float] = []
    with ScriptedServer([refusal, _ok('{"b":[]}')]) as server:
        model = _text(server, sleeps, structured="json_schema")
        model.complete("s", "p", schema=plan_schema(IDS))
    assert sleeps == []  # not retried as transient
    assert [("response_format" in r) for r in server.requests] == [True, True]
    assert server.requests[1]["response_format"] == {"type": "json_object"}
    assert model.structured == "json_object"


def test_a_refused_grammar_steps_down_to_json_schema() -> None:
    refusal = (400, {"error": {"message": "unknown field: grammar"}}, {})
    with ScriptedServer([refusal, _ok('{"b":[]}')]) as server:
        model = _text(server, [], structured="grammar")
        model.complete("s", "p", schema=plan_schema(IDS), grammar=plan_grammar(IDS))
    assert "grammar" in server.requests[0] and "grammar" not in server.requests[1]
    assert server.requests[1]["response_format"]["type"] == "json_schema"


def test_a_plain_500_is_still_retried() -> None:
    sleeps: list[float] = []
    with ScriptedServer([(500, {"error": "busy"}, {}), _ok('{"b":[]}')]) as server:
        _text(server, sleeps).complete("s", "p", schema=plan_schema(IDS))
    assert len(sleeps) == 1 and len(server.requests) == 2


def test_a_text_only_server_given_images_fails_at_once_naming_the_cause() -> None:
    sleeps: list[float] = []
    with ScriptedServer([(500, NO_IMAGE_BODY, {})] * 6) as server:
        model = OpenAICompatVisionModel(
            "gemma", base_url=server.url, backoff=Backoff(attempts=6), sleep=sleeps.append
        )
        with pytest.raises(ModelCallError) as caught:
            model.convert("s", "p", [b"\x89PNG"])
    assert str(caught.value).startswith(NO_IMAGES)
    assert caught.value.retry is None
    assert len(server.requests) == 1 and sleeps == []
