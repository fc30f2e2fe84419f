"""Check a model's page Markdown against the page's own text (its text layer, or OCR rows).

A transcription holds the page's numbers, dates, amounts, codes and names and no others.
The checker lists, per page:

- *unsupported* tokens: written by the model, nowhere on the page (an invented value);
- *missing* tokens: on the page, nowhere in the model's page (a dropped row or line);
- *suspect merges*: table rows (pipe rows, or the method's one-sentence rows) whose values are
  on the page but not together: they come from two rows of the page.

Both sides are normalised the same way (Unicode compatibility forms, case, dashes, quotes,
currency signs, thousand separators, list markers, Markdown syntax, hyphenation at line ends),
so a faithful conversion flags nothing. Pure functions: the page text is read by pdfium in
the contained worker when the pages are rendered (`drac.documents.pdf.render`), or by OCR.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from drac.documents.vision.check import MARKER, page_texts
from drac.models import PageEscalation, VerificationCounts

MAX_LISTED = 40
"""Tokens (or rows) listed per page and kind; counts are always complete."""
ROW_SHOWN_CHARS = 160
"""Characters of a suspect row kept for display."""
NEAR_LINES = 12
"""A row's values further apart than this many text-layer lines do not belong together."""
MAX_ROW_CHARS = 300
"""A line of prose longer than this is a paragraph, not one of the method's row sentences."""
FURNITURE_CHARS = 40
"""A line this short that is only a number ("- 3 -", "Page 3 of 9") is a page number."""
MAX_ROWS = 500
"""Rows of one page checked for merges (a page holds far fewer)."""
MAX_PLACES = 16
"""Lines holding a row's values tried as the row's place on the page."""
JUDGED_CHARS = 20
"""A page text shorter than this (a blank page, a lone page number) is not judged."""

PageSource = Literal["text layer", "ocr"]

# Model output and text layers are untrusted: every pattern below is linear.
_IMAGE = re.compile(r"!\[[^\]\n]{0,500}\]\([^)\n]{0,2000}\)")
_LINK = re.compile(r"\[([^\]\n]{0,500})\]\([^)\n]{0,2000}\)")
_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,300}>")
_LIST_MARKER = re.compile(
    r"^[ \t]*(?:[-*+\u2022\u25aa\u25cf\u2013\u00b7]|\(?\d{1,3}[.)]|[a-zA-Z][.)])[ \t]+"
)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_RULE_LINE = re.compile(r"^[ \t|:+=-]*$")
_DIGIT_SPACE = re.compile(r"(?<=\d)[\u00a0\u202f\u2009\u2007](?=\d{3}\b)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{2,3}(?!\d))")  # 1,234 and 1,24,999 (lakh)
_LIGATURE_GLYPH = re.compile(r"(?<![^\W\d_])(?:ffi|ffl|ff|fi|fl)(?=\d)")
"""A currency sign a font maps to a ligature's code ("ffi3499" for a rupee sign)."""
_GLUED = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})|(?<=[^\W\d_]{3})(?=\d)|(?=[$€£¥₹])"
)
"""Where two cells a text layer runs together split ("Storage/RAMBattery", "Gujarat3rd")."""
_HYPHEN_BREAK = re.compile(r"(?<=[^\W\d_])[-\u00ad\x02][ \t]*\n[ \t]*(?=[^\W\d_])")
_PAGE_FURNITURE = re.compile(
    r"^(?:page[ \t]+)?[-\u2013\u2014 \t]*\d{1,5}"
    r"(?:[ \t]*(?:/|of)[ \t]*\d{1,5})?[-\u2013\u2014 \t]*$",
    re.IGNORECASE,
)
_DASHES = str.maketrans(
    {
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
        "\u2212": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
        "\u00ad": "", "\x02": "", "\u200b": "", "\ufffe": "",
    }
)  # fmt: skip
_BRACKETS = str.maketrans({"(": " ", ")": " ", "[": " ", "]": " ", "{": " ", "}": " "})
_CURRENCY = "$€£¥₹₩₽¢"
_EDGE = "\"'`()[]{}<>.,;:!?*_~|\\#=" + _CURRENCY
_PARTS = re.compile(r"[-/]")
_GLUED_NUMBER = re.compile(r"\d[\d,]*\d")
GLUED_PART = 4
"""Digits each of two amounts run together must have to be told apart."""
MAX_GLUED_DIGITS = 24
"""Longer digit runs are not split into two amounts (each cut is tried)."""
_PIECES = re.compile(r"\d[\d.,:/-]*|[^\W\d_]+")


