"""Scanned pages read offline: a page image to Markdown by OCR (RapidOCR's PP-OCR models).

The engine finds text segments with boxes; this module turns them into rows (segments that
share a baseline band), cells (segments on a row apart by a wide gap), and then Markdown:
runs of multi-cell rows become pipe tables (so a table row stays one row), single-cell rows
become paragraphs, list items and, when set clearly larger than the body, headings.

The models ship inside the `rapidocr` wheel (the optional `ocr` extra, installed by
scripts/setup.sh); they are opened by explicit path, so nothing is ever downloaded. Without
the extra, `ocr_available()` is False and scanned pages stay marked as unread.
`ocr_page` takes and returns plain data so that it can run in a contained worker process.
"""

from __future__ import annotations

import importlib.util
import io
import re
import statistics
import threading
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from drac.documents.sandbox.containment.tasks import contained_task
from drac.documents.table_grid import escape_pipes, joined_rows, pipe_table, position_groups
from drac.documents.vision.prompt import page_marker
from drac.errors import DocumentError

ENGINE_NAME = "rapidocr"
MIN_SEGMENT_SCORE = 0.5
"""Segments the recogniser is less sure of than this are noise, not text."""
MIN_READABLE_WORDS = 3
MIN_READABLE_SCORE = 0.75
"""A page is read when OCR finds at least this many words at this mean confidence."""
MAX_IMAGE_PIXELS = 40_000_000

_MODEL_FILES = {
    "Det": "PP-OCRv6_det_small.onnx",
    "Cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
    "Rec": "PP-OCRv6_rec_small.onnx",
}
_BULLETS = frozenset("•●○◦▪▫■□➢➤►▶✓✔❖◆◇‣⁃∙·*-–—")
_ORDERED = re.compile(r"^\d{1,3}[.)]\s")
_HEADING_RATIO = 1.22
_TITLE_RATIO = 1.6
_CELL_GAP = 0.6
"""Segments on one row further apart than this many line heights are separate cells (the
engine already splits a row at column gaps; closer segments are one run of words)."""
_WRAP_GAP = 0.5
"""A table row closer than this many line heights below the previous one continues its cells
(a cell's text wrapped onto a second line)."""
_PARAGRAPH_GAP = 0.35
"""Lines closer than this many line heights (top to previous bottom) continue a paragraph
(the engine's boxes of consecutive lines of one paragraph touch or nearly so)."""


class OcrSegment(BaseModel):
    """One run of text the engine read, with its box in page points (origin top-left)."""

    model_config = ConfigDict(frozen=True)

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    score: float = Field(ge=0.0, le=1.0)

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2


class OcrRow(BaseModel):
    """Segments on one visual row, left to right; `cells` are the row's gap-separated parts."""

    model_config = ConfigDict(frozen=True)

    cells: tuple[OcrSegment, ...]

    @property
    def top(self) -> float:
        return min(cell.top for cell in self.cells)

    @property
    def bottom(self) -> float:
        return max(cell.bottom for cell in self.cells)

    @property
    def height(self) -> float:
        return statistics.median(cell.height for cell in self.cells)

    @property
    def text(self) -> str:
        return " ".join(cell.text for cell in self.cells)


class OcrPage(BaseModel):
    """One page read by OCR: its Markdown (starting with the page marker) and how sure it is."""

    model_config = ConfigDict(frozen=True)

    number: int = Field(ge=1)
    markdown: str
    readable: bool
    words: int
    mean_score: float
    rows: tuple[OcrRow, ...] = ()

    def words_text(self) -> str:
        """The words read, one row a line: what a conversion of the page is checked against."""
        return "\n".join(" ".join(cell.text for cell in row.cells) for row in self.rows)


def ocr_available() -> bool:
    """Whether the OCR engine (the `ocr` extra) is installed."""
    return (
        importlib.util.find_spec("rapidocr") is not None
        and importlib.util.find_spec("onnxruntime") is not None
    )


