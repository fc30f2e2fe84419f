"""Check (and minimally repair) a model's Markdown for one batch of pages."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from drac.documents.vision.prompt import page_marker

# Model output is untrusted text: every pattern must cost linear time. A marker's body may not
# run into another comment opener (an unclosed "<!-- Page N" made each later attempt scan to
# the end); the answer-wide code fence is unwrapped by `_unfenced`, not by one regex, because
# `\s*\n(.*?)\n\s*` backtracked cubically over blank lines (5,000 newlines took 149 s).
MARKER = re.compile(r"<!--\s*Page\s+(\d{1,9})\b(?:(?!<!--).)*?-->", re.IGNORECASE | re.DOTALL)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
# no two blank-space quantifiers may meet (`\s*\|?\s*` was quadratic in a line's indent)
_TABLE_RULE = re.compile(
    r"^[ \t]*(?:\|[ \t]*)?:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+(?:\|[ \t]*)?$"
)
_GRID_RULE = re.compile(r"^\s*\+[-=+]{3,}\+\s*$")
_FENCE_OPENING = re.compile(r"```[a-zA-Z]*[ \t]*\n")

_WORD = re.compile(r"\w{3,}")

ECHO_SHARE = 0.5
"""An answer of which at least this share of 4-word runs is in the prompt repeats the prompt."""
LAYER_SHARE = 0.2
"""A page answer of which fewer distinct words than this share are in the page's own text
layer is not that page (a transcription shares most of its words with the layer)."""
JUDGED_WORDS = 12
"""Distinct words a page answer needs before the text-layer guard judges it."""

TEXT_HEAVY_CHARS = 200
"""A page whose text layer has at least this many characters is text-heavy."""
SHORT_RATIO = 0.3
"""Output below this share of the text layer's length is suspiciously short."""


class BatchCheck(BaseModel):
    """What checking a batch's Markdown found; `ok` means every page marker is right."""

    model_config = ConfigDict(frozen=True)

    pages: tuple[int, ...]
    markers: tuple[int, ...]
    table_lines: int = 0
    short_pages: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the markers are exactly the batch's pages, in order."""
        return self.markers == self.pages


def clean_model_markdown(text: str) -> str:
    """Return a model answer without a wrapping code fence, with "\\n" newlines, trimmed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    fenced = _unfenced(text)
    return text if fenced is None else fenced.strip()


def _unfenced(text: str) -> str | None:
    """The body of a (stripped) answer that is one code fence as a whole, else None.

    The opening line is three backticks and an optional language name; the closing fence
    is the answer's last line, after at least one line break.
    """
    opening = _FENCE_OPENING.match(text)
    if opening is None or len(text) < opening.end() + 3 or not text.endswith("```"):
        return None
    body = text[opening.end() : -3]
    if "\n" not in body[len(body.rstrip()) :]:
        return None
    return body


def markers_in(markdown: str) -> list[int]:
    """Return the page numbers of the `<!-- Page N -->` markers in order of appearance."""
    return [int(match.group(1)) for match in MARKER.finditer(markdown)]


def page_texts(markdown: str) -> dict[int, str]:
    """Return each marked page's Markdown (text between its marker and the next; the pieces
    after a repeated marker joined as paragraphs)."""
    found = list(MARKER.finditer(markdown))
    pieces: dict[int, list[str]] = {}
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(markdown)
        piece = markdown[match.end() : end].strip()
        pieces.setdefault(int(match.group(1)), []).extend([piece] if piece else [])
    return {number: "\n\n".join(texts) for number, texts in pieces.items()}


def check_batch(
    markdown: str,
    pages: Sequence[int],
    text_chars: Mapping[int, int] | None = None,
) -> BatchCheck:
    """Check a batch's Markdown: markers for exactly `pages` in order, table syntax, short pages."""
    expected = tuple(pages)
    found = tuple(markers_in(markdown))
    warnings: list[str] = []
    missing = [number for number in expected if number not in found]
    unexpected = [number for number in found if number not in expected]
    if missing:
        warnings.append(f"page markers missing for pages {_numbers(missing)}")
    if unexpected:
        warnings.append(f"unexpected page markers for pages {_numbers(unexpected)}")
    if not missing and not unexpected and found != expected:
        warnings.append(f"page markers out of order or repeated: {_numbers(found)}")
    table_lines = sum(
        1
        for line in markdown.splitlines()
        if _TABLE_ROW.match(line) or _TABLE_RULE.match(line) or _GRID_RULE.match(line)
    )
    if table_lines:
        warnings.append(f"{table_lines} lines of Markdown table syntax (tables should be prose)")
    short: list[int] = []
    if text_chars:
        texts = page_texts(markdown) if found else {}
        for number in expected:
            layer = text_chars.get(number, 0)
            produced = len(texts.get(number, "")) if found else len(markdown) // len(expected)
            if layer >= TEXT_HEAVY_CHARS and produced < SHORT_RATIO * layer:
                short.append(number)
                warnings.append(
                    f"page {number}: output has {produced} characters but its text layer has "
                    f"{layer}; content may be missing"
                )
    return BatchCheck(
        pages=expected,
        markers=found,
        table_lines=table_lines,
        short_pages=tuple(short),
        warnings=tuple(warnings),
    )