class PageVerification(BaseModel):
    """What checking one page's Markdown against the page's own text found."""

    model_config = ConfigDict(frozen=True)

    page: int
    source: PageSource = "text layer"
    unsupported: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    suspect_rows: tuple[str, ...] = ()
    counts: dict[str, int] = Field(default_factory=dict)
    """Complete counts ("unsupported", "missing", "suspect_rows"): the tuples are capped."""

    @property
    def flags(self) -> int:
        """Everything the page was flagged for."""
        return sum(self.counts.values())


class VerificationSummary(BaseModel):
    """A document's verification: every checked page (flagged or not) and what was held back."""

    model_config = ConfigDict(frozen=True)

    pages: tuple[PageVerification, ...] = ()
    held_back: tuple[int, ...] = ()
    threshold: int | None = None
    escalations: tuple[PageEscalation, ...] = ()  # pages a second model converted again

    @property
    def checked(self) -> int:
        """Pages compared with their own text."""
        return len(self.pages)

    def total(self, kind: str) -> int:
        """The document's count of one kind ("unsupported", "missing", "suspect_rows")."""
        return sum(page.counts.get(kind, 0) for page in self.pages)

    @property
    def flagged(self) -> tuple[PageVerification, ...]:
        """The pages with at least one flag."""
        return tuple(page for page in self.pages if page.flags)

    def counts(self) -> VerificationCounts:
        """The summary in counts, as the document's record keeps it."""
        return VerificationCounts(
            pages_checked=self.checked,
            flagged_pages=len(self.flagged),
            unsupported=self.total("unsupported"),
            missing=self.total("missing"),
            suspect_rows=self.total("suspect_rows"),
            held_back=len(self.held_back),
        )


def verify_page(
    page: int, markdown: str, page_text: str, source: PageSource = "text layer"
) -> PageVerification | None:
    """Compare one page's Markdown with the page's own text; None when the page has too
    little text to judge (a scan without OCR, a blank page)."""
    lines = page_lines(page_text)
    if sum(len(line) for line in lines) < JUDGED_CHARS:
        return None
    page_tokens = [_tokens(line) for line in lines]
    page_vocab = _vocabulary(token for tokens in page_tokens for token in tokens)
    units = markdown_units(markdown)
    model_tokens = [token for unit in units for token in _tokens(unit.text)]
    model_vocab = _vocabulary(model_tokens)
    unsupported = _unique(t for t in model_tokens if _salient(t) and not _known(t, page_vocab))
    missing = _unique(
        token
        for line, tokens in zip(lines, page_tokens, strict=True)
        if not (len(line) <= FURNITURE_CHARS and _PAGE_FURNITURE.match(line))
        for token in tokens
        if _salient(token, strict=True) and not _known(token, model_vocab)
    )
    index = PageIndex(page_tokens)
    rows = [unit for unit in units if unit.is_row][:MAX_ROWS]
    suspect = [unit.shown for unit in rows if _suspect_row(unit, index, page_vocab)]
    return PageVerification(
        page=page,
        source=source,
        unsupported=tuple(unsupported[:MAX_LISTED]),
        missing=tuple(missing[:MAX_LISTED]),
        suspect_rows=tuple(suspect[:MAX_LISTED]),
        counts={
            "unsupported": len(unsupported),
            "missing": len(missing),
            "suspect_rows": len(suspect),
        },
    )