@contained_task
def ocr_page(png: bytes, number: int, width_pt: float, height_pt: float) -> OcrPage:
    """Read one rendered page image (PNG bytes) and return its Markdown with its page marker.

    `width_pt` x `height_pt` is the page's size, so boxes come back in page coordinates.
    A page where OCR finds too little text, or only text it is unsure of, is not readable:
    its Markdown is the marker alone.
    """
    image = _open_image(png)
    scale_x = width_pt / image.width
    scale_y = height_pt / image.height
    segments = [
        segment.model_copy(
            update={
                "x0": segment.x0 * scale_x,
                "x1": segment.x1 * scale_x,
                "top": segment.top * scale_y,
                "bottom": segment.bottom * scale_y,
            }
        )
        for segment in _engine().read(image)
    ]
    return page_from_segments(number, segments)


def page_from_segments(number: int, segments: list[OcrSegment]) -> OcrPage:
    """Lay out recognised segments (page points) as one page of Markdown."""
    kept = [seg for seg in segments if seg.score >= MIN_SEGMENT_SCORE and seg.text.strip()]
    words = sum(len(seg.text.split()) for seg in kept)
    weight = sum(len(seg.text) for seg in kept)
    mean = sum(seg.score * len(seg.text) for seg in kept) / weight if weight else 0.0
    readable = words >= MIN_READABLE_WORDS and mean >= MIN_READABLE_SCORE
    marker = page_marker(number)
    if not readable:
        return OcrPage(number=number, markdown=marker, readable=False, words=words, mean_score=mean)
    rows = group_rows(kept)
    body = rows_markdown(rows)
    return OcrPage(
        number=number,
        markdown=f"{marker}\n\n{body}".rstrip(),
        readable=True,
        words=words,
        mean_score=round(mean, 4),
        rows=tuple(rows),
    )


def group_rows(segments: list[OcrSegment]) -> list[OcrRow]:
    """Group segments into visual rows, top to bottom, each row's cells left to right.

    A segment joins a row when its middle lies within half a line height of the row's
    middle; neighbours on a row closer than a wide gap are one cell.
    """
    rows: list[list[OcrSegment]] = []
    for segment in sorted(segments, key=lambda seg: (seg.middle, seg.x0)):
        for row in reversed(rows[-3:]):
            middle = statistics.fmean(seg.middle for seg in row)
            height = min(segment.height, statistics.fmean(seg.height for seg in row))
            if abs(segment.middle - middle) <= 0.5 * height:
                row.append(segment)
                break
        else:
            rows.append([segment])
    return [OcrRow(cells=tuple(_merge_cells(sorted(row, key=lambda s: s.x0)))) for row in rows]


def _merge_cells(row: list[OcrSegment]) -> list[OcrSegment]:
    cells = [row[0]]
    for segment in row[1:]:
        last = cells[-1]
        height = max(min(last.height, segment.height), 1.0)
        if segment.x0 - last.x1 < _CELL_GAP * height:
            cells[-1] = last.model_copy(
                update={
                    "text": f"{last.text} {segment.text}",
                    "x1": max(last.x1, segment.x1),
                    "top": min(last.top, segment.top),
                    "bottom": max(last.bottom, segment.bottom),
                    "score": min(last.score, segment.score),
                }
            )
        else:
            cells.append(segment)
    return cells


def rows_markdown(rows: list[OcrRow]) -> str:
    """Return rows as Markdown blocks: tables for runs of multi-cell rows, text otherwise."""
    if not rows:
        return ""
    single = [row.height for row in rows if len(row.cells) == 1]
    body = statistics.median(single or [row.height for row in rows])
    blocks: list[tuple[str, str]] = []
    index = 0
    while index < len(rows):
        end = _table_end(rows, index)
        if end > index:
            blocks.append(("table", _table(rows[index:end])))
            index = end
            continue
        index = _text_block(rows, index, body, blocks)
    out, previous = "", ""
    for kind, block in blocks:
        separator = "\n" if kind == previous == "item" else "\n\n"
        out = f"{out}{separator}{block}" if out else block
        previous = kind
    return out


