"""Headings and list items read from a DOCX file's own structure (offline converter).

LibreOffice's PDF of a DOCX shows a heading as a line in a larger or bolder font and a list
item as a line after a bullet or a number, so the text-layer converter can only guess them:
a bold "1. Visit us online" becomes a heading, a wrapped list item a heading of its second
line, a bold "Overview:" opening a paragraph a heading of its own. The file says which
paragraph is which: a paragraph style (`w:pStyle`) named Title or Heading 1..9 or carrying an
outline level (`w:outlineLvl`, directly or through the styles it is based on) is a heading;
a paragraph with a numbering (`w:numPr`, its own or its style's) is a list item, a bullet or
a number as `numbering.xml` defines that level. This module reads every body paragraph
outside tables (tables are `drac.documents.office.file_tables`'s), in document order, as a
`FileBlock`; `drac.documents.office.structure_pages` gives them to the page Markdown of the PDF.

Levels: Heading N is level N; Title, when the file uses it, is level 1 and the headings one
below it. Hidden runs (`w:vanish`) and deleted text are left out; bold runs are kept bold.

The parser is the standard library's ElementTree over expat, each part read through
`drac.documents.office.file_tables.XmlPackage` (a cap per part and per package, any DTD refused
so no entity is expanded or fetched); it runs on untrusted bytes, so `read_file_structure` runs it
in a contained worker under `FILE_STRUCTURE_LIMITS`, and paragraphs, runs, style chains and
characters are capped; a file past a cap, or one the worker fails on, gives no blocks (the
text layer's headings and lists stay) and a warning.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Literal
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict, Field

from drac.documents.intake.detect import DocumentFormat
from drac.documents.office.file_tables import (
    FILE_TABLE_LIMITS,
    UNREADABLE,
    XmlPackage,
    read_in_worker,
)
from drac.documents.sandbox.containment import step
from drac.documents.sandbox.containment.tasks import contained_task
from drac.documents.sandbox.references.html_tokens import HtmlTokenizer
from drac.documents.text import decode_text

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

_MAX_BLOCKS = 100_000
_MAX_BLOCK_CHARS = 20_000
_MAX_STYLE_CHAIN = 16
"""`w:basedOn` links followed from one style (a loop or a long chain stops here)."""
_MAX_LIST_LEVEL = 8
_BODY_LEVEL = 9  # `w:outlineLvl` 9 is body text

FILE_STRUCTURE = frozenset({DocumentFormat.DOCX, DocumentFormat.HTML})
"""The formats whose own headings and lists the offline converter reads."""

FILE_STRUCTURE_LIMITS = replace(
    FILE_TABLE_LIMITS, preload=("drac.documents.office.file_structure",)
)
"""What reading one file's headings and lists may use, in a contained worker (what reading
its tables may)."""


class Run(BaseModel):
    """A piece of a paragraph's text and whether it is bold."""

    model_config = ConfigDict(frozen=True)

    text: str
    bold: bool = False


class FileBlock(BaseModel):
    """One body paragraph of the file: a heading (with its Markdown level), a list item (its
    nesting depth from 0, bullet or numbered, its number) or a paragraph, and its runs; or a
    paragraph of a table cell ("cell": its words only, never placed as a block)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["heading", "item", "paragraph", "cell"]
    runs: tuple[Run, ...]
    level: int = Field(default=0, ge=0, le=_MAX_LIST_LEVEL)
    ordered: bool = False
    number: int = 1

    @property
    def text(self) -> str:
        """The block's plain text."""
        return "".join(run.text for run in self.runs)


def read_file_structure(data: bytes, fmt: DocumentFormat) -> tuple[list[FileBlock], list[str]]:
    """The body paragraphs of a DOCX file (headings, list items, paragraphs) in document
    order, and warnings.

    Runs the parser in a contained worker; when it fails (a limit, a crash, a malformed
    file), no blocks are returned and a warning says the text layer's headings were kept.
    """
    if fmt not in FILE_STRUCTURE:
        return [], []
    return read_in_worker(
        structure_here, data, fmt, FILE_STRUCTURE_LIMITS,
        ("headings and lists", FileBlock, "they are as the PDF's text layer shows them"),
    )  # fmt: skip


