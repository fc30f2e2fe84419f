"""The KbTransform core with the LLM planner: the model is asked, the text stays verbatim."""

from __future__ import annotations

import json

import pytest

from drac.aws.stages.errors import KbTransformError
from drac.aws.stages.kb_transform import transform
from drac.strategies import resolve_strategy

MARKDOWN = "# Guide\n\n## Setup\n\nInstall the tool first.\n\n## Use\n\nRun it on a folder.\n"


def _event(key: str) -> dict:
    return {
        "bucketName": "kb-bucket",
        "inputFiles": [
            {
                "originalFileLocation": {"type": "S3", "s3_location": {"key": "guide.md"}},
                "fileMetadata": {"team": "docs"},
                "contentBatches": [{"key": key}],
            }
        ],
    }


def test_the_llm_planner_plans_and_the_chunks_stay_verbatim(scripted_model) -> None:
    body = json.dumps({"fileContents": [{"contentBody": MARKDOWN, "contentType": "TEXT"}]})
    model = scripted_model(['[["h2", "p1", "h3", "p2"]]'])
    strategy = resolve_strategy("default").model_copy(update={"planner": "llm"})
    result = transform(
        _event("k/1.json"), {"k/1.json": body.encode()}.__getitem__, strategy, text_model=model
    )
    assert model.calls, "the LLM planner was not asked"
    (entry,) = json.loads(result.writes["k/1.json.drac.json"])["fileContents"]
    assert (
        entry["contentBody"]
        == "Guide\n\n## Setup\n\nInstall the tool first.\n\n## Use\n\nRun it on a folder."
    )
    assert result.response["outputFiles"][0]["fileMetadata"] == {"team": "docs"}


def test_too_little_time_refuses_before_reading_anything(scripted_model) -> None:
    def read(key: str) -> bytes:
        raise AssertionError(f"read {key} with no time left")

    strategy = resolve_strategy("default").model_copy(update={"planner": "llm"})
    with pytest.raises(KbTransformError, match="under the 630000 ms kept"):
        transform(
            _event("k/1.json"),
            read,
            strategy,
            text_model=scripted_model(["[]"]),
            remaining_ms=lambda: 600_000,
            reserve_ms=630_000,
        )
