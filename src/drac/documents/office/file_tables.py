"""Tables read from a DOCX, PPTX or HTML file's own structure (offline converter).

LibreOffice's PDF of such a file shows its tables as positioned text, which the text-layer
table finder (`drac.documents.offline.tables`) can only guess back into cells. The file itself says
which text is which cell: DOCX `w:tbl` rows and cells, PPTX `a:tbl` in a slide's graphic
frames, HTML `<table>` with its `<thead>` and `<th>`. This module reads them, in document
order, as header and rows of cell texts; `drac.documents.office.table_pages` puts each on the page
of the PDF where its text is.

Merged cells: a cell spanning several columns keeps its text in its first column (the others
empty); a cell spanning several rows repeats its text in each (every row keeps its key).
Several header rows become one, their texts per column joined. A table with fewer than two
rows or columns, a cell holding another table (a layout table: the inner one is read) or a
cell of more than `_MAX_CELL_WORDS` words (prose laid out in a grid) is no data table and is
left to the text layer.

The parsers are the standard library's ElementTree over expat for the packages' XML, with
any DTD refused so no entity is expanded or fetched, and drac's linear HTML tokenizer
(`references.html_tokens`) for HTML; they run on
untrusted bytes, so `read_file_tables` runs them in a contained worker
(`drac.documents.sandbox.containment`) under `FILE_TABLE_LIMITS`, and every part, table, row, column
and cell is capped; a file past a cap, or one the worker fails on, gives no tables (the text
layer's stay) and a warning.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict

from drac.documents.intake.detect import DocumentFormat
from drac.documents.sandbox.containment import GIB, BudgetExceeded, Limits, contained_call, step
from drac.documents.sandbox.containment.tasks import contained_task
from drac.documents.sandbox.references.html_tokens import HtmlTokenizer
from drac.documents.text import decode_text
from drac.errors import DocumentError

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"

_Found = TypeVar("_Found", bound=BaseModel)

_MAX_PART_BYTES = 32 * 1024 * 1024
_MAX_PACKAGE_BYTES = 128 * 1024 * 1024
"""Uncompressed bytes read from one package in all (a zip bomb stops here)."""
_MAX_TABLES = 2000
_MAX_ROWS = 5000
_MAX_COLUMNS = 64
_MAX_SPAN = _MAX_COLUMNS
_MAX_CELL_CHARS = 20_000
_MAX_CELL_WORDS = 80
_MAX_HTML_DEPTH = 64
"""Tables open inside each other beyond this depth are not read (their text stays)."""

FILE_TABLES = frozenset({DocumentFormat.DOCX, DocumentFormat.PPTX, DocumentFormat.HTML})
"""The formats whose own tables the offline converter reads."""

FILE_TABLE_LIMITS = Limits(
    memory_bytes=1 * GIB,
    cpu_s=60.0,
    step_cpu_s=30.0,
    wall_s=120.0,
    preload=("drac.documents.office.file_tables",),
)
"""What reading one file's tables may use, in a contained worker."""


class FileTable(BaseModel):
    """One table of the file: its header cells, its body rows (as wide as the header) and,
    for a deck, the number of the shown slide it is on (LibreOffice's page of it)."""

    model_config = ConfigDict(frozen=True)

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    slide: int | None = None


class _Cell(BaseModel):
    text: str
    columns: int = 1  # how many grid columns it spans
    rows: int = 1  # how many rows it spans (from this one down)
    merged_below: bool = False  # the continuation of the cell above (vertical merge)
    header: bool = False


UNREADABLE = (zipfile.BadZipFile, ElementTree.ParseError, KeyError, ValueError, OSError,
              DocumentError)  # fmt: skip
"""What the standard library's parsers (and a part past its cap) raise on a malformed file."""


def read_in_worker(
    target: Callable[[bytes, str], list[Any]],
    data: bytes,
    fmt: DocumentFormat,
    limits: Limits,
    read: tuple[str, type[_Found], str],
) -> tuple[list[_Found], list[str]]:
    """What `target` (a registered worker task of the file's bytes and format) found
    in the file, read in a contained worker, as `read`'s model, and no warning; or nothing and
    a warning naming what (`read`'s first part) could not be read and what is kept instead (its
    last), when the worker failed (a limit, a crash)."""
    what, model, kept = read
    try:
        found = contained_call(
            target, data, fmt.value, limits=limits, what=f"while reading the file's {what}"
        )
    except BudgetExceeded:
        raise  # the document's whole budget, not this reader's failure
    except DocumentError as error:
        return [], [f"the file's own {what} could not be read ({error}); {kept}"]
    return [model.model_validate(item) for item in found], []


