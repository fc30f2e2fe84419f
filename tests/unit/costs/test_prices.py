import json

import pytest

from drac.costs.prices import ModelPrice, PriceTable, load_prices


def test_defaults_match_the_paper_and_bedrock():
    table = PriceTable()
    assert table.price_of("gpt-4.1").cost(1_000_000, 1_000_000) == pytest.approx(10.0)
    assert table.price_of("gemini-2.5-pro").cost(1_000_000, 0) == pytest.approx(1.25)
    assert table.price_of("amazon.titan-embed-text-v2:0").input_per_million == 0.02
    assert table.as_of == "2026-11-30"


def test_bedrock_ids_with_region_and_version_resolve_but_other_models_do_not():
    table = PriceTable()
    assert table.price_of("us.google.gemma-3-27b-it-v1:0") == table.models["google.gemma-3-27b-it"]
    assert table.price_of("gpt-4.1-mini") is None
    assert table.price_of("mystery") is None
    assert table.price_of("offline-vision").cost(10**9, 10**9) == 0.0


def test_paper_chunking_costs_at_gpt41_prices():
    gpt = PriceTable().price_of("gpt-4.1")
    assert gpt.cost(264_954, 11_714) == pytest.approx(0.624, abs=0.001)
    assert gpt.cost(325_855, 270_454) == pytest.approx(2.815, abs=0.001)
    gemini = PriceTable().price_of("gemini-2.5-pro")
    assert gemini.cost(264_954, 11_714) == pytest.approx(0.448, abs=0.001)


def test_overrides_from_toml_and_json(tmp_path):
    toml = tmp_path / "prices.toml"
    toml.write_text('as_of = "2027-01-01"\nagentic_model = "gemini-2.5-pro"\n'
                    '[models."gpt-4.1"]\ninput_per_million = 1.0\noutput_per_million = 4.0\n')
    table = load_prices(toml)
    assert table.as_of == "2027-01-01"
    assert table.agentic_model == "gemini-2.5-pro"
    assert table.price_of("gpt-4.1") == ModelPrice(input_per_million=1.0, output_per_million=4.0)
    assert table.price_of("gemini-2.5-pro").output_per_million == 10.0  # defaults kept
    js = tmp_path / "prices.json"
    js.write_text(json.dumps({"models": {"my-model": {"input_per_million": 3,
                                                      "output_per_million": 6}}}))
    assert load_prices(js).price_of("my-model").cost(1000, 1000) == pytest.approx(0.009)
    assert load_prices(None) == PriceTable()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"models": {"m": {"input_per_million": -1,
                                                "output_per_million": 0}}}))
    with pytest.raises(ValueError):
        load_prices(bad)
