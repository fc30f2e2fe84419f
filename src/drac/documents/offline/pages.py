"""The offline converter: Markdown from a PDF's text layer, with no model.

Headings are recovered from font size and weight, lists from bullet glyphs and indentation,
paragraphs from line spacing, tables from cell layout (`drac.documents.offline.tables`); reading
order is PDFium's text order. Pages without a text
layer (scans) get a marker comment and a warning: they need a vision model.

The text layer is cleaned where PDFium reports more or less than the text: its line-end hyphen
marker (U+0002) becomes a real hyphen or joins a wrapped word, as the document's own words
show (`_resolve_hyphens`); glyphs with no Unicode, or mapped to a ligature's letters outside
any word (a rupee sign the font lacks), are left out with a warning naming the page; no other
control character reaches the Markdown; a string at PDFium's 32,767-byte limit is warned about.
`drac eval-conversion` and bench/conversion_fidelity.py measure the result against source
Markdown.
"""

from __future__ import annotations

import bisect
import ctypes
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pydantic import BaseModel, ConfigDict

from drac.documents.offline.tables import (
    CELL_GAP,
    Cell,
    Table,
    Vocabulary,
    find_tables,
    rejoin_cut_row,
)
from drac.documents.pdf.render import open_pdf
from drac.documents.vision.prompt import page_marker

BULLETS = frozenset("•●○◦▪▫■□➢➤►▶✓✔❖◆◇‣⁃∙·")
DASH_BULLETS = frozenset("-–—*")
_ORDERED = re.compile(r"^(\d{1,3}[.)])\s+(.*)$")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_HEADING_END = (".", ",", ";")
_BOLD_NAMES = (b"bold", b"black", b"heavy", b"semibold", b"demi")
_FORCE_BOLD = 1 << 18
# PDFium reports a hyphen it judged to end a line inside a word as U+0002 (or keeps a soft
# hyphen); the offline converter decides per document whether it was a real one.
_LINE_END_HYPHENS = frozenset({0x02, 0xAD})
_SOFT_HYPHEN = "\x02"
# Characters that start this many font sizes left of the previous one's end start a new cell.
_OVERLAP = 0.5
# Letters of one word sit closer than this many font sizes to each other.
_ABUTTING = 0.15
# A glyph this many points from a column's start starts at it (side bearings differ).
_AT_COLUMN = 1.0
# A gap wider than this many font sizes between two text objects is more than a word space.
_SPACED_CELL = 0.3


def _bold_font(name: bytes, flags: int) -> bool:
    """Whether a font is bold by its name ("DejaVuSans-Bold") or its force-bold flag."""
    lowered = name.lower()
    return any(word in lowered for word in _BOLD_NAMES) or bool(flags & _FORCE_BOLD)


def _object_of(raw: object, index: int) -> int | None:
    """The address of the text object a character of the text page belongs to."""
    return ctypes.cast(pdfium_c.FPDFText_GetTextObject(raw, index), ctypes.c_void_p).value


_WORD = re.compile(r"[^\W_]+")


class OfflinePage(BaseModel):
    """The Markdown of one page from its text layer."""

    model_config = ConfigDict(frozen=True)

    number: int
    markdown: str
    has_text_layer: bool
    warnings: tuple[str, ...] = ()