def read_file_tables(data: bytes, fmt: DocumentFormat) -> tuple[list[FileTable], list[str]]:
    """The data tables of a DOCX, PPTX or HTML file, in document order, and warnings.

    Runs the parsers in a contained worker; when it fails (a limit, a crash, a malformed
    file), no tables are returned and a warning says the text layer's tables were kept.
    """
    if fmt not in FILE_TABLES:
        return [], []
    return read_in_worker(
        tables_here, data, fmt, FILE_TABLE_LIMITS,
        ("tables", FileTable, "tables are as the PDF's text layer shows them"),
    )  # fmt: skip


@contained_task
def tables_here(data: bytes, fmt: str) -> list[FileTable]:
    """`read_file_tables` in this process (the worker's side); [] for an unreadable file."""
    try:
        if fmt == DocumentFormat.DOCX.value:
            return _docx_tables(data)
        if fmt == DocumentFormat.PPTX.value:
            return _pptx_tables(data)
        if fmt == DocumentFormat.HTML.value:
            return _html_tables(decode_text(data))
    except UNREADABLE:
        return []
    return []


class XmlPackage:
    """A zip package whose parts are read with a size cap each and in all."""

    def __init__(self, data: bytes) -> None:
        self.archive = zipfile.ZipFile(io.BytesIO(data))
        self.budget = _MAX_PACKAGE_BYTES

    def xml(self, name: str) -> ElementTree.Element:
        """Parse one part; a DTD (entity expansion) or an oversized part is refused."""
        info = self.archive.getinfo(name)
        if info.file_size > min(_MAX_PART_BYTES, self.budget):
            raise ValueError(f"{name} is too large")
        with self.archive.open(info) as stream:
            data = stream.read(_MAX_PART_BYTES + 1)
        self.budget -= len(data)
        if len(data) > _MAX_PART_BYTES or self.budget < 0:
            raise ValueError(f"{name} is too large")
        if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
            raise ValueError(f"{name} is not a plain XML part")
        return ElementTree.fromstring(data)


def _docx_tables(data: bytes) -> list[FileTable]:
    package = XmlPackage(data)
    body = package.xml("word/document.xml").find(f"{_W}body")
    if body is None:
        return []
    tables = []
    for count, table in enumerate(body.iter(f"{_W}tbl")):
        if count >= _MAX_TABLES:
            break
        rows = [_docx_row(row) for row in table.iterfind(f"{_W}tr")]
        made = _table(rows)
        if made is not None:
            tables.append(made)
    return tables


def _docx_row(row: ElementTree.Element) -> list[_Cell] | None:
    """One `w:tr` as cells; None when a cell holds a table (a layout table)."""
    header = row.find(f"{_W}trPr/{_W}tblHeader") is not None
    cells = []
    for cell in row.iterfind(f"{_W}tc"):
        if cell.find(f".//{_W}tbl") is not None:
            return None
        properties = cell.find(f"{_W}tcPr")
        span = merge = None
        if properties is not None:
            span = properties.find(f"{_W}gridSpan")
            merge = properties.find(f"{_W}vMerge")
        columns = _count(span.get(f"{_W}val") if span is not None else None)
        continued = merge is not None and merge.get(f"{_W}val", "continue") != "restart"
        paragraphs = [_docx_text(p) for p in cell.iter(f"{_W}p")]
        cells.append(
            _Cell(
                text="\n".join(p for p in paragraphs if p),
                columns=columns,
                merged_below=continued,
                header=header,
            )
        )
    return cells


def _docx_text(paragraph: ElementTree.Element) -> str:
    parts = []
    for node in paragraph.iter():
        if node.tag == f"{_W}t":
            parts.append(node.text or "")
        elif node.tag == f"{_W}tab":
            parts.append(" ")
        elif node.tag in (f"{_W}br", f"{_W}cr"):
            parts.append("\n")
    return "".join(parts).strip()


def _pptx_tables(data: bytes) -> list[FileTable]:
    package = XmlPackage(data)
    tables: list[FileTable] = []
    for number, part in enumerate(_shown_slides(package), start=1):
        step(f"reading the tables of slide {number}")
        for table in package.xml(part).iter(f"{_A}tbl"):
            if len(tables) >= _MAX_TABLES:
                return tables
            rows = [_pptx_row(row) for row in table.iterfind(f"{_A}tr")]
            made = _table(rows, first_row_header=True, slide=number)
            if made is not None:
                tables.append(made)
    return tables


