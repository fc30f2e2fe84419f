import io

import boto3
import pytest
from botocore.stub import ANY, Stubber
from PIL import Image

from drac.clients.bedrock import DEFAULT_MODEL_ID, BedrockTextModel, BedrockVisionModel
from drac.clients.images import BEDROCK_MAX_IMAGE_BYTES, fit_png
from drac.clients.retry import RetryPolicy
from drac.ports import ModelCallError

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


def _vision(client, sleeps=None, **kwargs):
    return BedrockVisionModel(
        client=client,
        retry=RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=8.0),
        sleep=(sleeps.append if sleeps is not None else lambda _s: None),
        **kwargs,
    )


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
    ("code", "status"),
    [
        ("ThrottlingException", 429),
        ("ServiceUnavailableException", 503),
        ("ModelTimeoutException", 408),
        ("InternalServerException", 500),
    ],
)
def test_retryable_errors_are_retried_with_jittered_backoff(code, status):
    client = _runtime()
    sleeps: list[float] = []
    with Stubber(client) as stub:
        stub.add_client_error("converse", service_error_code=code, http_status_code=status)
        stub.add_client_error("converse", service_error_code=code, http_status_code=status)
        stub.add_response("converse", _answer("done"))
        reply = _vision(client, sleeps).convert("s", "p", [PNG_A])
        stub.assert_no_pending_responses()
    assert reply.text == "done"
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 1.0 and 0 <= sleeps[1] <= 2.0  # full jitter under the doubling cap


def test_throttling_beyond_the_attempts_raises_model_call_error():
    client = _runtime()
    sleeps: list[float] = []
    with Stubber(client) as stub:
        for _ in range(4):
            stub.add_client_error(
                "converse", service_error_code="ThrottlingException", http_status_code=429
            )
        with pytest.raises(ModelCallError, match=r"failed after 4 attempts.*ThrottlingException"):
            _vision(client, sleeps).convert("s", "p", [PNG_A])
    assert len(sleeps) == 3


def test_a_validation_error_is_not_retried():
    client = _runtime()
    with Stubber(client) as stub:
        stub.add_client_error(
            "converse",
            service_error_code="AccessDeniedException",
            service_message="no access to the model",
            http_status_code=403,
        )
        with pytest.raises(ModelCallError, match="AccessDeniedException: no access"):
            _vision(client).convert("s", "p", [PNG_A])
        stub.assert_no_pending_responses()


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
    model = BedrockTextModel("amazon.nova-lite-v1:0", client=client, sleep=lambda _s: None)
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


def test_no_client_is_created_at_import_and_one_is_made_lazily(monkeypatch):
    import drac.clients.bedrock as module

    made = []
    monkeypatch.setattr(
        module, "make_bedrock_runtime", lambda region=None: made.append(region) or object()
    )
    BedrockVisionModel(region="eu-west-1")
    assert made == ["eu-west-1"]