@dataclass
class _Line:
    chars: list[tuple[str, bool]]
    size: float
    bold: bool
    x0: float
    baseline: float
    hyphen_end: bool = False
    # (char index, x, baseline, right edge of the cell before) of each cell after the first
    cell_starts: list[tuple[int, float, float, float]] = field(default_factory=list)
    end_baseline: float | None = None  # where the line ends when PDFium joined a wrapped word
    right: float = 0.0  # the right edge of the line's last cell
    glyphs: list[tuple[int, float]] = field(default_factory=list)  # (char index, left edge)
    text: str = field(init=False)

    def __post_init__(self) -> None:
        self.text = "".join(ch for ch, _ in self.chars).strip()
        if self.end_baseline is None:
            self.end_baseline = self.baseline

    def cells(
        self,
        columns: Sequence[float] = (),
        near: Sequence[float] = (),
        own: Sequence[float] = (),
    ) -> list[Cell]:
        """The line's parts separated by gaps wider than CELL_GAP font sizes, left to right,
        and also where a glyph right after another, with no space between, starts another
        word at one of `columns` (text that ran over its cell's right edge into the next
        cell's start); in a line of several parts (a table row), also where a word after a
        space starts at one of `near` (the columns of the lines around it); in a line of one
        part that starts at one of `own`, where a number or a price after a space does."""
        starts = [(0, self.x0, self.baseline), *((i, x, y) for i, x, y, _ in self.cell_starts)]
        rights = [right for *_, right in self.cell_starts] + [self.right]
        if columns:
            starts, rights = self._cut_at(columns, near, own, starts, rights)
        ends = [index for index, *_ in starts[1:]] + [len(self.chars)]
        last = len(starts) - 1
        bottom = self.baseline if self.end_baseline is None else self.end_baseline
        return [
            Cell(
                x,
                max(right, x),
                y,
                bottom if n == last and bottom != self.baseline else y,  # a wrapped word
                "".join(ch for ch, _ in self.chars[start:end]),
            )
            for n, ((start, x, y), end, right) in enumerate(zip(starts, ends, rights, strict=True))
        ]

    def _cut_at(
        self,
        columns: Sequence[float],
        near: Sequence[float],
        own: Sequence[float],
        starts: list[tuple[int, float, float]],
        rights: list[float],
    ) -> tuple[list[tuple[int, float, float]], list[float]]:
        """`starts` and `rights` with a cell added at each glyph that abuts the glyph before
        it and starts at a column (within _AT_COLUMN points)."""
        cut_starts: list[tuple[int, float, float]] = []
        cut_rights: list[float] = []
        glyphs = self.glyphs
        # in a line already cut at a wide gap (a table row), a word after a narrow space
        # that starts at a column starts a cell too ("4400mAh 42,999"); a part that only
        # abuts the one before it (a bold label, "**Available Colors**: ...") makes no row
        size = self.size if self.size > 1.0 else 1.0
        row = any(
            not -_OVERLAP <= (starts[n + 1][1] - rights[n]) / size <= CELL_GAP
            for n in range(len(starts) - 1)
        )
        # a line of one part that starts at a column (a cell's own line): only a number or
        # a price after a space starts a cell ("5000mAh 6.5”", "59,999 $719"), not a word of
        # the cell's wrapped text
        inside = not row and _at_column(own, self.x0)  # (the page's margin is no column)
        spaced = row or inside
        near = near if row else own
        position = 0
        for n, (start, x, y) in enumerate(starts):
            end = starts[n + 1][0] if n + 1 < len(starts) else len(self.chars)
            cut_starts.append((start, x, y))
            while position < len(glyphs) and glyphs[position][0] <= start:
                position += 1
            while position < len(glyphs) and glyphs[position][0] < end:
                index, left = glyphs[position]
                position += 1
                if (
                    left > x + _AT_COLUMN
                    and _at_column(columns, left)
                    and (
                        (
                            spaced
                            and _at_column(near, left)
                            and self._after_space(index)
                            and (row or self._number_after_number(index))
                        )
                        or (
                            self._pieces_are_words(index)
                            and _word_boundary(
                                self.chars[index - 1][0],
                                self.chars[index][0],
                                "".join(ch for ch, _ in self.chars[index + 1 : index + 9]),
                            )
                        )
                    )
                ):
                    cut_rights.append(left)
                    cut_starts.append((index, left, y))
            cut_rights.append(rights[n])
        return cut_starts, cut_rights

    def _number_after_number(self, index: int) -> bool:
        """Whether a number or price starts at `index` after a space that follows a word
        holding a digit ("5000mAh 6.5”", "59,999 $719"; not "Velvera Edge 256GB")."""
        if not _starts_number(self.chars[index][0]):
            return False
        before = "".join(ch for ch, _ in self.chars[max(0, index - _WORD_MAX) : index]).split()
        return bool(before) and any(ch.isdigit() for ch in before[-1])

    def _after_space(self, index: int) -> bool:
        """Whether the last character before `index` that is not left out is a space."""
        chars = self.chars
        while index > 0 and not chars[index - 1][0]:
            index -= 1
        return index > 0 and chars[index - 1][0] == " "

    def _pieces_are_words(self, index: int) -> bool:
        """Whether the text on both sides of character `index` is two characters long or
        more (a one-letter prefix, "eVisa", or suffix, "GaN", is part of one word)."""
        chars = self.chars
        return (
            index >= 2
            and chars[index - 2][0].isalnum()
            and index + 1 < len(chars)
            and chars[index + 1][0].strip() != ""
        )

    @property
    def style(self) -> tuple[float, bool]:
        return (self.size, self.bold)


def _starts_number(char: str) -> bool:
    """Whether `char` starts a number or a price."""
    return char.isdigit() or unicodedata.category(char) == "Sc"


def _at_column(columns: Sequence[float], x: float) -> bool:
    """Whether `x` is within _AT_COLUMN points of one of `columns` (in ascending order)."""
    at = bisect.bisect_left(columns, x - _AT_COLUMN)
    return at < len(columns) and columns[at] <= x + _AT_COLUMN


def _word_boundary(before: str, char: str, rest: str) -> bool:
    """Whether `char` right after `before` (and before `rest`), with no space, starts
    another word: a capitalised word or a code after a small letter or digit
    ("PuneMaharashtra", "2025Velvera", "AustraliaCW2411"; not "VelOS" or "64GB"), a
    capitalised word after a capital ("RAMStorage", not "SLAs"), a digit after a small
    letter ("Gujarat3rd"; not "CW2418"), a currency sign after a letter or digit, a
    letter after closing punctuation ("Hills,Road"; not "3,499")."""
    if not before or not char:
        return False
    if before in _CLOSING:
        return char.isalpha()
    if char.isdigit():
        return before.islower()  # not a code ("CW2418")
    if unicodedata.category(char) == "Sc":  # a price after a number ("87,999$1,059")
        return before.isalnum()
    if not char.isupper() or not before.isalnum():
        return False
    run = _WORD.match(rest)
    after = run.group(0) if run else ""
    if before.isupper():
        return len(after) >= 2 and after[:2].islower()
    return after[:1].islower() or any(ch.isdigit() for ch in after)