def verify_markdown(
    markdown: str, page_text: Mapping[int, str], source: Mapping[int, PageSource] | None = None
) -> list[PageVerification]:
    """Verify every marked page of a batch's Markdown that has text to compare with (pages
    that became error markers are not judged)."""
    texts = page_texts(markdown)
    failed = {int(m.group(1)) for m in MARKER.finditer(markdown) if "failed" in m.group(0)}
    found = []
    for number in sorted(texts):
        if number in failed or number not in page_text:
            continue
        checked = verify_page(
            number, texts[number], page_text[number], (source or {}).get(number, "text layer")
        )
        if checked is not None:
            found.append(checked)
    return found


def summarise(
    pages: Iterable[PageVerification], held_back: Sequence[int] = (), threshold: int | None = None
) -> VerificationSummary:
    """The document's summary from its pages' verifications, in page order."""
    ordered = tuple(sorted(pages, key=lambda page: page.page))
    return VerificationSummary(pages=ordered, held_back=tuple(held_back), threshold=threshold)


def hold_back(
    markdown: str, summary: VerificationSummary, threshold: int | None
) -> tuple[str, list[str], VerificationSummary]:
    """Replace the pages flagged more than `threshold` times by error markers (the document
    becomes PARTIAL as for a failed batch); return the Markdown, the failures and the summary
    naming the held-back pages. `threshold` None holds nothing back."""
    if threshold is None:
        return markdown, [], summary
    over = [page for page in summary.pages if page.flags > threshold]
    if not over:
        return markdown, [], summary.model_copy(update={"threshold": threshold})
    failures: list[str] = []
    for page in over:
        reason = (
            f"held back: {page.flags} verification flags against the page's {page.source}, "
            f"more than {threshold}"
        )
        markdown = _replace_page(markdown, page.page, reason)
        failures.append(f"page {page.page}: conversion failed: {reason}")
    held = tuple(page.page for page in over)
    update = {"held_back": held, "threshold": threshold}
    return markdown, failures, summary.model_copy(update=update)


def _replace_page(markdown: str, number: int, reason: str) -> str:
    """The Markdown with page `number`'s content replaced by its error marker."""
    found = list(MARKER.finditer(markdown))
    for index, match in enumerate(found):
        if int(match.group(1)) != number:
            continue
        # up to the next page's marker: a repeated marker of this page is this page too
        later = [m.start() for m in found[index + 1 :] if int(m.group(1)) != number]
        end = later[0] if later else len(markdown)
        marker = f"<!-- Page {number}: conversion failed: {reason} -->"
        tail = "\n\n" if end < len(markdown) else "\n"
        return markdown[: match.start()] + marker + tail + markdown[end:].lstrip("\n")
    return markdown


def summary_line(summary: VerificationSummary) -> str | None:
    """One warning line for the record ("verification: ..."), None when nothing was flagged."""
    flagged = summary.flagged
    if not flagged:
        return None
    parts = [
        f"{summary.total('unsupported')} unsupported",
        f"{summary.total('missing')} missing",
        f"{summary.total('suspect_rows')} suspect merged rows",
    ]
    pages = ", ".join(str(page.page) for page in flagged[:20])
    line = f"verification: {'; '.join(parts)} on pages {pages}"
    if summary.held_back:
        line += f" (held back: pages {', '.join(map(str, summary.held_back))})"
    return line


# -- the page's text -------------------------------------------------------------------------


