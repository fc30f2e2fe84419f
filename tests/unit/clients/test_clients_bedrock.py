import io

import boto3
import pytest
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.stub import ANY, Stubber
from PIL import Image

from drac.clients import DEFAULT_ATTEMPTS
from drac.clients.bedrock import DEFAULT_MODEL_ID, BedrockTextModel, BedrockVisionModel
from drac.clients.bedrock_runtime import bedrock_config
from drac.clients.images import BEDROCK_MAX_IMAGE_BYTES, fit_png
from drac.errors import ModelCallError

PNG_A = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (100).to_bytes(4, "big") * 2 + b"a"
PNG_B = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (200).to_bytes(4, "big") * 2 + b"b"


def _runtime():
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _answer(text: str, inputs: int = 1200, outputs: int = 300) -> dict:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": inputs, "outputTokens": outputs, "totalTokens": inputs + outputs},
        "metrics": {"latencyMs": 1234},
    }


def _vision(client, **kwargs):
    return BedrockVisionModel(client=client, **kwargs)


def test_the_exact_converse_request_is_sent_and_the_reply_carries_usage():
    client = _runtime()
    expected = {
        "modelId": "google.gemma-3-27b-it",
        "system": [{"text": "SYSTEM RULES"}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"image": {"format": "png", "source": {"bytes": PNG_A}}},
                    {"image": {"format": "png", "source": {"bytes": PNG_B}}},
                    {"text": "pages 1 to 2"},
                ],
            }
        ],
        "inferenceConfig": {"maxTokens": 8192, "temperature": 0.1},
    }
    with Stubber(client) as stub:
        stub.add_response("converse", _answer("<!-- Page 1 -->\n# A"), expected)
        reply = _vision(client).convert("SYSTEM RULES", "pages 1 to 2", [PNG_A, PNG_B])
        stub.assert_no_pending_responses()
    assert DEFAULT_MODEL_ID == "google.gemma-3-27b-it"
    assert reply.text == "<!-- Page 1 -->\n# A"
    assert reply.model == "google.gemma-3-27b-it"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (1200, 300)
    assert reply.latency_ms >= 0


def test_model_id_and_max_tokens_are_configurable():
    client = _runtime()
    model = _vision(client, model_id="google.gemma-3-12b-it", max_tokens=4096)
    with Stubber(client) as stub:
        stub.add_response(
            "converse",
            _answer("x"),
            {
                "modelId": "google.gemma-3-12b-it",
                "system": ANY,
                "messages": ANY,
                "inferenceConfig": {"maxTokens": 4096, "temperature": 0.1},
            },
        )
        assert model.convert("s", "p", [PNG_A]).text == "x"
    assert model.name == "bedrock:google.gemma-3-12b-it"


@pytest.mark.parametrize(
    ("code", "status", "hint"),
    [
        ("ThrottlingException", 429, "throttled"),
        ("TooManyRequestsException", 429, "throttled"),
        ("ServiceQuotaExceededException", 400, "throttled"),
        ("SomeNewLimitException", 429, "throttled"),
        ("ServiceUnavailableException", 503, "transient"),
        ("InternalServerException", 500, "transient"),
        ("ModelTimeoutException", 408, "transient"),
        ("ModelNotReadyException", 429, "transient"),
        ("BadGateway", 502, "transient"),
        ("ValidationException", 400, None),
        ("AccessDeniedException", 403, None),
        ("ResourceNotFoundException", 404, None),
    ],
)
def test_service_errors_become_model_call_errors_with_a_retry_hint_and_no_drac_retry(
    code, status, hint
):
    client = _runtime()
    with Stubber(client) as stub:
        stub.add_client_error(
            "converse", service_error_code=code, service_message="nope", http_status_code=status
        )
        with pytest.raises(ModelCallError, match=f"{code}: nope") as caught:
            _vision(client).convert("s", "p", [PNG_A])
        stub.assert_no_pending_responses()  # one call: retrying is botocore's job, not drac's
    assert caught.value.retry == hint


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        (ReadTimeoutError(endpoint_url="https://bedrock"), "transient"),
        (ConnectTimeoutError(endpoint_url="https://bedrock"), "transient"),
        (EndpointConnectionError(endpoint_url="https://bedrock"), "transient"),
        (ConnectionClosedError(endpoint_url="https://bedrock"), "transient"),
        (NoCredentialsError(), None),
    ],
)
def test_network_errors_are_transient_and_others_are_not(error, hint):
    class Failing:
        calls = 0

        def converse(self, **_kwargs):
            Failing.calls += 1
            raise error

    with pytest.raises(ModelCallError, match=r"Bedrock google\.gemma-3-27b-it") as caught:
        BedrockTextModel(client=Failing()).complete("s", "p")
    assert caught.value.retry == hint
    assert Failing.calls == 1


