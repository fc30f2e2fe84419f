"""A scripted vision model whose answer is a function of each page image alone, so a test
knows the right Markdown of every page and can count what was sent to the model."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence

from pdfs import Text, make_pdf

from drac.models import TokenUsage
from drac.ports import ModelReply, VisionModel


def page_answer(number: int, png: bytes) -> str:
    """The Markdown the model writes for one page: a heading and two paragraphs named after
    the image's digest (a changed image gets a changed answer)."""
    seen = hashlib.sha256(png).hexdigest()[:12]
    return (
        f"<!-- Page {number} -->\n\n# Section {seen}\n\nFirst paragraph of {seen}.\n\n"
        f"Second paragraph of {seen}."
    )


class ImageVision(VisionModel):
    """Answers every page with `page_answer`; keeps the page numbers of every call."""

    name = "image-scripted"

    def __init__(self) -> None:
        self.calls: list[list[int]] = []
        self.lock = threading.Lock()

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        pages = [int(n) for n in re.findall(r"image \d+ is page (\d+)", prompt)]
        with self.lock:
            self.calls.append(pages)
        text = "\n\n".join(page_answer(n, png) for n, png in zip(pages, images, strict=True))
        return ModelReply(
            text=text, model=self.name, usage=TokenUsage(input_tokens=1000, output_tokens=200)
        )


def page_lines(label: str) -> list[Text]:
    """The lines of one test page."""
    return [Text(f"{label} heading", 72, 720, 16), Text(f"{label} body text.", 72, 690)]


def document_pdf(labels: Sequence[str]) -> bytes:
    """A PDF with one page per label (the label is printed on it)."""
    return make_pdf([(612, 792, page_lines(label)) for label in labels])


def labels(count: int) -> list[str]:
    """Distinct page labels."""
    return [f"Page {n}" for n in range(1, count + 1)]