@contained_task
def structure_here(data: bytes, fmt: str) -> list[FileBlock]:
    """`read_file_structure` in this process (the worker's side); [] for an unreadable file."""
    try:
        if fmt == DocumentFormat.DOCX.value:
            return _docx_blocks(XmlPackage(data))
        if fmt == DocumentFormat.HTML.value:
            return _html_blocks(decode_text(data))
    except UNREADABLE:
        return []
    return []


def _optional(package: XmlPackage, name: str) -> ElementTree.Element | None:
    try:
        return package.xml(name)
    except KeyError:
        return None


class _Styles:
    """What a paragraph style makes of its paragraphs: a heading level, a numbering."""

    def __init__(self, root: ElementTree.Element | None) -> None:
        self.styles: dict[str, ElementTree.Element] = {}
        if root is not None:
            for style in root.iterfind(f"{_W}style"):
                if style.get(f"{_W}type", "paragraph") == "paragraph":
                    self.styles.setdefault(style.get(f"{_W}styleId", ""), style)

    def chain(self, style_id: str) -> list[ElementTree.Element]:
        """The style and the styles it is based on, nearest first (capped, loops cut)."""
        found: list[ElementTree.Element] = []
        seen: set[str] = set()
        while style_id in self.styles and style_id not in seen:
            if len(found) >= _MAX_STYLE_CHAIN:
                break
            seen.add(style_id)
            style = self.styles[style_id]
            found.append(style)
            based = style.find(f"{_W}basedOn")
            style_id = based.get(f"{_W}val", "") if based is not None else ""
        return found

    def heading(self, style_id: str) -> int | None:
        """1 for Title, N + 1 for Heading N (or outline level N - 1), None for body text."""
        for style in self.chain(style_id):
            name = style.find(f"{_W}name")
            label = (name.get(f"{_W}val", "") if name is not None else "").casefold()
            if label == "title":
                return 0
            if label.startswith("heading ") and label[8:].isdigit():
                return min(int(label[8:]), _BODY_LEVEL)
            outline = _outline(style.find(f"{_W}pPr"))
            if outline is not None:
                return outline
        return None

    def numbering(self, style_id: str) -> tuple[str, int] | None:
        """The (numId, ilvl) a style gives its paragraphs, if any."""
        for style in self.chain(style_id):
            found = _numbering(style.find(f"{_W}pPr"))
            if found is not None:
                return found
        return None


def _outline(properties: ElementTree.Element | None) -> int | None:
    """A `w:outlineLvl` as a heading level 1..9 (None when absent or body text)."""
    if properties is None:
        return None
    outline = properties.find(f"{_W}outlineLvl")
    if outline is None:
        return None
    try:
        value = int(outline.get(f"{_W}val", ""))
    except ValueError:
        return None
    return value + 1 if 0 <= value < _BODY_LEVEL else None


def _numbering(properties: ElementTree.Element | None) -> tuple[str, int] | None:
    """A `w:numPr` as (numId, ilvl); None when absent or numId 0 (numbering removed)."""
    if properties is None:
        return None
    numbering = properties.find(f"{_W}numPr")
    if numbering is None:
        return None
    number = numbering.find(f"{_W}numId")
    level = numbering.find(f"{_W}ilvl")
    num_id = number.get(f"{_W}val", "") if number is not None else ""
    try:
        ilvl = int(level.get(f"{_W}val", "0")) if level is not None else 0
    except ValueError:
        ilvl = 0
    if not num_id or num_id == "0":
        return None
    return num_id, min(max(ilvl, 0), _MAX_LIST_LEVEL)


