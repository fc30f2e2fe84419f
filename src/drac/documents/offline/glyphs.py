"""Characters of a PDF page's text layer into lines: Unicode cleaned (surrogates joined,
control characters and misread glyphs left out), bold and size per line, cell starts
at wide gaps, and what the page could not give faithfully."""

from __future__ import annotations

import ctypes
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from drac.documents.offline.lines import (
    ABUTTING,
    LINE_END_HYPHENS,
    OVERLAP,
    SOFT_HYPHEN,
    SPACED_CELL,
    Line,
    bold_font,
    object_of,
)
from drac.documents.offline.tables import CELL_GAP


@dataclass
class PageNotes:
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


def page_lines(page: pdfium.PdfPage, notes: PageNotes) -> list[Line]:
    """The page's text layer as lines, noting in `notes` what it could not give faithfully."""
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


def _lines_of(raw: object, count: int, notes: PageNotes) -> Iterator[Line]:
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
        if code in LINE_END_HYPHENS and pdfium_c.FPDFText_IsHyphen(raw, index) == 1:
            _drop_misread_glyph(chars, glyph_start, notes)
            glyph_left, glyph_start = -1.0, -1
            chars.append((SOFT_HYPHEN, chars[-1][1] if chars else False))
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
                cached = bold_names[name] = bold_font(name, flags.value)
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
                if gap > CELL_GAP or gap < -OVERLAP:
                    # a wide gap, or text drawn back over the text before it (a narrow
                    # column's overflow): the next table cell starts
                    new_cell = True
                elif (
                    (
                        chars[-1][0] != " "
                        and (gap < -ABUTTING or (gap > ABUTTING and chars[-1][0].isalnum()))
                    )
                    or (chars[-1][0] == " " and generated_space and gap > SPACED_CELL)
                ) and object_of(raw, index) != object_of(raw, previous_index):
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


def _drop_misread_glyph(chars: list[tuple[str, bool]], start: int, notes: PageNotes) -> None:
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
) -> Line:
    visible = sum(sizes.values())
    size = sizes.most_common(1)[0][0] if sizes else 0.0
    return Line(
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