def page_lines(text: str) -> list[str]:
    """The page text's lines, normalised, with words broken at a line end joined again."""
    text = _normal(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _HYPHEN_BREAK.sub("", text)
    return [line.strip() for line in text.split("\n") if line.strip()]


class MarkdownUnit(BaseModel):
    """A line of a page's Markdown reduced to its text; rows know their cells."""

    model_config = ConfigDict(frozen=True)

    text: str
    shown: str
    is_row: bool = False
    cells: tuple[str, ...] = ()


def markdown_units(markdown: str) -> list[MarkdownUnit]:
    """The page Markdown's text lines without Markdown syntax; pipe rows split into cells;
    the separator and header of a pipe table are left out of the rows."""
    markdown = _without_comments(markdown)
    markdown = _IMAGE.sub(" ", markdown)
    markdown = _LINK.sub(r"\1", markdown)
    markdown = _TAG.sub(" ", markdown)
    markdown = _HYPHEN_BREAK.sub("", _normal(html.unescape(markdown)))
    units: list[MarkdownUnit] = []
    previous_row = False
    for raw in markdown.split("\n"):
        line = raw.strip()
        if not line:
            previous_row = False
            continue
        if line.startswith("|") and line.endswith("|") and len(line) > 1:
            if _RULE_LINE.match(line):
                if units and units[-1].is_row:  # the row above was the header
                    units[-1] = units[-1].model_copy(update={"is_row": False})
                previous_row = True
                continue
            cells = tuple(
                cell.strip() for cell in line.strip("|").replace("\\|", "\u2502").split("|")
            )
            text = " ".join(_strip_line(cell) for cell in cells)
            units.append(
                MarkdownUnit(text=text, shown=line[:ROW_SHOWN_CHARS], is_row=True, cells=cells)
            )
            previous_row = True
            continue
        previous_row = False
        text = _strip_line(line)
        row = len(text) <= MAX_ROW_CHARS and len(_values(_tokens(text))) >= 2
        units.append(MarkdownUnit(text=text, shown=line[:ROW_SHOWN_CHARS], is_row=row))
    del previous_row
    return units


def _without_comments(text: str) -> str:
    """The text with its HTML comments (page markers) blanked; an unclosed one runs to the
    end (one scan: a regex retried at every unclosed opener was quadratic)."""
    parts: list[str] = []
    position = 0
    while (start := text.find("<!--", position)) >= 0:
        parts.append(text[position:start])
        end = text.find("-->", start + 4)
        if end < 0:
            return " ".join(parts)
        parts.append(" ")
        position = end + 3
    parts.append(text[position:])
    return "".join(parts)


def _strip_line(line: str) -> str:
    line = _QUOTE.sub("", line)
    line = _HEADING.sub("", line)
    line = _LIST_MARKER.sub("", line)
    return line.replace("**", " ").replace("__", " ").replace("`", " ")


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_DASHES)
    text = _DIGIT_SPACE.sub("", text)
    return "".join(ch if ch in "\n\t" or ch.isprintable() else " " for ch in text)


# -- tokens ----------------------------------------------------------------------------------


def _tokens(line: str) -> list[str]:
    """The line's tokens, normalised: case folded, edges' punctuation and currency signs off,
    thousand separators removed, a leading list marker dropped."""
    line = _LIST_MARKER.sub("", line)
    found = []
    line = _GLUED.sub(" ", _LIGATURE_GLYPH.sub("", line)).translate(_BRACKETS)
    for raw in line.split():
        token = raw.strip(_EDGE)
        if token.endswith("'s"):
            token = token[:-2]
        token = token.rstrip("%").strip(_EDGE)
        if not token:
            continue
        if any(ch.isdigit() for ch in token):
            token = _THOUSANDS.sub("", token)
        # the casefolded form is compared; the first letter's case is kept apart
        found.append(("^" if token[0].isupper() else "") + token.casefold())
    return found


def _bare(token: str) -> str:
    return token[1:] if token.startswith("^") else token


def _salient(token: str, *, strict: bool = False) -> bool:
    """Numbers, dates, amounts, codes and capitalised words (strict: numbers of two
    characters or more, since a lone digit on a page is usually a marker or a footnote)."""
    bare = _bare(token)
    if any(ch.isdigit() for ch in bare):
        return not strict or len(bare) >= 2
    return token.startswith("^") and len(bare) >= 2 and any(ch.isalpha() for ch in bare)


def _values(tokens: Sequence[str]) -> list[str]:
    return [token for token in tokens if any(ch.isdigit() for ch in token)]


