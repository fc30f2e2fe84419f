import pytest

from drac.clients.bedrock import BedrockTextModel, BedrockVisionModel
from drac.clients.config import ModelSettings, make_text_model, make_vision_model
from drac.clients.openai_compat import OpenAICompatTextModel, OpenAICompatVisionModel
from drac.errors import DracError


def test_offline_is_the_default_and_makes_no_models(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = ModelSettings.load(env={})
    assert settings.backend == "offline"
    assert make_vision_model(settings) is None and make_text_model(settings) is None


def test_environment_variables_select_bedrock(monkeypatch):
    import drac.clients.bedrock as bedrock

    monkeypatch.setattr(bedrock, "make_bedrock_runtime", lambda region=None: ("client", region))
    env = {
        "DRAC_MODEL": "bedrock",
        "DRAC_PLANNER_MODEL_ID": "amazon.nova-pro-v1:0",
        "AWS_REGION": "us-east-1",
        "DRAC_BEDROCK_REGION": "us-west-2",
    }
    settings = ModelSettings.load(env=env, config_file=None)
    vision = make_vision_model(settings)
    text = make_text_model(settings)
    assert isinstance(vision, BedrockVisionModel) and isinstance(text, BedrockTextModel)
    assert vision.model_id == "google.gemma-3-27b-it" and vision.max_tokens == 8192
    assert text.model_id == "amazon.nova-pro-v1:0"
    assert settings.region == "us-west-2"
    assert vision._client == ("client", "us-west-2")


def test_a_toml_file_is_read_and_the_environment_wins(tmp_path):
    config = tmp_path / "drac.toml"
    config.write_text(
        '[model]\nbackend = "openai"\nopenai_model = "llava"\n'
        'openai_base_url = "http://gpu:8000/v1"\n'
    )
    settings = ModelSettings.load(env={"DRAC_OPENAI_MODEL": "gemma3:12b"}, config_file=config)
    vision = make_vision_model(settings)
    assert isinstance(vision, OpenAICompatVisionModel)
    assert vision.model == "gemma3:12b"
    assert vision.url == "http://gpu:8000/v1/chat/completions"
    assert isinstance(make_text_model(settings), OpenAICompatTextModel)


def test_openai_without_a_model_name_is_a_clear_error():
    settings = ModelSettings.load(env={"DRAC_MODEL": "openai"}, config_file=None)
    with pytest.raises(DracError, match="DRAC_OPENAI_MODEL"):
        make_vision_model(settings)


def test_bad_settings_are_clear_errors(tmp_path):
    with pytest.raises(DracError, match="invalid model settings"):
        ModelSettings.load(env={"DRAC_MODEL": "gpt-magic"})
    with pytest.raises(DracError, match="does not exist"):
        ModelSettings.load(env={}, config_file=tmp_path / "missing.toml")
    broken = tmp_path / "drac.toml"
    broken.write_text("[model\n")
    with pytest.raises(DracError, match="cannot read"):
        ModelSettings.load(env={}, config_file=broken)
