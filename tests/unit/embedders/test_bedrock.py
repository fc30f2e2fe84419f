import io
import json

import pytest

from drac.embedders.bedrock import TitanEmbedder
from drac.ports import ModelCallError


class FakeBedrock:
    """Stands in for boto3's bedrock-runtime client at the client boundary."""

    def __init__(self, dimension: int = 1024, fail_on: int | None = None):
        self.calls: list[dict] = []
        self.dimension = dimension
        self.fail_on = fail_on

    def invoke_model(self, **kwargs):
        self.calls.append(kwargs)
        if self.fail_on is not None and len(self.calls) - 1 == self.fail_on:
            raise RuntimeError("ThrottlingException")
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
    with pytest.raises(ModelCallError, match="text 1"):
        embedder.embed(["a", "b"])
    assert len(made) == 1


def test_titan_rejects_wrong_dimension_answers_and_settings():
    with pytest.raises(ValueError):
        TitanEmbedder(FakeBedrock(), dimensions=300)
    with pytest.raises(ModelCallError, match="1024-d"):
        TitanEmbedder(FakeBedrock(dimension=512)).embed(["x"])