def _shown_slides(package: XmlPackage) -> list[str]:
    """The slide parts in presentation order, without the hidden ones (`show="0"`)."""
    rels = package.xml("ppt/_rels/presentation.xml.rels")
    targets = {
        rel.get("Id", ""): posixpath.normpath(posixpath.join("ppt", rel.get("Target", "")))
        for rel in rels.iter(f"{_REL}Relationship")
    }
    parts = []
    for slide_id in package.xml("ppt/presentation.xml").iter(f"{_P}sldId"):
        part = targets.get(slide_id.get(f"{_R}id", ""))
        if part is None:
            continue
        if package.xml(part).get("show") in ("0", "false"):
            continue
        parts.append(part)
    return parts


def _pptx_row(row: ElementTree.Element) -> list[_Cell]:
    cells = []
    for cell in row.iterfind(f"{_A}tc"):
        if cell.get("hMerge") in ("1", "true"):
            continue  # covered by the cell to its left, which spans it
        paragraphs = [
            "".join(t.text or "" for t in p.iter(f"{_A}t")).strip() for p in cell.iter(f"{_A}p")
        ]
        cells.append(
            _Cell(
                text="\n".join(p for p in paragraphs if p),
                columns=_count(cell.get("gridSpan")),
                merged_below=cell.get("vMerge") in ("1", "true"),
            )
        )
    return cells


def _count(value: str | None) -> int:
    """A span attribute as a count from 1 to `_MAX_SPAN` (anything else is 1)."""
    try:
        number = int(value or "1")
    except ValueError:
        return 1
    return min(max(number, 1), _MAX_SPAN)


class _HtmlTables(HtmlTokenizer):
    """Collects every `<table>`'s rows of cells; tables inside a cell are read on their own
    and make the table holding them a layout table."""

    _BREAKS = frozenset({"br", "p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6"})
    _SKIPPED = frozenset({"script", "style", "template"})

    def __init__(self) -> None:
        self.open: list[_HtmlTable] = []
        self.done: list[_HtmlTable] = []
        self.depth = 0  # tables open beyond `_MAX_HTML_DEPTH` are counted, not read
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self.skipping += 1
            return
        if tag == "table":
            self.depth += 1
            if self.open:
                self.open[-1].layout = True
            if self.depth <= _MAX_HTML_DEPTH:
                self.open.append(_HtmlTable(order=len(self.done) + len(self.open)))
            return
        if not self.open or self.depth > _MAX_HTML_DEPTH:
            return
        table = self.open[-1]
        if tag == "thead":
            table.in_head = True
        elif tag in ("tbody", "tfoot"):
            table.in_head = False
        elif tag == "tr":
            table.rows.append([])
        elif tag in ("td", "th"):
            if not table.rows:
                table.rows.append([])
            values = dict(attrs)
            table.rows[-1].append(
                _HtmlCell(
                    header=tag == "th" or table.in_head,
                    columns=_count(values.get("colspan")),
                    rows=min(_count(values.get("rowspan")), _MAX_ROWS),
                )
            )
        elif tag in self._BREAKS:
            table.text("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            return
        self.handle_starttag(tag, attrs)
        if tag == "table":
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED:
            self.skipping = max(0, self.skipping - 1)
            return
        if tag == "table" and self.depth:
            if self.depth <= _MAX_HTML_DEPTH and self.open:
                self.done.append(self.open.pop())
            self.depth -= 1
        elif self.open and tag in self._BREAKS:
            self.open[-1].text("\n")

    def handle_data(self, data: str) -> None:
        if self.open and not self.skipping and self.depth <= _MAX_HTML_DEPTH:
            # a line break in the source is a space; only <br> and blocks break a cell's text
            self.open[-1].text(data.replace("\r", " ").replace("\n", " "))

    def tables(self) -> list[FileTable]:
        """The data tables found, in the order they open in the file."""
        while self.open:
            self.done.append(self.open.pop())
        found = []
        for table in sorted(self.done, key=lambda table: table.order)[:_MAX_TABLES]:
            if table.layout:
                continue
            rows = [
                [
                    _Cell(
                        text=_tidy(cell.parts),
                        columns=cell.columns,
                        rows=cell.rows,
                        header=cell.header,
                    )
                    for cell in row
                ]
                for row in table.rows
            ]
            made = _table(rows)
            if made is not None:
                found.append(made)
        return found


class _HtmlCell:
    def __init__(self, header: bool, columns: int, rows: int) -> None:
        self.header, self.columns, self.rows = header, columns, rows
        self.parts: list[str] = []
        self.size = 0


class _HtmlTable:
    def __init__(self, order: int) -> None:
        self.order = order
        self.rows: list[list[_HtmlCell]] = []
        self.in_head = False
        self.layout = False

    def text(self, data: str) -> None:
        if not self.rows or not self.rows[-1] or len(self.rows) > _MAX_ROWS + 1:
            return  # text between cells is not in a cell
        cell = self.rows[-1][-1]
        if cell.size < _MAX_CELL_CHARS:
            cell.parts.append(data)
            cell.size += len(data)


def _tidy(parts: list[str]) -> str:
    """An HTML cell's text: spaces collapsed as a browser shows them, breaks kept."""
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def _html_tables(text: str) -> list[FileTable]:
    parser = _HtmlTables()
    step("reading the HTML's tables")
    parser.parse(text)  # linear in the page (`html.parser` was not: unfinished tags)
    return parser.tables()


def _table(
    rows: Sequence[Sequence[_Cell] | None],
    first_row_header: bool = False,
    slide: int | None = None,
) -> FileTable | None:
    """The rows laid on their grid (spans placed, merges filled) as a data table, or None."""
    if any(row is None for row in rows) or len(rows) > _MAX_ROWS:
        return None
    grid: list[list[str]] = []
    headers: list[bool] = []
    pending: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to fill) (HTML)
    for row in rows:
        assert row is not None
        line = _grid_line(row, grid[-1] if grid else None, pending)
        if line is None:
            return None
        if not any(line):
            continue
        grid.append(line)
        headers.append(bool(row) and all(cell.header for cell in row))
    return _file_table(grid, _header_rows(headers, first_row_header), slide)


