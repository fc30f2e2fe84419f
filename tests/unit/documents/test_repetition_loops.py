"""A vision answer caught in a repetition loop (the same line or phrase until the token cap)
is detected, cut and asked again once with a repetition penalty; a page still looping
becomes an error marker, never indexed text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from drac.clients.http_json import Backoff
from drac.clients.openai_compat import LOOP_PENALTY, OpenAICompatVisionModel
from drac.documents.vision.batches import LOOP_REASON, convert_batch
from drac.documents.vision.loops import loop_start
from drac.models import TokenUsage
from drac.ports import MemoryLedger, ModelReply, VisionModel
from tests.unit.clients.test_clients_openai_compat import _ok
from tests.unit.clients.test_refusals_and_grammar import ScriptedServer

LOOP = "<!-- Page 1 -->\n\n# Fees\n\nThe fee is 10.\n\n<!-- Page 2 -->\n\n# Terms\n\n" + (
    "| Item | Price |\n" * 80
)
GOOD = "<!-- Page 1 -->\n\n# Fees\n\nThe fee is 10.\n\n<!-- Page 2 -->\n\n# Terms\n\nAll final."


@dataclass(frozen=True)
class Page:
    number: int
    png: bytes = b"png"
    text_chars: int = 0
    text_layer: str = ""


class LoopingVision(VisionModel):
    """Answers from a script; records which method each call used."""

    name = "looping"

    def __init__(self, first: str, careful: str) -> None:
        self.first, self.careful = first, careful
        self.calls: list[str] = []

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        self.calls.append("convert")
        return ModelReply(text=self.first, model="m", usage=TokenUsage(output_tokens=900),
                          finish_reason="length")  # fmt: skip

    def convert_carefully(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        self.calls.append("carefully")
        return ModelReply(text=self.careful, model="m", usage=TokenUsage(output_tokens=40))


@pytest.mark.parametrize(
    ("text", "looping"),
    [
        (LOOP, True),
        ("Intro. " + "and then the same words again " * 12, True),
        ("# A\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n", False),
        ("-" * 300, False),  # a rule, no letters: not a loop
        ("A normal page of text that says things once.\n" * 3, False),
    ],
)
def test_loops_are_detected_and_text_is_not(text: str, looping: bool) -> None:
    assert (loop_start(text) is not None) is looping


def test_a_loop_is_asked_again_with_a_penalty_and_the_good_answer_kept() -> None:
    vision, ledger = LoopingVision(LOOP, GOOD), MemoryLedger()
    result = convert_batch(vision, [Page(1), Page(2)], 2, "d1", ledger)
    assert vision.calls == ["convert", "carefully"]
    assert result.failure is None and "All final." in result.markdown
    assert [entry.outcome for entry in ledger.entries] == ["looping", "ok"]


def test_a_page_still_looping_becomes_an_error_marker_never_text() -> None:
    vision, ledger = LoopingVision(LOOP, LOOP), MemoryLedger()
    result = convert_batch(vision, [Page(1), Page(2)], 2, "d1", ledger)
    assert vision.calls == ["convert", "carefully"]
    assert result.failure is not None and LOOP_REASON in result.failure
    assert "The fee is 10." in result.markdown  # page 1, written before the loop, is kept
    assert result.markdown.count("| Item | Price |") == 0  # the looping page is not text
    assert "Page 2: conversion failed" in result.markdown
    assert [entry.outcome for entry in ledger.entries] == ["looping", "looping"]


def test_the_openai_client_asks_again_with_a_frequency_penalty() -> None:
    with ScriptedServer([_ok(GOOD), _ok(GOOD)]) as server:
        model = OpenAICompatVisionModel("v", base_url=server.url, backoff=Backoff(attempts=1))
        model.convert("s", "p", [b"png"])
        model.convert_carefully("s", "p", [b"png"])
    assert "frequency_penalty" not in server.bodies[0]
    assert server.bodies[1]["frequency_penalty"] == LOOP_PENALTY
