"""Structured output (issue 20): the answer's shape asked for in the form each backend takes,
a refused form stepped down, the finish reason read, earlier turns sent as a conversation."""

from __future__ import annotations

import json

import pytest
from botocore.stub import Stubber

from drac.clients.bedrock import BedrockTextModel
from drac.clients.openai_compat import OpenAICompatTextModel
from drac.errors import ModelCallError
from drac.settings import Settings
from tests.unit.clients.test_clients_bedrock import _answer, _runtime
from tests.unit.clients.test_clients_openai_compat import FakeServer, _ok

SCHEMA = {
    "type": "object",
    "properties": {"chunks": {"type": "array", "items": {"type": "array"}}},
    "required": ["chunks"],
}


def _text_model(server, **kwargs) -> OpenAICompatTextModel:
    return OpenAICompatTextModel("gemma3", base_url=server.url, sleep=lambda _s: None, **kwargs)


def _finished(text: str, reason: str | None) -> tuple:
    status, body, headers = _ok(text)
    body["choices"][0]["finish_reason"] = reason
    return status, body, headers


def test_the_schema_is_sent_as_openai_json_schema() -> None:
    with FakeServer([_finished('{"chunks": [["p1"]]}', "stop")]) as server:
        model = _text_model(server)
        reply = model.complete("plan", "ids", max_tokens=90, schema=SCHEMA)
    assert server.requests[0]["body"] == {
        "model": "gemma3",
        "messages": [{"role": "system", "content": "plan"}, {"role": "user", "content": "ids"}],
        "temperature": 0.1,
        "max_tokens": 90,
        "stream": False,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "strict": True, "schema": SCHEMA},
        },
    }
    assert reply.finish_reason == "stop" and not reply.cut_off
    assert model.structured_output


def test_a_refused_format_steps_down_at_once_and_is_remembered() -> None:
    refusal = (400, {"error": {"message": "response_format type not supported"}}, {})
    answers = [refusal, refusal, _ok('[["p1"]]'), _ok('[["p2"]]')]
    with FakeServer(answers) as server:
        model = _text_model(server)
        assert model.complete("s", "p", schema=SCHEMA).text == '[["p1"]]'
        model.complete("s", "p", schema=SCHEMA)
    formats = [request["body"].get("response_format") for request in server.requests]
    assert formats == [
        {
            "type": "json_schema",
            "json_schema": {"name": "answer", "strict": True, "schema": SCHEMA},
        },
        {"type": "json_object"},
        None,
        None,
    ]
    assert model.structured == "none" and not model.structured_output


def test_another_400_is_not_taken_for_a_refused_format() -> None:
    with (
        FakeServer([(400, {"error": "context too long"}, {})]) as server,
        pytest.raises(ModelCallError, match="context too long"),
    ):
        _text_model(server).complete("s", "p", schema=SCHEMA)
    assert len(server.requests) == 1


@pytest.mark.parametrize(("mode", "expected"), [("json_object", {"type": "json_object"}),
                                                ("none", None)])  # fmt: skip
def test_the_structured_setting_chooses_the_form(mode, expected) -> None:
    with FakeServer([_ok("{}")]) as server:
        model = _text_model(server, structured=mode)
        model.complete("s", "p", schema=SCHEMA)
    assert server.requests[0]["body"].get("response_format") == expected
    assert model.structured_output == (mode == "json_object")  # the prompt names the object


def test_no_schema_no_response_format() -> None:
    with FakeServer([_ok("x")]) as server:
        _text_model(server).complete("s", "p")
    assert "response_format" not in server.requests[0]["body"]


def test_a_cut_off_answer_says_so() -> None:
    with FakeServer([_finished('[["p1", "p2', "length")]) as server:
        reply = _text_model(server).complete("s", "p", schema=SCHEMA)
    assert reply.cut_off and reply.finish_reason == "length"


def test_earlier_turns_are_sent_as_a_conversation() -> None:
    with FakeServer([_ok("[]")]) as server:
        _text_model(server).complete("s", "try again", earlier=[("ids", "my answer")])
    assert server.requests[0]["body"]["messages"] == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "ids"},
        {"role": "assistant", "content": "my answer"},
        {"role": "user", "content": "try again"},
    ]