def _vocabulary(tokens: Iterable[str]) -> set[str]:
    vocab: set[str] = set()
    for token in tokens:
        bare = _bare(token)
        vocab.add(bare)
        vocab.update(part for part in _PARTS.split(bare) if part)
        vocab.add(bare.replace("-", ""))
        vocab.update(_PIECES.findall(bare))
        digits = _glued_digits(bare)
        for cut in range(GLUED_PART, len(digits) - GLUED_PART + 1) if digits else ():
            vocab.update((digits[:cut], digits[cut:]))
    return vocab


def _glued_digits(token: str) -> str:
    """The digits of a token that may be two amounts run together (a lost currency glyph
    between them: "1,37,9981,19,999"), else ""."""
    if not _GLUED_NUMBER.fullmatch(token):
        return ""
    digits = token.replace(",", "").replace(".", "")
    return digits if 2 * GLUED_PART <= len(digits) <= MAX_GLUED_DIGITS else ""


def _known(token: str, vocab: set[str]) -> bool:
    bare = _bare(token)
    if bare in vocab or bare.replace("-", "") in vocab:
        return True
    digits = _glued_digits(bare)
    if digits and any(
        digits[:cut] in vocab and digits[cut:] in vocab
        for cut in range(GLUED_PART, len(digits) - GLUED_PART + 1)
    ):
        return True
    parts = [part for part in _PARTS.split(bare) if part]
    if len(parts) > 1 and all(part in vocab for part in parts):
        return True
    # a code glued to a glyph a font maps to letters ("ff12-18" for a bullet): its number and
    # its words of three letters or more must be known
    pieces = [piece for piece in _PIECES.findall(bare) if piece[0].isdigit() or len(piece) >= 3]
    return (
        len(pieces) < len(_PIECES.findall(bare))
        and all(piece in vocab or _known(piece, vocab) for piece in pieces if piece != bare)
        and bool(pieces)
    )


def _unique(tokens: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(_bare(token) for token in tokens))


# -- rows ------------------------------------------------------------------------------------


def _suspect_row(unit: MarkdownUnit, page: PageIndex, vocab: set[str]) -> bool:
    """True when the row's values are on the page but do not stand together.

    The row's place on the page is a line holding its values and the lines around it made
    mostly of the row's own words (a wrapped cell), the place holding most of the row. A value
    found only outside that place, on a line keeping values the row left out, comes from
    another row; a row whose cells each hold values of two lines found nowhere together is
    two rows written as one.
    """
    words = {_bare(token) for token in _tokens(unit.text)}
    row = {_bare(t) for t in _tokens(unit.text) if _salient(t) and _known(t, vocab)}
    if len(row) < 2 or not _values(list(row)):
        return False
    lines = page.lines
    # the lines of its rarest values first: a common value ("6 months") is on every row
    candidates: list[int] = []
    for value in sorted(_values(list(row)), key=lambda value: len(page.where(value))):
        candidates.extend(page.where(value)[: MAX_PLACES - len(candidates)])
        if len(candidates) >= MAX_PLACES:
            break
    best, region, score = 0, [0], (-1, -1)
    for index in sorted(set(candidates)):
        around = _region(lines, index, words)
        held = set().union(*(lines[i] for i in around)) & row
        if (len(held), len(row & lines[index])) > score:
            score, best, region = (len(held), len(row & lines[index])), index, around
    covered = set().union(*(lines[i] for i in region))
    for token in row - covered:
        near = page.near(token, best, NEAR_LINES)
        if not near:
            continue  # far away or only a piece of a code: no row neighbour to blame
        other = lines[min(near, key=lambda i: abs(i - best))]
        if _values(list(other - words)):
            return True  # taken from another row, which keeps values of its own
    return bool(unit.cells) and _two_rows(unit, [lines[i] for i in region])


