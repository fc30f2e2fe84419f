import io
import json

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from drac.embedders.bedrock import TitanEmbedder
from drac.errors import ModelCallError


def _client_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "refused"},
         "ResponseMetadata": {"HTTPStatusCode": status, "RetryAttempts": 0}},
        "InvokeModel",
    )


class FakeBedrock:
    """Stands in for boto3's bedrock-runtime client at the client boundary."""

    def __init__(self, dimension: int = 1024, fail_on: int | None = None,
                 error: Exception | None = None):
        self.calls: list[dict] = []
        self.dimension = dimension
        self.fail_on = fail_on
        self.error = error or _client_error("ThrottlingException", 429)

    def invoke_model(self, **kwargs):
        self.calls.append(kwargs)
        if self.fail_on is not None and len(self.calls) - 1 == self.fail_on:
            raise self.error
        text = json.loads(kwargs["body"])["inputText"]
        vector = [float(len(text))] + [0.0] * (self.dimension - 1)
        body = json.dumps({"embedding": vector, "inputTextTokenCount": len(text.split())})
        return {"body": io.BytesIO(body.encode())}


def test_titan_request_body_and_usage():
    client = FakeBedrock()
    embedder = TitanEmbedder(client)
    vectors = embedder.embed(["hello world", "abc"])
    assert [v[0] for v in vectors] == [11.0, 3.0]
    assert len(vectors[0]) == 1024
    first = client.calls[0]
    assert first["modelId"] == "amazon.titan-embed-text-v2:0"
    assert first["contentType"] == "application/json"
    assert first["accept"] == "application/json"
    assert json.loads(first["body"]) == {"inputText": "hello world", "dimensions": 1024,
                                         "normalize": True}
    assert embedder.usage.input_tokens == 3
    assert embedder.name == "amazon.titan-embed-text-v2:0"


def test_titan_client_created_lazily_and_errors_are_model_call_errors():
    made: list[FakeBedrock] = []

    def factory():
        made.append(FakeBedrock(dimension=256, fail_on=1))
        return made[-1]

    embedder = TitanEmbedder(client_factory=factory, dimensions=256)
    assert made == []
    with pytest.raises(ModelCallError, match="text 1: ThrottlingException") as caught:
        embedder.embed(["a", "b"])
    assert len(made) == 1
    assert caught.value.retry == "throttled"


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        (_client_error("ThrottlingException", 429), "throttled"),
        (_client_error("ServiceQuotaExceededException", 400), "throttled"),
        (_client_error("ModelNotReadyException", 429), "transient"),
        (_client_error("InternalServerException", 500), "transient"),
        (ReadTimeoutError(endpoint_url="https://bedrock"), "transient"),
        (_client_error("ValidationException", 400), None),
        (_client_error("AccessDeniedException", 403), None),
    ],
)
def test_titan_errors_are_classified_like_the_converse_clients(error, hint):
    with pytest.raises(ModelCallError) as caught:
        TitanEmbedder(FakeBedrock(fail_on=0, error=error)).embed(["a"])
    assert caught.value.retry == hint


def test_titan_default_client_uses_the_bedrock_config(monkeypatch):
    import drac.embedders.bedrock as module

    made = []
    monkeypatch.setattr(module, "make_bedrock_runtime",
                        lambda region, config: made.append((region, config)) or FakeBedrock())
    TitanEmbedder(region="eu-west-1", attempts=2).embed(["x"])
    [(region, config)] = made
    assert region == "eu-west-1"
    assert config.retries == {"mode": "standard", "total_max_attempts": 2}
    assert config.read_timeout == 60.0


def test_titan_rejects_wrong_dimension_answers_and_settings():
    with pytest.raises(ValueError):
        TitanEmbedder(FakeBedrock(), dimensions=300)
    with pytest.raises(ModelCallError, match="1024-d"):
        TitanEmbedder(FakeBedrock(dimension=512)).embed(["x"])