class _Numbering:
    """Whether a list level is numbered, its start, and the running count of each list."""

    def __init__(self, root: ElementTree.Element | None) -> None:
        self.levels: dict[tuple[str, int], tuple[bool, int]] = {}
        self.counts: dict[str, list[int]] = {}
        if root is None:
            return
        abstract: dict[str, dict[int, tuple[bool, int]]] = {}
        for item in root.iterfind(f"{_W}abstractNum"):
            abstract[item.get(f"{_W}abstractNumId", "")] = _levels(item)
        for num in root.iterfind(f"{_W}num"):
            ref = num.find(f"{_W}abstractNumId")
            levels = abstract.get(ref.get(f"{_W}val", "") if ref is not None else "", {})
            for ilvl, value in levels.items():
                self.levels[(num.get(f"{_W}numId", ""), ilvl)] = value

    def next(self, num_id: str, ilvl: int) -> tuple[bool, int]:
        """(numbered, number) of the next item of list `num_id` at level `ilvl`."""
        ordered, start = self.levels.get((num_id, ilvl), (False, 1))
        counts = self.counts.setdefault(num_id, [0] * (_MAX_LIST_LEVEL + 1))
        counts[ilvl] = counts[ilvl] + 1 if counts[ilvl] else start
        for deeper in range(ilvl + 1, len(counts)):
            counts[deeper] = 0  # a new parent item restarts its sub-lists
        return ordered, counts[ilvl]


def _levels(abstract: ElementTree.Element) -> dict[int, tuple[bool, int]]:
    levels: dict[int, tuple[bool, int]] = {}
    for level in abstract.iterfind(f"{_W}lvl"):
        try:
            ilvl = int(level.get(f"{_W}ilvl", ""))
        except ValueError:
            continue
        fmt = level.find(f"{_W}numFmt")
        kind = fmt.get(f"{_W}val", "bullet") if fmt is not None else "bullet"
        start = level.find(f"{_W}start")
        try:
            first = int(start.get(f"{_W}val", "1")) if start is not None else 1
        except ValueError:
            first = 1
        if 0 <= ilvl <= _MAX_LIST_LEVEL:
            levels[ilvl] = (kind not in ("bullet", "none"), min(max(first, 0), 10**6))
    return levels


def _docx_blocks(package: XmlPackage) -> list[FileBlock]:
    body = package.xml("word/document.xml").find(f"{_W}body")
    if body is None:
        return []
    step("reading the file's styles and numbering")
    styles = _Styles(_optional(package, "word/styles.xml"))
    numbering = _Numbering(_optional(package, "word/numbering.xml"))
    step("reading the file's headings and lists")
    paragraphs: list[tuple[ElementTree.Element, int | None, tuple[str, int] | None]] = []
    for paragraph in _body_paragraphs(body):
        if len(paragraphs) >= _MAX_BLOCKS:
            break
        properties = paragraph.find(f"{_W}pPr")
        style = properties.find(f"{_W}pStyle") if properties is not None else None
        style_id = style.get(f"{_W}val", "") if style is not None else ""
        heading = _outline(properties)
        if heading is None:
            heading = styles.heading(style_id)
        listed = _numbering(properties) if properties is not None else None
        if listed is None and (properties is None or properties.find(f"{_W}numPr") is None):
            listed = styles.numbering(style_id)
        paragraphs.append((paragraph, heading, listed))
    titled = any(heading == 0 for _, heading, _ in paragraphs)
    blocks: list[FileBlock] = []
    for paragraph, heading, listed in paragraphs:
        runs = _runs(paragraph)
        if not runs:
            continue
        if heading is not None:
            level = min(heading + 1 if titled else max(heading, 1), 6)
            blocks.append(FileBlock(kind="heading", runs=runs, level=level))
        elif listed is not None:
            ordered, number = numbering.next(*listed)
            blocks.append(
                FileBlock(kind="item", runs=runs, level=listed[1], ordered=ordered, number=number)
            )
        else:
            blocks.append(FileBlock(kind="paragraph", runs=runs))
    step("reading the file's table cells")
    for cell in _cell_paragraphs(body, _MAX_BLOCKS - len(blocks)):
        runs = _runs(cell)
        if runs:
            blocks.append(FileBlock(kind="cell", runs=runs))
    return blocks