_CLOSING = frozenset(",;)]")


def offline_markdown(
    data: bytes, max_pages: int = 5000, hyphenated: bool = True
) -> list[OfflinePage]:
    """Return one OfflinePage per page of the PDF, in order, each starting with its page marker.

    `hyphenated`: whether its typesetter may have broken words at line ends (False for
    LibreOffice's PDF of an office file or web page: it hyphenates no word by itself, so a
    line-end hyphen is real unless the document writes the word whole elsewhere)."""
    with open_pdf(data, max_pages) as document:
        heights = []
        pictured: list[bool] = []
        pages: list[list[_Line]] = []
        notes: list[_PageNotes] = []
        for index in range(len(document)):
            page = document[index]
            try:
                heights.append(page.get_height())
                note = _PageNotes()
                pages.append(_page_lines(page, note))
                notes.append(note)
                pictured.append(_has_images(page))
            finally:
                page.close()
    hyphenates = _resolve_hyphens(pages, hyphenated)
    counts = Counter(
        word for lines in pages for line in lines for word in _WORD.findall(line.text.casefold())
    )
    words = Vocabulary(counts, hyphenates)
    scale = _HeadingScale.from_pages(pages)
    result: list[OfflinePage] = []
    carried: Table | None = None  # a table that ends its page, to go on at the next one's top
    for number, (lines, height, images, note) in enumerate(
        zip(pages, heights, pictured, notes, strict=True), start=1
    ):
        page_result, last, completed = _page_result(
            number, lines, height, scale, images, carried, words
        )
        if completed is not None and carried is not None:
            # the row a page break cut goes on this page's top: it is completed on the page
            # where its key cell stands
            before = result[-1]
            old = carried.markdown()
            if before.markdown.endswith(old):
                fixed = before.markdown[: -len(old)] + completed.markdown()
                result[-1] = before.model_copy(update={"markdown": fixed})
        carried = last
        if result and page_result.has_text_layer and result[-1].has_text_layer:
            result[-1], page_result = _join_broken_paragraph(result[-1], page_result)
        warnings = note.warnings(number)
        if warnings:
            page_result = page_result.model_copy(
                update={"warnings": (*page_result.warnings, *warnings)}
            )
        result.append(page_result)
    return result


@dataclass
class _PageNotes:
    """What the text layer of one page could not give faithfully."""

    missing_glyphs: int = 0
    cut_strings: int = 0

    def warnings(self, number: int) -> tuple[str, ...]:
        found = []
        if self.missing_glyphs:
            found.append(
                f"page {number}: {self.missing_glyphs} character(s) left out, their glyphs"
                " mapped to no text by the PDF's fonts (e.g. a currency sign or emoji the font"
                " lacks)"
            )
        if self.cut_strings:
            found.append(
                f"page {number}: {self.cut_strings} text string(s) reach the PDF reader's limit"
                f" of {_MAX_STRING_BYTES:,} bytes; text past it is missing"
            )
        return tuple(found)


def _has_images(page: pdfium.PdfPage) -> bool:
    """Whether the page draws any image (a page without text or images is simply blank)."""
    images = page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,))
    return next(iter(images), None) is not None


def _page_result(
    number: int,
    lines: list[_Line],
    height: float,
    scale: _HeadingScale,
    has_images: bool,
    carried: Table | None,
    words: Vocabulary | None = None,
) -> tuple[OfflinePage, Table | None, Table | None]:
    """The page's Markdown, and its last table when nothing follows it on the page."""
    marker = page_marker(number)
    if not any(line.text for line in lines) and not has_images:
        blank = OfflinePage(number=number, markdown=marker, has_text_layer=True)
        return blank, None, None
    if not any(line.text for line in lines):
        note = f"<!-- Page {number}: no text layer (scanned page?); needs a vision model -->"
        warning = f"page {number} has no text layer; it needs a vision model to be converted"
        scanned = OfflinePage(
            number=number,
            markdown=f"{marker}\n\n{note}",
            has_text_layer=False,
            warnings=(warning,),
        )
        return scanned, None, None
    lines = [line for line in lines if line.text and not _is_page_furniture(line, height)]
    blocks = _Blocks(scale, words)
    body = blocks.markdown(lines, carried)
    page = OfflinePage(number=number, markdown=f"{marker}\n\n{body}".rstrip(), has_text_layer=True)
    return page, blocks.last_table, blocks.completed


def _page_lines(page: pdfium.PdfPage, notes: _PageNotes) -> list[_Line]:
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        if count >= _MAX_STRING_BYTES // 2:
            notes.cut_strings = _cut_strings(page, textpage.raw)
        return list(_lines_of(textpage.raw, count, notes))
    finally:
        textpage.close()