def _table_end(rows: list[OcrRow], index: int) -> int:
    """The end (exclusive) of a table starting at rows[index]; `index` when none starts there.

    A table is a run of at least two multi-cell rows; single-cell rows tight below a table
    row are its wrapped cells and stay in the run.
    """
    if len(rows[index].cells) < 2:
        return index
    end, multi = index + 1, 1
    while end < len(rows):
        if len(rows[end].cells) > 1:
            multi += 1
        elif not _wrapped(rows[end - 1], rows[end]):
            break
        end += 1
    return end if multi >= 2 else index


def _wrapped(previous: OcrRow, row: OcrRow) -> bool:
    return row.top - previous.bottom < _WRAP_GAP * max(previous.height, row.height)


def _text_block(rows: list[OcrRow], index: int, body: float, blocks: list[tuple[str, str]]) -> int:
    """Append the block starting at rows[index]; return the index of the next row."""
    first = rows[index]
    text = first.text
    ratio = first.height / body if body else 1.0
    if len(first.cells) == 1 and ratio >= _HEADING_RATIO and len(text) <= 120:
        level = 1 if ratio >= _TITLE_RATIO else 2
        end = index + 1
        while end < len(rows) and _continues(rows[end - 1], rows[end], heading=True):
            text = f"{text} {rows[end].text}"
            end += 1
        blocks.append(("heading", "#" * level + " " + _escape(text)))
        return end
    item = _list_item(text)
    end = index + 1
    while end < len(rows) and _continues(rows[end - 1], rows[end], heading=False):
        if len(rows[end].cells) > 1 and end + 1 < len(rows) and len(rows[end + 1].cells) > 1:
            break  # a table starts here
        if _list_item(rows[end].text) is not None or _ORDERED.match(rows[end].text):
            break
        text = f"{text} {rows[end].text}"
        end += 1
    if item is not None:
        blocks.append(("item", "- " + _escape(_list_item(text) or "")))
    elif _ORDERED.match(text):
        blocks.append(("item", _escape(text)))
    else:
        blocks.append(("para", _escape_start(_escape(text))))
    return end


def _continues(previous: OcrRow, row: OcrRow, *, heading: bool) -> bool:
    """Whether `row` continues the block that `previous` ends (same size, normal spacing)."""
    height = max(previous.height, row.height)
    if not 0.77 <= row.height / max(previous.height, 0.1) <= 1.3:
        return False
    gap = row.top - previous.bottom
    limit = _PARAGRAPH_GAP
    return gap < limit * height


def _list_item(text: str) -> str | None:
    """The item's text when `text` starts with a bullet glyph (and a space), else None."""
    if len(text) > 1 and text[0] in _BULLETS and (text[1] == " " or text[0] not in "*-–—"):
        return text[1:].strip()
    return None


def _table(rows: list[OcrRow]) -> str:
    """A pipe table: columns from the cells' left edges, the first row as the header.

    A visual row joins the table row above it when it is a wrapped remainder: tight below
    it and either not a full row (a new row starts in the first column and fills all
    columns but at most one), continuing a header whose first column was wrapped onto this
    line, a second header line (no digits) under the first, or going on with a text cell
    in lower case.
    """
    tolerance = 1.5 * statistics.median(row.height for row in rows)
    starts = (cell.x0 for row in rows if len(row.cells) > 1 for cell in row.cells)
    anchors = [group[0] for group in position_groups(starts, tolerance)]
    table: list[list[str]] = []
    previous: OcrRow | None = None
    for visual, row in enumerate(rows):  # only the second row may be a header's 2nd line
        columns = _row_columns(row, anchors, tolerance)
        if table and previous is not None and _wraps(table[-1], previous, row, columns, visual):
            table[-1] = joined_rows(table[-1], columns)
        else:
            table.append(columns)
        previous = row
    return pipe_table(table, lambda text: escape_pipes(_escape(text)), delimiter="---")


def _row_columns(row: OcrRow, anchors: list[float], tolerance: float) -> list[str]:
    """The row's cell texts by column: each cell in the last column starting left of it."""
    columns = [""] * len(anchors)
    for cell in row.cells:
        fits = [i for i, anchor in enumerate(anchors) if anchor <= cell.x0 + tolerance]
        column = fits[-1] if fits else 0
        columns[column] = f"{columns[column]} {cell.text}".strip()
    return columns