def _cell_paragraphs(body: ElementTree.Element, most: int) -> list[ElementTree.Element]:
    """The paragraphs inside the body's tables, in order, at most `most`."""
    found: list[ElementTree.Element] = []
    for table in body.iterfind(f".//{_W}tbl"):
        for paragraph in table.iterfind(f"{_W}tr/{_W}tc/{_W}p"):
            if len(found) >= most:
                return found
            found.append(paragraph)
    return found


def _body_paragraphs(body: ElementTree.Element) -> list[ElementTree.Element]:
    """The body's paragraphs outside tables, in order (inside `w:sdt` content controls too)."""
    found: list[ElementTree.Element] = []
    pending = list(reversed(list(body)))
    while pending and len(found) < _MAX_BLOCKS:
        node = pending.pop()
        if node.tag == f"{_W}p":
            found.append(node)
        elif node.tag in (f"{_W}sdt", f"{_W}sdtContent", f"{_W}customXml"):
            pending.extend(reversed(list(node)))
    return found


def _runs(paragraph: ElementTree.Element) -> tuple[Run, ...]:
    """The paragraph's visible text as runs (bold kept), spaces collapsed, capped."""
    runs: list[Run] = []
    size = 0
    for run in _paragraph_runs(paragraph):
        properties = run.find(f"{_W}rPr")
        if properties is not None and _on(properties.find(f"{_W}vanish")):
            continue
        bold = properties is not None and _on(properties.find(f"{_W}b"))
        parts = []
        for node in run:
            if node.tag == f"{_W}t":
                parts.append(node.text or "")
            elif node.tag == f"{_W}tab":
                parts.append(" ")
            elif node.tag in (f"{_W}br", f"{_W}cr"):
                parts.append("\n")
            elif node.tag == f"{_W}noBreakHyphen":
                parts.append("-")
        text = "".join(parts)
        if not text:
            continue
        text = text[: max(0, _MAX_BLOCK_CHARS - size)]
        size += len(text)
        if runs and runs[-1].bold == bold:
            runs[-1] = Run(text=runs[-1].text + text, bold=bold)
        else:
            runs.append(Run(text=text, bold=bold))
        if size >= _MAX_BLOCK_CHARS:
            break
    return _tidy(runs)


_INLINE = frozenset(
    f"{_W}{tag}"
    for tag in ("hyperlink", "ins", "smartTag", "fldSimple", "sdt", "sdtContent", "customXml",
                "moveTo", "dir", "bdo")
)  # fmt: skip
"""Wrappers whose runs are the paragraph's text (deleted or moved-away text, text boxes
and drawings anchored in a run are not)."""


def _paragraph_runs(paragraph: ElementTree.Element) -> list[ElementTree.Element]:
    found: list[ElementTree.Element] = []
    pending = list(reversed(list(paragraph)))
    while pending:
        node = pending.pop()
        if node.tag == f"{_W}r":
            found.append(node)
        elif node.tag in _INLINE:
            pending.extend(reversed(list(node)))
    return found


def _on(toggle: ElementTree.Element | None) -> bool:
    return toggle is not None and toggle.get(f"{_W}val", "true") not in ("0", "false", "off")


def _tidy(runs: list[Run]) -> tuple[Run, ...]:
    """Runs with whitespace collapsed as Word shows it, the paragraph's ends stripped."""
    out: list[Run] = []
    previous_space = True
    for run in runs:
        text = "".join(
            char if char == "\n" else " " if char.isspace() else char for char in run.text
        )
        collapsed = []
        for char in text:
            if char == " " and previous_space:
                continue
            collapsed.append(char)
            previous_space = char in " \n"
        if collapsed:
            out.append(Run(text="".join(collapsed), bold=run.bold))
    while out and out[-1].text.endswith(" "):
        last = out[-1].text.rstrip(" ")
        out[-1:] = [Run(text=last, bold=out[-1].bold)] if last else []
    return tuple(out)