# PDFium's content parser keeps at most this many bytes of one string operand and drops the
# rest silently; a two-byte font reaches it at half as many characters.
_MAX_STRING_BYTES = 32767


def _cut_strings(page: pdfium.PdfPage, textpage: object) -> int:
    """How many text objects of the page hold as many characters as one cut string has."""
    cut = 0
    for text_object in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_TEXT,)):
        length = pdfium_c.FPDFTextObj_GetText(text_object.raw, textpage, None, 0) // 2 - 1
        cut += length >= _MAX_STRING_BYTES // 2
    return cut


def _lines_of(raw: object, count: int, notes: _PageNotes) -> Iterator[_Line]:
    x, y = ctypes.c_double(), ctypes.c_double()
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    box_refs = [ctypes.byref(value) for value in (left, right, bottom, top)]
    x_ref, y_ref = ctypes.byref(x), ctypes.byref(y)
    started = False  # whether the line holds a character other than a space
    previous_index = -1
    generated_space = False  # whether the last space is one PDFium added for a gap
    new_cell = False
    cells: list[tuple[int, float, float, float]] = []
    glyphs: list[tuple[int, float]] = []  # (char index, left edge) where each glyph starts
    previous_right: float | None = None
    cell_right = 0.0  # the right edge of the current cell's glyphs so far
    font_name = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    flags_ref = ctypes.byref(flags)
    bold_names: dict[bytes, bool] = {}
    chars: list[tuple[str, bool]] = []
    sizes: Counter[float] = Counter()
    bold_count = 0
    first_x = baseline = end_baseline = 0.0
    hyphen = after_hyphen = False
    glyph_left = glyph_right = -1.0  # the box of the last glyph (one may give several chars)
    glyph_start = -1  # where in `chars` the last glyph's characters start
    high_surrogate = 0
    for index in range(count):
        code = pdfium_c.FPDFText_GetUnicode(raw, index)
        # PDFium reports UTF-16 code units: join surrogate pairs (emoji), drop lone halves.
        if 0xD800 <= code <= 0xDBFF:
            high_surrogate = code
            continue
        if 0xDC00 <= code <= 0xDFFF:
            if not high_surrogate:
                continue
            code = 0x10000 + ((high_surrogate - 0xD800) << 10) + (code - 0xDC00)
        high_surrogate = 0
        char = chr(code) if code else ""
        if code in _LINE_END_HYPHENS and pdfium_c.FPDFText_IsHyphen(raw, index) == 1:
            _drop_misread_glyph(chars, glyph_start, notes)
            glyph_left, glyph_start = -1.0, -1
            chars.append((_SOFT_HYPHEN, chars[-1][1] if chars else False))
            after_hyphen = started = True
            continue
        if char in ("\n", "\r"):
            _drop_misread_glyph(chars, glyph_start, notes)
            glyph_left, glyph_start = -1.0, -1
            if char == "\n" and chars:
                yield _finish(
                    chars,
                    sizes,
                    bold_count,
                    (first_x, cell_right),
                    (baseline, end_baseline),
                    hyphen,
                    cells,
                    glyphs,
                )
                chars, sizes, bold_count, hyphen = [], Counter(), 0, False
                cells, previous_right, started, cell_right = [], None, False, 0.0
                glyphs = []
            continue
        if not char or 0xE000 <= code <= 0xF8FF or code in (0xFFFD, 0xFFFE):
            if not chars and code and code != 0xFFFD:
                chars.append(("•", False))  # private-use glyphs at a line start are bullets
                started = True
            elif not pdfium_c.FPDFText_IsGenerated(raw, index):
                notes.missing_glyphs += 1  # a glyph the font maps to no character
                pdfium_c.FPDFText_GetCharBox(raw, index, *box_refs)
                glyphs.append((len(chars), left.value))  # where a cell's "₹" starts
                if previous_right is not None and left.value < previous_right - 1.0:
                    # drawn over the cell before it
                    pdfium_c.FPDFText_GetCharOrigin(raw, index, x_ref, y_ref)
                    cells.append((len(chars), left.value, y.value, cell_right))
                    cell_right = right.value
                    previous_right = None
            continue
        if char.isspace():
            _drop_misread_glyph(chars, glyph_start, notes)
            glyph_left, glyph_start = -1.0, -1
            chars.append((" ", chars[-1][1] if chars else False))
            generated_space = pdfium_c.FPDFText_IsGenerated(raw, index) == 1
            continue
        if code < 0x20 or 0x7F <= code < 0xA0 or code == 0xAD:
            continue  # other control characters are not text
        weight = pdfium_c.FPDFText_GetFontWeight(raw, index)
        if weight < 500:  # unknown, or a default 400 (LibreOffice's bold fonts): the name says
            pdfium_c.FPDFText_GetFontInfo(raw, index, font_name, 128, flags_ref)
            name = font_name.value
            cached = bold_names.get(name)
            if cached is None:
                cached = bold_names[name] = _bold_font(name, flags.value)
            bold = cached
        else:
            bold = True
        if not started:
            pdfium_c.FPDFText_GetCharOrigin(raw, index, x_ref, y_ref)
            first_x, baseline = x.value, y.value
            end_baseline = baseline
        elif after_hyphen:  # the word went on on the next visual line
            pdfium_c.FPDFText_GetCharOrigin(raw, index, x_ref, y_ref)
            end_baseline = y.value
            previous_right = None  # the jump back to the left margin is no cell gap
        after_hyphen = False
        size = round(pdfium_c.FPDFText_GetFontSize(raw, index) * 2) / 2
        pdfium_c.FPDFText_GetCharBox(raw, index, *box_refs)
        start = left.value
        if start != glyph_left or right.value != glyph_right:  # a new glyph
            if glyph_start >= 0 and len(chars) - glyph_start > 1 and not char.isalpha():
                _drop_misread_glyph(chars, glyph_start, notes)
            glyph_left, glyph_right, glyph_start = start, right.value, len(chars)
            glyphs.append((len(chars), start))
            if previous_right is not None:
                gap = (start - previous_right) / (size if size > 1.0 else 1.0)
                if gap > CELL_GAP or gap < -_OVERLAP:
                    # a wide gap, or text drawn back over the text before it (a narrow
                    # column's overflow): the next table cell starts
                    new_cell = True
                elif (
                    (
                        chars[-1][0] != " "
                        and (gap < -_ABUTTING or (gap > _ABUTTING and chars[-1][0].isalnum()))
                    )
                    or (chars[-1][0] == " " and generated_space and gap > _SPACED_CELL)
                ) and _object_of(raw, index) != _object_of(raw, previous_index):
                    # another text object starts off the previous one's end with no space
                    # between (not a symbol from a fallback font, "₹", with its narrow box),
                    # or past a space the text does not hold wider than a word space: a cell
                    # that its neighbour's text touches or nearly does
                    new_cell = True
            if new_cell:
                pdfium_c.FPDFText_GetCharOrigin(raw, index, x_ref, y_ref)
                cells.append((len(chars), start, y.value, cell_right))
                cell_right = right.value
                new_cell = False
        if right.value > cell_right:
            cell_right = right.value
        previous_right = right.value
        previous_index = index
        sizes[size] += 1
        bold_count += bold
        hyphen = char == "-" and pdfium_c.FPDFText_IsHyphen(raw, index) == 1
        chars.append((char, bold))
        started = True
    _drop_misread_glyph(chars, glyph_start, notes)
    if chars:
        yield _finish(
            chars,
            sizes,
            bold_count,
            (first_x, cell_right),
            (baseline, end_baseline),
            hyphen,
            cells,
            glyphs,
        )


