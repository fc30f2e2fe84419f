"""The conversion prompt: the method's rules for turning page images into Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources

PROMPT_RESOURCE = "conversion.md"


@cache
def conversion_system_prompt() -> str:
    """Return the system prompt stating every conversion rule of the method."""
    return resources.files("drac").joinpath("prompts", PROMPT_RESOURCE).read_text("utf-8").strip()


def page_marker(number: int) -> str:
    """Return the provenance comment that precedes page `number`'s content."""
    return f"<!-- Page {number} -->"


def batch_prompt(pages: Sequence[int], total_pages: int) -> str:
    """Return the user prompt for one batch: which document pages its images are, in order."""
    if not pages:
        raise ValueError("a batch needs at least one page")
    count = len(pages)
    listing = "\n".join(
        f"- image {index} is page {number}" for index, number in enumerate(pages, start=1)
    )
    markers = ", ".join(f"`{page_marker(number)}`" for number in pages)
    noun = "image" if count == 1 else "images"
    return (
        f"The {count} attached {noun} {'is page' if count == 1 else 'are pages'} "
        f"{_span(pages)} of a {total_pages}-page document, "
        f"in order:\n{listing}\n\n"
        f"Convert them to Markdown following every rule. Start each page's content with its "
        f"marker, exactly these {count} in this order: {markers}. "
        "Tables become one self-contained sentence per row naming the column headers; "
        "no Markdown table syntax; omit logos, charts and decorative images."
    )


def _span(pages: Sequence[int]) -> str:
    if len(pages) == 1:
        return str(pages[0])
    if list(pages) == list(range(pages[0], pages[0] + len(pages))):
        return f"{pages[0]} to {pages[-1]}"
    return ", ".join(str(number) for number in pages)
