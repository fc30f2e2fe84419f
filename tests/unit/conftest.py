"""Shared fixtures of the core unit tests: real Markdown documents and a scripted text model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from drac.models import TokenUsage
from drac.ports import ModelCallError, ModelReply, TextModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "markdown"


@pytest.fixture
def markdown_fixtures() -> dict[str, str]:
    """The Markdown fixture documents by file name."""
    return {path.name: path.read_text("utf-8") for path in sorted(FIXTURES.glob("*.md"))}


Script = str | Exception | Callable[[str, str], str]


class ScriptedModel(TextModel):
    """A TextModel answering from a script: one item per call (text, exception, or function).

    The last item repeats once the script runs out; every call is recorded.
    """

    def __init__(self, script: Sequence[Script], name: str = "fake-planner") -> None:
        self.name = name
        self.script = list(script)
        self.calls: list[tuple[str, str]] = []

    def complete(self, system: str, prompt: str, max_tokens: int = 2048) -> ModelReply:
        item = self.script[min(len(self.calls), len(self.script) - 1)]
        self.calls.append((system, prompt))
        if isinstance(item, Exception):
            raise item
        text = item(system, prompt) if callable(item) else item
        return ModelReply(
            text=text,
            model=self.name,
            usage=TokenUsage(input_tokens=len(prompt) // 4, output_tokens=len(text) // 4),
            latency_ms=5.0,
        )


@pytest.fixture
def scripted_model() -> type[ScriptedModel]:
    """The ScriptedModel class, to build fakes with a per-test script."""
    return ScriptedModel


__all__ = ["FIXTURES", "ModelCallError", "ScriptedModel"]