def test_the_bedrock_config_carries_the_read_timeout_and_the_attempts():
    config = bedrock_config(720.0, 4)
    assert config.read_timeout == 720.0
    assert config.connect_timeout == 10.0
    assert config.retries == {"mode": "standard", "total_max_attempts": 4}
    assert bedrock_config(600.0, 1).retries["total_max_attempts"] == 1  # the Lambda runtime's
    with pytest.raises(ValueError):
        bedrock_config(600.0, 0)


def test_a_model_without_a_client_builds_one_from_the_timeout_and_attempts(monkeypatch):
    import drac.clients.bedrock as module

    made = []
    monkeypatch.setattr(
        module, "make_bedrock_runtime", lambda region, config: made.append((region, config))
    )
    BedrockVisionModel(region="eu-west-1", read_timeout_s=900.0, attempts=3)
    BedrockTextModel("amazon.nova-lite-v1:0")
    [(region, config), (default_region, default_config)] = made
    assert region == "eu-west-1"
    assert (config.read_timeout, config.retries["total_max_attempts"]) == (900.0, 3)
    assert default_region is None
    assert (default_config.read_timeout, default_config.retries["total_max_attempts"]) == (
        600.0,
        DEFAULT_ATTEMPTS,
    )


def test_a_model_without_system_prompts_gets_the_system_text_in_the_user_turn():
    client = _runtime()
    with Stubber(client) as stub:
        stub.add_client_error(
            "converse",
            service_error_code="ValidationException",
            service_message="This model doesn't support system messages.",
            http_status_code=400,
        )
        stub.add_response(
            "converse",
            _answer("ok"),
            {
                "modelId": ANY,
                "inferenceConfig": ANY,
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"image": {"format": "png", "source": {"bytes": PNG_A}}},
                            {"text": "RULES\n\nprompt"},
                        ],
                    }
                ],
            },
        )
        assert _vision(client).convert("RULES", "prompt", [PNG_A]).text == "ok"


def test_an_answer_without_a_message_is_a_model_call_error():
    class Broken:
        def converse(self, **_kwargs):
            return {"output": {}}

    with pytest.raises(ModelCallError, match="without a message"):
        BedrockVisionModel(client=Broken()).convert("s", "p", [PNG_A])


def test_more_than_twenty_images_are_refused():
    with pytest.raises(ModelCallError, match="at most 20 images"):
        BedrockVisionModel(client=object()).convert("s", "p", [PNG_A] * 21)


def test_oversized_images_are_shrunk_within_bedrocks_limits():
    noisy = Image.merge("RGB", [Image.effect_noise((1200, 1200), 120)] * 3)
    buffer = io.BytesIO()
    noisy.save(buffer, "PNG", compress_level=0)
    big = buffer.getvalue()
    assert len(big) > BEDROCK_MAX_IMAGE_BYTES
    small = fit_png(big, max_bytes=BEDROCK_MAX_IMAGE_BYTES, max_side=8000)
    assert len(small) <= BEDROCK_MAX_IMAGE_BYTES
    assert Image.open(io.BytesIO(small)).size[0] <= 1200
    wide = io.BytesIO()
    Image.new("L", (9000, 10), 255).save(wide, "PNG")
    assert (
        Image.open(io.BytesIO(fit_png(wide.getvalue(), max_bytes=10**7, max_side=8000))).size[0]
        == 8000
    )


def test_images_within_limits_are_sent_unchanged():
    assert fit_png(PNG_A, max_bytes=BEDROCK_MAX_IMAGE_BYTES, max_side=8000) is PNG_A


def test_the_text_model_sends_a_text_only_converse_request():
    client = _runtime()
    model = BedrockTextModel("amazon.nova-lite-v1:0", client=client)
    with Stubber(client) as stub:
        stub.add_response(
            "converse",
            _answer('[["h1","p1"]]', 50, 7),
            {
                "modelId": "amazon.nova-lite-v1:0",
                "system": [{"text": "plan"}],
                "messages": [{"role": "user", "content": [{"text": "ids"}]}],
                "inferenceConfig": {"maxTokens": 2048, "temperature": 0.1},
            },
        )
        reply = model.complete("plan", "ids")
    assert reply.text == '[["h1","p1"]]' and reply.usage.output_tokens == 7