def test_settings_choose_the_form_and_the_ceiling(monkeypatch) -> None:
    from drac.clients.factory import make_text_model

    settings = Settings(backend="openai", openai_model="m", openai_structured="json_object",
                        planning_max_tokens=300)  # fmt: skip
    model = make_text_model(settings)
    assert isinstance(model, OpenAICompatTextModel)
    assert (model.structured, model.max_answer_tokens) == ("json_object", 300)
    monkeypatch.setenv("DRAC_OPENAI_STRUCTURED", "bogus")
    with pytest.raises(ValueError, match="openai_structured"):
        Settings.load()


# --- Bedrock Converse: a forced tool ----------------------------------------------------------


def _tool_answer(chunks: list[list[str]], stop: str = "tool_use") -> dict:
    answer = _answer("")
    answer["output"]["message"]["content"] = [
        {"toolUse": {"toolUseId": "t1", "name": "answer", "input": {"chunks": chunks}}}
    ]
    answer["stopReason"] = stop
    return answer


def _tool_config(choice: dict) -> dict:
    return {
        "tools": [
            {
                "toolSpec": {
                    "name": "answer",
                    "description": "Give the answer: the chunks as arrays of element IDs.",
                    "inputSchema": {"json": SCHEMA},
                }
            }
        ],
        "toolChoice": choice,
    }


def _converse(tool_config: dict | None, messages: list | None = None) -> dict:
    request = {
        "modelId": "google.gemma-3-27b-it",
        "inferenceConfig": {"maxTokens": 90, "temperature": 0.1},
        "system": [{"text": "plan"}],
        "messages": messages or [{"role": "user", "content": [{"text": "ids"}]}],
    }
    if tool_config is not None:
        request["toolConfig"] = tool_config
    return request


def test_bedrock_asks_for_a_forced_tool_and_reads_its_input() -> None:
    client = _runtime()
    model = BedrockTextModel(client=client)
    with Stubber(client) as stub:
        stub.add_response("converse", _tool_answer([["p1", "p2"]]),
                          _converse(_tool_config({"tool": {"name": "answer"}})))  # fmt: skip
        reply = model.complete("plan", "ids", max_tokens=90, schema=SCHEMA)
        stub.assert_no_pending_responses()
    assert json.loads(reply.text) == {"chunks": [["p1", "p2"]]}
    assert reply.finish_reason == "tool_use" and not reply.cut_off
    assert model.structured_output


def test_bedrock_steps_down_from_a_forced_tool_to_any_tool_to_text() -> None:
    client = _runtime()
    model = BedrockTextModel(client=client)
    with Stubber(client) as stub:
        for choice in ({"tool": {"name": "answer"}}, {"any": {}}):
            stub.add_client_error(
                "converse", service_error_code="ValidationException", http_status_code=400,
                service_message="This model doesn't support the toolChoice field.",
                expected_params=_converse(_tool_config(choice)),
            )  # fmt: skip
        stub.add_response("converse", _answer('[["p1"]]'), _converse(None))
        stub.add_response("converse", {**_answer("x"), "stopReason": "max_tokens"},
                          _converse(None))  # fmt: skip
        assert model.complete("plan", "ids", max_tokens=90, schema=SCHEMA).text == '[["p1"]]'
        assert model.complete("plan", "ids", max_tokens=90, schema=SCHEMA).cut_off
        stub.assert_no_pending_responses()
    assert model.tool_use == "off" and not model.structured_output


def test_bedrock_sends_earlier_turns() -> None:
    client = _runtime()
    messages = [
        {"role": "user", "content": [{"text": "ids"}]},
        {"role": "assistant", "content": [{"text": "my answer"}]},
        {"role": "user", "content": [{"text": "try again"}]},
    ]
    with Stubber(client) as stub:
        stub.add_response("converse", _answer("x"), _converse(None, messages))
        BedrockTextModel(client=client).complete(
            "plan", "try again", max_tokens=90, earlier=[("ids", "my answer")]
        )
        stub.assert_no_pending_responses()
