"""Errors classified, not guessed, and the plan's grammar sent to llama.cpp servers: a server
that says a feature is not supported (whatever its status) is not asked again in the same
form; only transport errors, 429 and other 5xx are retried."""

from __future__ import annotations

import pytest

from drac.clients.http_json import Backoff
from drac.clients.openai_compat import NO_IMAGES, OpenAICompatTextModel, OpenAICompatVisionModel
from drac.errors import ModelCallError
from drac.planning.plan_format import plan_grammar, plan_schema
from tests.unit.clients.test_clients_openai_compat import FakeServer, _ok

IDS = ["p1", "p2", "p3"]
NO_IMAGE_BODY = {
    "error": {
        "code": 500,
        "message": "image input is not supported - hint: if this is unexpected, you may "
        "need to provide the mmproj",
        "type": "server_error",
    }
}  # what llama.cpp's server answers a text-only model given an image


class ScriptedServer(FakeServer):
    """The fake server, read by the JSON bodies of its requests."""

    @property
    def bodies(self) -> list[dict]:
        """The JSON body of each request, in order."""
        return [request["body"] for request in self.requests]


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
    [body] = server.bodies
    assert body["grammar"] == plan_grammar(IDS)
    assert "response_format" not in body
    assert model.structured == "grammar" and model.server_kind == "llama.cpp"
    assert reply.text == '{"b":["p3"]}'


def test_auto_on_another_server_asks_for_json_schema() -> None:
    with ScriptedServer([_ok('{"b":[]}')]) as server:
        model = _text(server, [], structured="auto")
        model.complete("s", "p", schema=plan_schema(IDS), grammar=plan_grammar(IDS))
    [body] = server.bodies
    assert body["response_format"]["type"] == "json_schema" and "grammar" not in body


def test_a_500_saying_the_schema_is_unsupported_steps_down_at_once_without_retries() -> None:
    refusal = (500, {"error": {"message": "json_schema response_format is not supported"}}, {})
    sleeps: list[float] = []
    with ScriptedServer([refusal, _ok('{"b":[]}')]) as server:
        model = _text(server, sleeps, structured="json_schema")
        model.complete("s", "p", schema=plan_schema(IDS))
    assert sleeps == []  # not retried as transient
    assert [("response_format" in r) for r in server.bodies] == [True, True]
    assert server.bodies[1]["response_format"] == {"type": "json_object"}
    assert model.structured == "json_object"


def test_a_refused_grammar_steps_down_to_json_schema() -> None:
    refusal = (400, {"error": {"message": "unknown field: grammar"}}, {})
    with ScriptedServer([refusal, _ok('{"b":[]}')]) as server:
        model = _text(server, [], structured="grammar")
        model.complete("s", "p", schema=plan_schema(IDS), grammar=plan_grammar(IDS))
    assert "grammar" in server.bodies[0] and "grammar" not in server.bodies[1]
    assert server.bodies[1]["response_format"]["type"] == "json_schema"


def test_a_plain_500_is_still_retried() -> None:
    sleeps: list[float] = []
    with ScriptedServer([(500, {"error": "busy"}, {}), _ok('{"b":[]}')]) as server:
        _text(server, sleeps).complete("s", "p", schema=plan_schema(IDS))
    assert len(sleeps) == 1 and len(server.bodies) == 2


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
    assert len(server.bodies) == 1 and sleeps == []
