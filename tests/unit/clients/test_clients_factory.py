import pytest

from drac.clients import DEFAULT_ATTEMPTS
from drac.clients.bedrock import BedrockTextModel, BedrockVisionModel
from drac.clients.factory import make_text_model, make_vision_model
from drac.clients.openai_compat import OpenAICompatTextModel, OpenAICompatVisionModel
from drac.errors import DracError
from drac.settings import Settings


@pytest.fixture()
def made_clients(monkeypatch):
    """Records the (region, botocore Config) of every bedrock-runtime client made."""
    import drac.clients.bedrock as bedrock

    made: list = []
    monkeypatch.setattr(
        bedrock, "make_bedrock_runtime", lambda region, config: made.append((region, config))
    )
    return made


def test_offline_is_the_default_and_makes_no_models(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings.load(env={})
    assert settings.models.backend == "offline"
    assert make_vision_model(settings) is None and make_text_model(settings) is None


def test_environment_variables_select_bedrock(made_clients, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {
        "DRAC_MODEL": "bedrock",
        "DRAC_PLANNER_MODEL_ID": "amazon.nova-pro-v1:0",
        "AWS_REGION": "us-east-1",
        "DRAC_BEDROCK_REGION": "us-west-2",
        "DRAC_MODEL_TIMEOUT_S": "720",
    }
    settings = Settings.load(env=env)
    vision = make_vision_model(settings)
    text = make_text_model(settings)
    assert isinstance(vision, BedrockVisionModel) and isinstance(text, BedrockTextModel)
    assert vision.model_id == "google.gemma-3-27b-it" and vision.max_tokens == 8192
    assert text.model_id == "amazon.nova-pro-v1:0"
    for region, config in made_clients:
        assert region == "us-west-2"
        assert config.read_timeout == 720
        assert config.retries == {"mode": "standard", "total_max_attempts": DEFAULT_ATTEMPTS}


def test_the_caller_chooses_the_attempts(made_clients):
    settings = Settings(backend="bedrock")
    make_vision_model(settings, attempts=1)
    [(_, config)] = made_clients
    assert config.retries["total_max_attempts"] == 1
    openai = make_text_model(Settings(backend="openai", openai_model="qwen"), attempts=2)
    assert isinstance(openai, OpenAICompatTextModel)
    assert openai._http.backoff.attempts == 2


def test_a_toml_file_is_read_and_the_environment_wins(tmp_path):
    config = tmp_path / "drac.toml"
    config.write_text(
        '[model]\nbackend = "openai"\nopenai_model = "llava"\n'
        'openai_base_url = "http://gpu:8000/v1"\nmodel_timeout_s = 120\n'
    )
    settings = Settings.load(env={"DRAC_OPENAI_MODEL": "gemma3:12b"}, config_file=config)
    vision = make_vision_model(settings)
    assert isinstance(vision, OpenAICompatVisionModel)
    assert vision.model == "gemma3:12b"
    assert vision.url == "http://gpu:8000/v1/chat/completions"
    assert vision._http._http.timeout.read == 120
    assert isinstance(make_text_model(settings), OpenAICompatTextModel)


def test_openai_without_a_model_name_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings.load(env={"DRAC_MODEL": "openai"})
    with pytest.raises(DracError, match="DRAC_OPENAI_MODEL"):
        make_vision_model(settings)


def test_bad_settings_are_clear_errors(tmp_path):
    with pytest.raises(DracError, match="backend"):
        Settings.load(env={"DRAC_MODEL": "gpt-magic"}, config_file=None)
    with pytest.raises(DracError, match="does not exist"):
        Settings.load(env={}, config_file=tmp_path / "missing.toml")


def test_every_backend_the_settings_may_name_is_registered_and_resolves(made_clients):
    from typing import get_args

    from drac.clients.factory import BACKENDS, backend_named
    from drac.settings import ModelSettings

    names = get_args(ModelSettings.model_fields["backend"].annotation)
    assert set(BACKENDS) == set(names)
    made = {
        name: (backend_named(name).vision_model(Settings(backend=name, openai_model="q"), 1),
               backend_named(name).text_model(Settings(backend=name, openai_model="q"), 1))
        for name in names
    }  # fmt: skip
    assert made["offline"] == (None, None)
    assert isinstance(made["bedrock"][0], BedrockVisionModel)
    assert isinstance(made["bedrock"][1], BedrockTextModel)
    assert isinstance(made["openai"][0], OpenAICompatVisionModel)
    assert isinstance(made["openai"][1], OpenAICompatTextModel)


def test_an_unknown_backend_fails_naming_the_known_ones():
    from drac.clients.factory import backend_named

    with pytest.raises(ValueError, match=r"unknown model backend 'azure' \(use 'offline', "):
        backend_named("azure")
