"""The local embedder's environment variables go through the settings model: read in one
place (EmbedderSettings, Settings.embedder), a bad value rejected with its variable named."""

from __future__ import annotations

import pytest

from drac.api.embedding import configured_embedder_spec, embedding_wanted
from drac.settings import EmbedderSettings, Settings, SettingsError


def test_the_embedder_variables_are_one_group_of_the_settings(tmp_path) -> None:
    env = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "DRAC_EMBEDDER": " bedrock ",
        "DRAC_EMBED_MODEL": "amazon.titan-embed-text-v2:0",
        "DRAC_EMBED_DIMENSIONS": "512",
        "DRAC_EMBED_AT_INGEST": "Off",
        "DRAC_EMBED_API_KEY": "   ",  # blank: unset
    }
    settings = Settings.load(env)
    assert settings.embedder == EmbedderSettings(
        spec="bedrock", model="amazon.titan-embed-text-v2:0", dimensions=512, at_ingest=False
    )
    assert "embedder" not in settings.to_json()  # never handed to the cloud's functions
    assert Settings.load({"XDG_CONFIG_HOME": str(tmp_path)}).embedder == EmbedderSettings()
    assert EmbedderSettings.from_env({"DRAC_EMBED_AT_INGEST": "yes please"}).at_ingest


def test_a_bad_embedder_variable_is_named() -> None:
    with pytest.raises(SettingsError, match="DRAC_EMBED_DIMENSIONS"):
        EmbedderSettings.from_env({"DRAC_EMBED_DIMENSIONS": "many"})


def test_the_api_reads_the_spec_and_the_ingest_switch_through_the_model(monkeypatch) -> None:
    monkeypatch.setenv("DRAC_EMBEDDER", "none")
    monkeypatch.setenv("DRAC_EMBED_AT_INGEST", "0")
    assert configured_embedder_spec() == "none"
    assert embedding_wanted(None) is False and embedding_wanted(True) is True
    monkeypatch.setenv("DRAC_EMBED_DIMENSIONS", "-4")
    with pytest.raises(SettingsError, match="DRAC_EMBED_DIMENSIONS"):
        configured_embedder_spec()