def _file_table(grid: list[list[str]], top: int, slide: int | None) -> FileTable | None:
    """The grid (its first `top` rows the header) as a table as wide as its widest row, or
    None when it has fewer than two rows or columns."""
    width = max((len(line) for line in grid), default=0)
    if width < 2 or len(grid) < 2:
        return None
    grid = [line + [""] * (width - len(line)) for line in grid]
    header = [_joined(line[c] for line in grid[:top]) for c in range(width)]
    return FileTable(
        header=tuple(header),
        rows=tuple(tuple(line) for line in grid[top:]),
        slide=slide,
    )


def _grid_line(
    row: Sequence[_Cell], above: list[str] | None, pending: dict[int, tuple[str, int]]
) -> list[str] | None:
    """The row's texts on the grid: a cell spanning columns fills its first, a cell merged
    with the one above repeats `above`'s text, a cell spanning rows fills its columns of the
    next rows (in `pending`, taken here); None when the row is no data table's."""
    line: list[str] = []
    for cell in row:
        while len(line) in pending:
            line.append(_take(pending, len(line)))
        column = len(line)
        if column + cell.columns > _MAX_COLUMNS:
            return None
        text = cell.text[:_MAX_CELL_CHARS]
        if len(text.split()) > _MAX_CELL_WORDS:
            return None  # prose laid out in a grid
        if cell.merged_below:
            text = above[column] if above and column < len(above) else ""
        line.extend([text] + [""] * (cell.columns - 1))
        if cell.rows > 1:
            for offset in range(cell.columns):
                pending[column + offset] = (line[column + offset], cell.rows - 1)
    while len(line) in pending:
        line.append(_take(pending, len(line)))
    return line


def _header_rows(headers: list[bool], first_row_header: bool) -> int:
    """How many rows from the top are the header: those all of header cells (at least one),
    or only the first when `first_row_header`; always at least one row of body."""
    top = next((i for i, header in enumerate(headers) if not header), len(headers))
    top = max(1, top) if not first_row_header else 1
    return 1 if top >= len(headers) else top


def _take(pending: dict[int, tuple[str, int]], column: int) -> str:
    text, left = pending[column]
    if left <= 1:
        del pending[column]
    else:
        pending[column] = (text, left - 1)
    return text


def _joined(texts: Iterable[str]) -> str:
    """Header cells of several header rows over one column as one text (repeats once)."""
    out: list[str] = []
    for text in texts:
        if text and (not out or out[-1] != text):
            out.append(text)
    return " ".join(out)
