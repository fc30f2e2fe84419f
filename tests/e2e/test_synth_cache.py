"""The synthesised-template cache: keyed by everything the template is built from, read back
instead of synthesising again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e import synth
from tests.e2e.synth import synth_digest, synthesise_stack


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small stand-in for the repository holding one file for each input the digest reads."""
    for name in synth.SYNTH_INPUTS:
        path = tmp_path / name
        if "." in Path(name).name:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(name)
        else:
            path.mkdir(parents=True)
            (path / "code.py").write_text(name)
    monkeypatch.setattr(synth, "ROOT", tmp_path)
    monkeypatch.setattr(synth, "SYNTH_CACHE", tmp_path / ".pytest_cache" / "drac-synth")
    return tmp_path


def test_every_input_changes_the_digest_and_compiled_files_do_not(root: Path) -> None:
    before = synth_digest({"batchSize": 2}, "us-east-1", "123456789012")
    assert synth_digest({"batchSize": 2}, "us-east-1", "123456789012") == before
    assert synth_digest({"batchSize": 4}, "us-east-1", "123456789012") != before
    assert synth_digest({"batchSize": 2}, "eu-west-1", "123456789012") != before
    (root / "src/drac/__pycache__").mkdir()
    (root / "src/drac/__pycache__/code.cpython-311.pyc").write_bytes(b"compiled")
    assert synth_digest({"batchSize": 2}, "us-east-1", "123456789012") == before
    seen = {before}
    for name in synth.SYNTH_INPUTS:
        path = root / name
        path = path if path.is_file() else path / "code.py"
        path.write_text(path.read_text() + " changed")
        digest = synth_digest({"batchSize": 2}, "us-east-1", "123456789012")
        assert digest not in seen, name
        seen.add(digest)


def test_a_template_built_from_the_same_inputs_is_read_back_without_a_synth(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tests.infrastructure.conftest as infrastructure

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("synthesised although the cache held the template")

    monkeypatch.setattr(infrastructure, "synthesise", refuse)
    resources = {"Queue": {"Type": "AWS::SQS::Queue"}}
    saved = {"stack_name": "Drac", "template": {"Resources": resources},
             "handler_dirs": {"Fn": "convert"}}
    synth.SYNTH_CACHE.mkdir(parents=True)
    digest = synth_digest({"batchSize": 2}, "us-east-1", "123456789012")
    (synth.SYNTH_CACHE / f"{digest}.json").write_text(json.dumps(saved))
    template = synthesise_stack({"batchSize": 2}, "us-east-1", "123456789012")
    assert (template.stack_name, template.template, template.handler_dirs) == (
        "Drac", saved["template"], {"Fn": "convert"})
    assert (template.region, template.account) == ("us-east-1", "123456789012")
    with pytest.raises(AssertionError, match="synthesised although"):
        synthesise_stack({"batchSize": 3}, "us-east-1", "123456789012")