# A glyph the font maps to a ligature's letters while no letter touches it is not that
# ligature: fonts without a rupee sign (say) draw it from a slot whose Unicode says "ff".
_LIGATURES = frozenset({"ff", "fi", "fl", "ffi", "ffl", "ft", "st"})


def _drop_misread_glyph(chars: list[tuple[str, bool]], start: int, notes: _PageNotes) -> None:
    """Blank the last glyph of `chars` (from `start`) when it is a ligature outside a word."""
    if start < 0 or len(chars) - start < 2:
        return
    text = "".join(ch for ch, _ in chars[start:])
    if text not in _LIGATURES or (start > 0 and chars[start - 1][0].isalpha()):
        return
    for index in range(start, len(chars)):
        chars[index] = ("", chars[index][1])
    notes.missing_glyphs += 1


def _finish(
    chars: list[tuple[str, bool]],
    sizes: Counter[float],
    bold_count: int,
    extent: tuple[float, float],
    baselines: tuple[float, float],
    hyphen: bool,
    cells: list[tuple[int, float, float, float]],
    glyphs: list[tuple[int, float]],
) -> _Line:
    visible = sum(sizes.values())
    size = sizes.most_common(1)[0][0] if sizes else 0.0
    return _Line(
        chars=chars,
        size=size,
        bold=visible > 0 and bold_count >= 0.9 * visible,
        x0=extent[0],
        right=extent[1],
        baseline=baselines[0],
        hyphen_end=hyphen,
        cell_starts=cells,
        end_baseline=baselines[1],
        glyphs=glyphs,
    )