def repair_markers(markdown: str, pages: Sequence[int]) -> tuple[str, list[str]]:
    """Return the Markdown with page markers made consistent with `pages`, and what was changed.

    A model that numbered its pages 1..k instead of the document's numbers is renumbered;
    markers for pages outside the batch are dropped; a missing first marker is prepended.
    """
    expected = list(pages)
    found = markers_in(markdown)
    notes: list[str] = []
    if found == expected:
        return markdown, notes
    if len(found) == len(expected) and len(set(found)) == len(found):
        iterator = iter(expected)
        markdown = MARKER.sub(lambda _match: page_marker(next(iterator)), markdown)
        notes.append(f"renumbered page markers {_numbers(found)} to {_numbers(expected)}")
    else:
        stray = [number for number in found if number not in expected]
        if stray:
            markdown = MARKER.sub(
                lambda match: match.group(0) if int(match.group(1)) in expected else "", markdown
            )
            notes.append(f"dropped page markers for pages outside the batch: {_numbers(stray)}")
    return _marker_first(markdown, expected[0], notes), notes


def _marker_first(markdown: str, first_page: int, notes: list[str]) -> str:
    """Make the Markdown start with the first page's marker when text precedes every marker."""
    first = MARKER.search(markdown)
    if first is not None and not markdown[: first.start()].strip():
        return markdown
    if first is not None and int(first.group(1)) == first_page:
        markdown = markdown[: first.start()] + markdown[first.end() :]
        notes.append(f"moved the marker of page {first_page} before its content")
    else:
        notes.append(f"added the missing marker for page {first_page}")
    return f"{page_marker(first_page)}\n\n{markdown.strip()}"


def _numbers(values: Sequence[int]) -> str:
    return ", ".join(str(value) for value in values)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def echo_share(answer: str, prompt: str) -> float:
    """The share of the answer's 4-word runs that occur in the prompt (0 for a short answer)."""
    words = _words(MARKER.sub(" ", answer))
    runs = {tuple(words[i : i + 4]) for i in range(len(words) - 3)}
    if len(runs) < 4:
        return 0.0
    prompt_words = _words(prompt)
    known = {tuple(prompt_words[i : i + 4]) for i in range(len(prompt_words) - 3)}
    return len(runs & known) / len(runs)


def layer_share(page_markdown: str, layer: str) -> float | None:
    """The share of a page answer's distinct words found in the page's text layer, or None
    when there is too little of either to judge."""
    words = set(_words(MARKER.sub(" ", page_markdown)))
    found = _words(layer)
    if len(words) < JUDGED_WORDS or len(layer.strip()) < TEXT_HEAVY_CHARS:
        return None
    letters = sum(1 for char in layer if not char.isspace())
    if sum(len(word) for word in found) < 0.5 * letters:
        return None  # a layer of glyph codes or symbols (a broken font map) proves nothing
    return len(words & set(found)) / len(words)


def foreign_pages(markdown: str, layers: Mapping[int, str]) -> dict[int, float]:
    """Pages whose answer shares almost nothing with their text layer, with the share found."""
    texts = page_texts(markdown)
    found: dict[int, float] = {}
    for number, layer in layers.items():
        share = layer_share(texts.get(number, ""), layer)
        if share is not None and share < LAYER_SHARE:
            found[number] = share
    return found