class _HtmlBlocks(HtmlTokenizer):
    """Collects the page's headings (`h1`-`h6`), list items (`li` of `ul` or `ol`, nested)
    and other block text as `FileBlock`s; tables (read by `file_tables`), scripts, styles and
    the head are left out."""

    _SKIPPED = frozenset({"script", "style", "template", "head", "title", "table"})
    _BLOCKS = frozenset({
        "p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "section",
        "article", "header", "footer", "main", "nav", "aside", "blockquote", "pre", "hr",
        "dl", "dt", "dd", "figure", "figcaption", "address", "details", "summary", "form",
        "body", "html",
    })  # fmt: skip
    _BOLD = frozenset({"b", "strong"})

    def __init__(self) -> None:
        self.blocks: list[FileBlock] = []
        self.runs: list[Run] = []
        self.size = 0
        self.kind: Literal["heading", "item", "paragraph"] = "paragraph"
        self.level = 0
        self.lists: list[list[int]] = []  # per open list: [ordered, next number]
        self.item: tuple[int, bool, int] | None = None  # the open item's (level, ordered, n)
        self.skipping: list[str] = []
        self.bold = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skipping:
            if tag == self.skipping[-1] and len(self.skipping) < _MAX_BLOCKS:
                self.skipping.append(tag)  # the same element nested: count it
            return
        if tag in self._SKIPPED:
            self.flush()
            self.skipping.append(tag)
        elif tag in self._BOLD:
            self.bold += 1
        elif tag == "br":
            self.text("\n")
        elif tag in self._BLOCKS:
            self.flush()
            self.open_block(tag, dict(attrs))

    def open_block(self, tag: str, attrs: dict[str, str | None]) -> None:
        if tag in ("ul", "ol"):
            start = _number(attrs.get("start"))
            if len(self.lists) < _MAX_BLOCKS:
                self.lists.append([tag == "ol", start])
        elif tag == "li" and self.lists:
            ordered, number = self.lists[-1]
            self.lists[-1][1] = number + 1
            level = min(len(self.lists) - 1, _MAX_LIST_LEVEL)
            self.kind, self.item = "item", (level, bool(ordered), number)
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.kind, self.level = "heading", int(tag[1])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br" and not self.skipping:
            self.text("\n")
        elif tag in self._BLOCKS and not self.skipping:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
            return
        if tag in self._BOLD:
            self.bold = max(0, self.bold - 1)
        elif tag in self._BLOCKS:
            self.flush(ended=True)
            if tag in ("ul", "ol") and self.lists:
                self.lists.pop()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.text(_HTML_SPACE.sub(" ", data))  # as a browser shows it: one space

    def text(self, data: str) -> None:
        if not data or self.size >= _MAX_BLOCK_CHARS:
            return
        data = data[: _MAX_BLOCK_CHARS - self.size]
        self.size += len(data)
        bold = self.bold > 0
        if self.runs and self.runs[-1].bold == bold:
            self.runs[-1] = Run(text=self.runs[-1].text + data, bold=bold)
        else:
            self.runs.append(Run(text=data, bold=bold))

    def flush(self, ended: bool = False) -> None:
        """End the open block: its text, if any, becomes a `FileBlock`. An item or heading
        with no text yet stays open (`<li><p>`) unless its element `ended`."""
        runs = _tidy(self.runs)
        if not runs and not ended:
            return
        if runs and len(self.blocks) < _MAX_BLOCKS:
            if self.kind == "heading":
                self.blocks.append(FileBlock(kind="heading", runs=runs, level=self.level))
            elif self.kind == "item" and self.item is not None:
                level, ordered, number = self.item
                self.blocks.append(
                    FileBlock(kind="item", runs=runs, level=level, ordered=ordered, number=number)
                )
            else:
                self.blocks.append(FileBlock(kind="paragraph", runs=runs))
        self.runs, self.size = [], 0
        self.kind, self.item = "paragraph", None


_HTML_SPACE = re.compile(r"[ \t\r\n\f]+")


def _number(value: str | None) -> int:
    try:
        return min(max(int(value or "1"), 0), 10**6)
    except ValueError:
        return 1


def _html_blocks(text: str) -> list[FileBlock]:
    parser = _HtmlBlocks()
    step("reading the HTML's headings and lists")
    parser.parse(text)  # linear in the page (`html.parser` was not: unfinished tags)
    parser.flush()
    return parser.blocks