def _resolve_hyphens(pages: list[list[_Line]], hyphenated: bool = True) -> bool:
    """Turn each line-end hyphen PDFium marked into a real hyphen or nothing (a wrapped word).

    The glyph is the same either way, so the document decides. A hyphen stays next to a
    digit, before fewer than three letters ("Walk-in": typesetters do not break there), or
    where the document writes the hyphenated form elsewhere; a word the document writes
    whole elsewhere is joined. Otherwise it stays before a capital ("Bei-Dou") and between
    two words the document also writes on their own ("high-traffic"); a part that is no word
    of the document elsewhere ("experi-ence", "The-aters", "Recogni-tion") was cut by a line
    break, so the word is joined (in a PDF not `hyphenated`, kept). Returns whether a wrapped
    word was joined (the document's typesetter hyphenates).
    """
    marked = [
        (line, lines[position + 1].text if position + 1 < len(lines) else "")
        for lines in pages
        for position, line in enumerate(lines)
        if _SOFT_HYPHEN in line.text
    ]
    if not marked:
        return False
    words: Counter[str] = Counter()
    compounds: set[str] = set()
    for lines in pages:
        for line in lines:
            text = line.text.casefold()
            words.update(_WORD.findall(text))
            compounds.update(_COMPOUND.findall(text))
    found = [
        (line, index, at_end, left, right)
        for line, following in marked
        for index, at_end, left, right in _markers(line, following)
    ]
    # the parts' own occurrences at markers are no sign that they are words on their own
    at_markers = Counter(part.casefold() for *_, left, right in found for part in (left, right))
    joined = False
    for line, index, at_end, left, right in found:
        verdict = _hyphen_evidence(left, right, words, compounds)
        if verdict is None:
            verdict = (
                not hyphenated
                or right[:1].isupper()
                or all(
                    words[part] > at_markers[part] for part in (left.casefold(), right.casefold())
                )
            )
        line.chars[index] = ("-" if verdict or at_end else "", line.chars[index][1])
        if at_end:
            line.hyphen_end = not verdict
        joined = joined or not verdict
    for line, _ in marked:
        line.text = "".join(ch for ch, _ in line.chars).strip()
    return joined


_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)+")


_WORD_AFTER = re.compile(r"^[^\W_]+")


def _markers(line: _Line, following: str) -> Iterator[tuple[int, bool, str, str]]:
    """(index, at the line's end, word before, word after) of each hyphen marker of a line.

    Each word is read from the characters next to the marker, so a line of many markers costs
    time linear in its length.
    """
    chars = line.chars
    last_visible = max((i for i, (ch, _) in enumerate(chars) if ch.strip()), default=-1)
    for index, (char, _) in enumerate(chars):
        if char != _SOFT_HYPHEN:
            continue
        start = index
        while start > 0 and _is_word_char(chars[start - 1][0]) and index - start < _WORD_MAX:
            start -= 1
        end = index + 1
        # the word goes on past further markers ("Tech-ni-cian" in a narrow cell)
        while (
            end < len(chars)
            and end - index < _WORD_MAX
            and (
                _is_word_char(chars[end][0])
                or (chars[end][0] == _SOFT_HYPHEN and end + 1 < len(chars))
            )
        ):
            end += 1
        at_end = index >= last_visible
        before = "".join(ch for ch, _ in chars[start:index])
        if at_end:
            after_match = _WORD_AFTER.search(following.strip()[:_WORD_MAX])
            after = after_match.group(0) if after_match else ""
        else:
            after = "".join(ch for ch, _ in chars[index + 1 : end] if ch != _SOFT_HYPHEN)
        yield index, at_end, before, after


_WORD_MAX = 64  # longer runs of letters are no word a line break hyphenates


def _is_word_char(char: str) -> bool:
    return len(char) == 1 and (char.isalnum())


def _hyphen_evidence(
    left: str, right: str, words: Counter[str], compounds: set[str]
) -> bool | None:
    """True for a real hyphen, False for a wrapped word, None when the document cannot tell."""
    if len(left) < 2 or len(right) < 3 or left[-1].isdigit() or right[0].isdigit():
        return True
    if f"{left}-{right}".casefold() in compounds:
        return True
    if (left + right).casefold() in words:
        return False
    return None


def _is_page_furniture(line: _Line, height: float) -> bool:
    """A bare page number in the top or bottom margin is not content."""
    in_margin = line.baseline < 0.13 * height or line.baseline > 0.9 * height
    return in_margin and bool(_PAGE_NUMBER.match(line.text))


_HEADING_MAX_LINES = 3
_HEADING_MAX_CHARS = 200


class _HeadingScale:
    """Maps a line's (size, bold) style to a heading level, from document-wide statistics."""

    def __init__(self, body_size: float, levels: dict[tuple[float, bool], int]) -> None:
        self.body_size = body_size
        self.levels = levels

    @classmethod
    def from_pages(cls, pages: list[list[_Line]]) -> _HeadingScale:
        weights: Counter[float] = Counter()
        for lines in pages:
            for line in lines:
                weights[line.size] += len(line.text)
        body = weights.most_common(1)[0][0] if weights else 10.0
        styles = {
            line.style
            for lines in pages
            for line in lines
            if line.text and _could_be_heading(line, body)
        }
        ordered = sorted(styles, key=lambda style: (-style[0], not style[1]))
        return cls(body, {style: min(rank, 4) for rank, style in enumerate(ordered, start=1)})

    def level(self, line: _Line) -> int | None:
        if not _could_be_heading(line, self.body_size):
            return None
        return self.levels.get(line.style)


def _could_be_heading(line: _Line, body: float) -> bool:
    text = line.text
    if not text or len(text) > 150:
        return False
    marker = _list_marker(text)
    if marker is not None and not _numbered_title(line, marker[0]):
        return False
    if line.size >= body * 1.12:
        return True
    return line.bold and line.size >= body * 0.95 and not text.endswith(_HEADING_END)