def _wraps(
    above: list[str], previous: OcrRow, row: OcrRow, columns: list[str], visual: int
) -> bool:
    """Whether the visual `row` (its cells by column: `columns`) is the wrapped rest of the
    table row `above`, which ended with the visual row `previous`."""
    if not _wrapped(previous, row):
        return False
    filled = sum(1 for column in columns if column)
    starts_row = bool(columns[0]) and len(row.cells) > 1 and filled >= len(columns) - 1
    header_wrap = visual == 1 and not any(ch.isdigit() for ch in row.text)
    return not starts_row or not above[0] or header_wrap or _continues_cells(above, columns)


def _continues_cells(above: list[str], columns: list[str]) -> bool:
    """Whether a full-looking row is the wrapped rest of the row above: a text cell (three
    words or more above it, not ended by a full stop) goes on in lower case."""
    for old, new in zip(above[1:], columns[1:], strict=True):
        if (
            new[:1].islower()
            and len(old.split()) >= 3
            and not old.rstrip().endswith((".", "!", "?", ":"))
        ):
            return True
    return False


def _escape(text: str) -> str:
    """OCR text is untrusted: it may not forge a page marker or any HTML comment."""
    return text.replace("<!--", "\\<!--").replace("-->", "--\\>")


def _escape_start(text: str) -> str:
    if text.startswith(("#", ">")):
        return "\\" + text
    return text


def _open_image(png: bytes) -> Any:
    from PIL import Image

    try:
        image = Image.open(io.BytesIO(png))
        if image.width * image.height > MAX_IMAGE_PIXELS:
            raise DocumentError(f"page image is {image.width} x {image.height} pixels, too large")
        return image.convert("RGB")
    except (OSError, Image.DecompressionBombError) as exc:
        raise DocumentError(f"page image cannot be read for OCR ({exc})") from exc


class _RapidOcr:
    """One RapidOCR instance per process (loading the models takes a second); calls serialised."""

    def __init__(self) -> None:
        import logging

        import rapidocr

        models = Path(rapidocr.__file__).parent / "models"
        params: dict[str, object] = {
            "Global.log_level": "error",
            "EngineConfig.onnxruntime.intra_op_num_threads": 1,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            "Det.box_thresh": 0.3,  # keeps lone digits in table cells (measured)
        }
        for stage, name in _MODEL_FILES.items():
            path = models / name
            if not path.is_file():  # never let the engine fetch a missing model
                raise DocumentError(f"the OCR model {name} is missing from the rapidocr package")
            params[f"{stage}.model_path"] = str(path)
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        self._engine = rapidocr.RapidOCR(params=params)
        self._lock = threading.Lock()

    def read(self, image: Any) -> list[OcrSegment]:
        """Return the segments found in a PIL image, boxes in pixels."""
        import numpy as np

        with self._lock:
            try:
                result: Any = self._engine(np.asarray(image))
            except Exception as exc:  # the engine's own failure fails this page alone
                raise DocumentError(f"OCR failed on the page ({type(exc).__name__})") from exc
        boxes = getattr(result, "boxes", None)
        if boxes is None:
            return []
        segments = []
        for box, text, score in zip(boxes, result.txts, result.scores, strict=True):
            xs = [float(point[0]) for point in box]
            ys = [float(point[1]) for point in box]
            segments.append(
                OcrSegment(
                    text=" ".join(str(text).split()),
                    x0=min(xs),
                    x1=max(xs),
                    top=min(ys),
                    bottom=max(ys),
                    score=min(max(float(score), 0.0), 1.0),
                )
            )
        return segments


@cache
def _engine() -> _RapidOcr:
    if not ocr_available():
        raise DocumentError("OCR is not installed (pip install 'drac[ocr]')")
    return _RapidOcr()


def ocr_warnings(numbers: list[int]) -> list[str]:
    """One warning per run of consecutive pages read by OCR ("page 3 ..." / "pages 4-7 ...")."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    out = []
    for run in runs:
        if len(run) == 1:
            out.append(f"page {run[0]} is a scan and was read by OCR: check its text")
        else:
            out.append(f"pages {run[0]}-{run[-1]} are scans and were read by OCR: check their text")
    return out
