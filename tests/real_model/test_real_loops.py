"""A real model caught in a repetition loop: Gemma 3 270M, asked to go on with a table of one
repeated row, writes that row until the token cap. llama.cpp's server has no vision here, so
the page reaches the model as text; the rest is the vision path a page batch takes (the loop
guard, the careful second request, the error marker)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from real_server import RunningServer

from drac.clients.http_json import Backoff
from drac.clients.openai_compat import OpenAICompatVisionModel
from drac.documents.vision.batches import LOOP_REASON, convert_batch
from drac.documents.vision.loops import loop_start
from drac.ports import MemoryLedger, ModelReply, VisionModel
from tests.unit.documents.test_repetition_loops import Page

pytestmark = pytest.mark.real_model

PAGE_TEXT = "| Item | Price |\n|---|---|\n" + "| Tea | 1 |\n" * 4
"""The start of a page the model continues by repeating its last row (measured: it does)."""
SYSTEM = "Transcribe the page as Markdown."
"""A short instruction: a 270M base model given drac's whole conversion prompt echoes it."""


class PageAsText(VisionModel):
    """The real server's model, given the page as text instead of an image and a short
    instruction instead of drac's prompt; records each request's answer."""

    def __init__(self, inner: OpenAICompatVisionModel) -> None:
        self.inner, self.name = inner, inner.name
        self.answers: list[tuple[str, str]] = []

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        reply = self.inner.convert(SYSTEM, PAGE_TEXT, [])
        self.answers.append(("convert", reply.text))
        return reply

    def convert_carefully(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        reply = self.inner.convert_carefully(SYSTEM, PAGE_TEXT, [])
        self.answers.append(("carefully", reply.text))
        return reply


def test_a_real_loop_is_caught_asked_again_with_a_penalty_and_never_indexed(
    model_server: RunningServer,
) -> None:
    real = OpenAICompatVisionModel(
        "gemma3-270m", base_url=model_server.base_url, max_tokens=300, timeout_s=300,
        backoff=Backoff(attempts=2, base_s=0.2, max_s=1),
    )  # fmt: skip
    vision, ledger = PageAsText(real), MemoryLedger()
    result = convert_batch(vision, [Page(1)], 1, "d1", ledger)
    first = vision.answers[0][1]
    assert loop_start(first) is not None, first[:300]  # the real model looped
    assert [call for call, _ in vision.answers] == ["convert", "carefully"]
    assert ledger.entries[0].outcome == "looping"
    careful = vision.answers[1][1]
    if loop_start(careful) is None:  # the penalty broke the loop: that answer is the one kept
        assert ledger.entries[1].outcome != "looping"
    else:  # still looping: an error marker, never the repeated text
        assert result.failure is not None and LOOP_REASON in result.failure
    assert loop_start(result.markdown) is None
    assert result.markdown.count("| Tea | 1 |") < 4