def _numbered_title(line: _Line, marker: str) -> bool:
    """A numbered line set wholly in bold ("2. Baggage Drop") titles a section."""
    return marker[0].isdigit() and line.bold and not line.text.endswith(_HEADING_END)


def _list_marker(text: str) -> tuple[str, str] | None:
    """Return (marker, rest) when the line starts a list item."""
    first = text[0]
    if first in BULLETS:
        return "-", text[1:].strip()
    if first in DASH_BULLETS and len(text) > 1 and text[1] == " ":
        return "-", text[2:].strip()
    ordered = _ORDERED.match(text)
    if ordered:
        return ordered.group(1), ordered.group(2)
    return None


class _Blocks:
    """Groups a page's lines into Markdown blocks: headings, list items and paragraphs."""

    def __init__(self, scale: _HeadingScale, words: Vocabulary | None = None) -> None:
        self.scale = scale
        self.words = words or Vocabulary()  # the document's words (cut words in table cells)
        self.blocks: list[tuple[str, str]] = []
        self.current: list[_Line] = []
        self.kind = ""  # "heading", "item", "para"
        self.heading_level = 0
        self.list_stack: list[tuple[float, int]] = []  # (bullet x, child indent)
        self.item_prefix = ""
        self.last_table: Table | None = None  # the page's last block, when it is a table
        self.completed: Table | None = None  # `carried` with its cut last row completed

    def markdown(self, lines: list[_Line], carried: Table | None = None) -> str:
        """Return the lines as Markdown: blocks apart by a blank line, list items kept tight,
        tables as pipe tables (`carried`: the previous page's closing table, which rows at
        this page's top continue under its header)."""
        tables = {table.first_line: table for table in find_tables(lines, carried, self.words)}
        rejoined = rejoin_cut_row(carried, tables[0]) if carried and 0 in tables else None
        if rejoined is not None:
            self.completed, tables[0] = rejoined
        index = 0
        self.last_table = None
        while index < len(lines):
            table = tables.get(index)
            if table is None:
                self._add(lines[index])
                self.last_table = None
                index += 1
                continue
            self._flush()
            self.list_stack = []
            self.blocks.append(("table", table.markdown()))
            self.last_table = table
            index = table.last_line + 1
        self._flush()
        out, out_kind = "", ""
        for kind, block in self.blocks:
            separator = "\n" if kind == "item" and out_kind == "item" else "\n\n"
            out = f"{out}{separator}{block}" if out else block
            out_kind = kind
        return out

    def _add(self, line: _Line) -> None:
        previous = self.current[-1] if self.current else None
        if previous is not None and _same_row(previous, line):
            if self.kind == "heading":  # a heading does not share its row: a table cell
                self.kind = "para"
            self.current.append(line)
            return
        level = self.scale.level(line)
        near = previous is not None and _close(previous, line)
        if (
            level is None
            and self.kind == "heading"
            and near
            and previous is not None
            and line.style == previous.style
            and _list_marker(line.text) is None
        ):
            self.current.append(line)  # a bold paragraph, not a title: `_flush` decides
            return
        if (
            level is not None
            and self.kind == "para"
            and near
            and previous is not None
            and _runs_on_into_bold(previous, line, self.scale.body_size)
        ):
            self.current.append(line)  # "... connectivity with **CloudWay 24 - ...!**"
            return
        if level is not None:
            same = self.kind == "heading" and level == self.heading_level and near
            if not same:
                self._flush()
                self.kind, self.heading_level = "heading", level
                self.list_stack = []
            self.current.append(line)
            return
        marker = _list_marker(line.text)
        if marker is not None:
            self._flush()
            self._start_item(line, marker[0])
            self.current.append(line)
            return
        if self.kind == "item" and near and line.x0 > self.list_stack[-1][0] + 2:
            self.current.append(line)
            return
        if self.kind == "para" and near and previous is not None and line.size == previous.size:
            self.current.append(line)
            return
        self._flush()
        self.list_stack = []
        self.kind = "para"
        self.current.append(line)

    def _start_item(self, line: _Line, marker: str) -> None:
        while self.list_stack and line.x0 < self.list_stack[-1][0] - 3:
            self.list_stack.pop()
        if self.list_stack and abs(line.x0 - self.list_stack[-1][0]) <= 3:
            self.list_stack.pop()
        indent = self.list_stack[-1][1] if self.list_stack else 0
        self.list_stack.append((line.x0, indent + len(marker) + 1))
        self.kind = "item"
        self.item_prefix = " " * indent + marker + " "

    def _flush(self) -> None:
        if not self.current:
            return
        title = _join([line.text for line in self.current], self.current)
        if self.kind == "heading" and not _short_enough_for_heading(self.current, title):
            self.kind = "para"  # a long run in a large font is body text (slides), not a title
        body_sized = self.current[0].size < self.scale.body_size * 1.12
        if self.kind == "heading" and title.endswith(_HEADING_END) and body_sized:
            self.kind = "para"  # bold lines that end a sentence: a bold paragraph
        if self.kind == "heading":
            self.blocks.append(("heading", "#" * self.heading_level + " " + title))
        elif self.kind == "item":
            first = self.current[0]
            marker = _list_marker(first.text)
            texts = [_inline(first, skip_marker=True, marker=marker)]
            texts += [_inline(line) for line in self.current[1:]]
            self.blocks.append(("item", self.item_prefix + _join(texts, self.current)))
        else:
            text = _join([_inline(line) for line in self.current], self.current)
            self.blocks.append(("para", _escape_start(text)))
        self.current = []
        self.kind = ""