class PageIndex:
    """A page's lines as token sets, and where each token occurs."""

    def __init__(self, tokens: Sequence[Sequence[str]]) -> None:
        self.lines = [{_bare(token) for token in line} for line in tokens]
        self._where: dict[str, list[int]] = {}
        for index, line in enumerate(self.lines):
            for token in line:
                self._where.setdefault(token, []).append(index)

    def where(self, token: str) -> list[int]:
        """The lines holding the token, in order."""
        return self._where.get(token, [])

    def near(self, token: str, line: int, distance: int) -> list[int]:
        """The lines holding the token at most `distance` lines from `line`."""
        found = self.where(token)
        start = bisect.bisect_left(found, line - distance)
        end = bisect.bisect_right(found, line + distance)
        return found[start:end]


def _region(lines: Sequence[set[str]], best: int, words: set[str]) -> list[int]:
    """The line `best` and its neighbours made mostly of the row's own words, with no value
    the row does not have."""

    def belongs(index: int) -> bool:
        line = lines[index]
        return (
            bool(line) and len(line & words) >= 0.5 * len(line) and not _values(list(line - words))
        )

    first = last = best
    while first > max(0, best - NEAR_LINES) and belongs(first - 1):
        first -= 1
    while last + 1 < min(len(lines), best + NEAR_LINES + 1) and belongs(last + 1):
        last += 1
    return list(range(first, last + 1))


def _two_rows(unit: MarkdownUnit, region: Sequence[set[str]]) -> bool:
    """True when two lines of the row's place each hold different values of the same two
    cells or more (two rows collapsed into one; a wrapped cell splits one cell only)."""
    cells = [set(_values([_bare(t) for t in _tokens(_strip_line(cell))])) for cell in unit.cells]
    cells = [cell for cell in cells if len(cell) >= 2]
    for a, first in enumerate(region):
        for second in region[a + 1 :]:
            split = sum(
                1
                for cell in cells
                if cell & first
                and cell & second
                and (cell & first).isdisjoint(cell & second)
                and not (cell <= first or cell <= second)
            )
            if split >= 2:
                return True
    return False


class ReviewedConversion(BaseModel):
    """A converted document after verification: its Markdown (held-back pages as error
    markers), the failures holding back added, the summary and its warning line."""

    model_config = ConfigDict(frozen=True)

    markdown: str
    failures: tuple[str, ...] = ()
    summary: VerificationSummary = Field(default_factory=VerificationSummary)
    warning: str | None = None


VERIFICATION_FILE = "verification.json"
"""The name of a document's stored verification summary (beside its Markdown)."""


def review_conversion(
    markdown: str, pages: Iterable[PageVerification], threshold: int | None
) -> ReviewedConversion:
    """Summarise a conversion's page checks and hold back the pages flagged more than
    `threshold` times (None: none); both runtimes call this after joining the batches."""
    summary = summarise(pages)
    markdown, failures, summary = hold_back(markdown, summary, threshold)
    line, kept = summary_line(summary), tuple(failures)
    return ReviewedConversion(markdown=markdown, failures=kept, summary=summary, warning=line)


def chunk_flags(
    summary: VerificationSummary, pages: Iterable[int], text: str
) -> dict[str, list[dict[str, object]]]:
    """What a chunk's pages were flagged for: the unsupported tokens and suspect rows found
    in the chunk's own text, and the tokens its pages miss (per page)."""
    wanted = set(pages)
    words = _vocabulary(_tokens(" ".join(unit.text for unit in markdown_units(text))))
    flags: dict[str, list[dict[str, object]]] = {
        "unsupported": [],
        "missing": [],
        "suspect_rows": [],
    }
    for page in summary.pages:
        if page.page not in wanted:
            continue
        flags["unsupported"].extend(
            {"page": page.page, "token": token} for token in page.unsupported if token in words
        )
        flags["missing"].extend({"page": page.page, "token": token} for token in page.missing)
        flags["suspect_rows"].extend(
            {"page": page.page, "row": row} for row in page.suspect_rows if row in text
        )
    return flags