def _runs_on_into_bold(previous: _Line, line: _Line, body: float) -> bool:
    """Whether a bold body-sized line at normal spacing goes on with the sentence the
    paragraph line before it left open (ending in a lower-case word or a comma): bold words
    of that sentence, not a heading."""
    text = previous.text.rstrip()
    return (
        bool(text)
        and (text[-1].islower() or text[-1] == ",")
        and line.size < body * 1.12
        and abs(line.size - previous.size) < 0.5
    )


def _short_enough_for_heading(lines: list[_Line], title: str) -> bool:
    return len(lines) <= _HEADING_MAX_LINES and len(title) <= _HEADING_MAX_CHARS


def _close(previous: _Line, line: _Line) -> bool:
    """True when `line` follows `previous` at normal line spacing (same block)."""
    gap = (previous.end_baseline or previous.baseline) - line.baseline
    return 0 < gap <= 1.5 * max(previous.size, line.size)


def _same_row(previous: _Line, line: _Line) -> bool:
    """True when `line` continues `previous`'s visual row (e.g. the next table cell).

    The next cell starts to the right, on the same baseline or up to a few lines higher
    (when the previous cell wrapped onto several lines).
    """
    size = max(previous.size, line.size, 1.0)
    drop = previous.baseline - line.baseline
    return line.x0 > previous.x0 + 1 and -4 * size <= drop < 0.35 * size


def _join(texts: list[str], lines: list[_Line]) -> str:
    out = ""
    for text, line_before in zip(texts, [None, *lines[:-1]], strict=True):
        if not out:
            out = text
        elif line_before is not None and line_before.hyphen_end and out.endswith("-"):
            out = out[:-1] + text
        else:
            out = f"{out} {text}"
    return out.replace("** **", " ")


def _inline(line: _Line, skip_marker: bool = False, marker: tuple[str, str] | None = None) -> str:
    """Return the line's text with bold runs marked `**...**` (unless the whole line is bold)."""
    chars = line.chars
    if skip_marker and marker is not None:
        chars = _drop_marker(chars, line.text, marker[1])
    text = "".join(ch for ch, _ in chars).strip()
    if not any(bold for ch, bold in chars if ch != " "):
        return text
    runs: list[tuple[str, bool]] = []
    for char, bold in chars:
        if runs and (runs[-1][1] == bold or char == " "):
            runs[-1] = (runs[-1][0] + char, runs[-1][1])
        else:
            runs.append((char, bold))
    pieces = []
    for run, bold in runs:
        core = run.strip()
        if bold and any(ch.isalnum() for ch in core):
            lead = run[: len(run) - len(run.lstrip())]
            trail = run[len(run.rstrip()) :]
            pieces.append(f"{lead}**{core}**{trail}")
        else:
            pieces.append(run)
    return "".join(pieces).strip()


def _drop_marker(chars: list[tuple[str, bool]], text: str, rest: str) -> list[tuple[str, bool]]:
    """Return the characters after the list marker (the marker is `text` minus `rest`)."""
    to_drop = sum(1 for ch in text[: len(text) - len(rest)] if ch != " ")
    index = 0
    while index < len(chars) and to_drop:
        if chars[index][0] != " ":
            to_drop -= 1
        index += 1
    while index < len(chars) and chars[index][0] == " ":
        index += 1
    return chars[index:]


_SENTENCE_END = re.compile(r"[.!?:;][*_)\]\"'”’]*$")


def _join_broken_paragraph(
    previous: OfflinePage, page: OfflinePage
) -> tuple[OfflinePage, OfflinePage]:
    """The two pages with a paragraph the page break cut mid-sentence whole on the first.

    The page's first block goes on the previous page's last one when that is a paragraph not
    ending a sentence and this one starts in lower case (a sentence going on); the words that
    moved are a line or two, cited at the page where their paragraph starts.
    """
    head, _, last = previous.markdown.rpartition("\n\n")
    marker, _, body = page.markdown.partition("\n\n")
    first, _, rest = body.partition("\n\n")
    if (
        not head
        or not first[:1].islower()
        or "\n" in first
        or last.startswith(("#", "|", "<!--", "- ", "\\"))
        or _ORDERED.match(last)
        or _SENTENCE_END.search(last)
    ):
        return previous, page
    joined = previous.model_copy(update={"markdown": f"{previous.markdown} {first}"})
    left = f"{marker}\n\n{rest}" if rest else marker
    return joined, page.model_copy(update={"markdown": left})


def _escape_start(text: str) -> str:
    """Keep a paragraph that happens to start like Markdown syntax from becoming it."""
    if text.startswith(("#", ">")):
        return "\\" + text
    return text
