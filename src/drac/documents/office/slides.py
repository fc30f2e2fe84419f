"""Slide titles as headings: a PPTX's own titles, given to the page Markdown of its PDF.

LibreOffice's PDF of a deck has one page per shown slide, in presentation order, but its
text layer cannot tell a title from body text. The deck itself can: each slide's `title` or
`ctrTitle` placeholder, and (as PowerPoint and pandoc write sub-headings) a body paragraph
whose every run is bold, with no bullet and space set before it. Levels come from the deck's
structure: the first slide's title is the deck's `#` (as is a later title restating most
of it: a deck of several parts), a section slide's title (a slide holding only its title
and maybe a subtitle, such as "1. CORPORATE") is `##` and the titles of the slides after
it `###`; without section slides titles are `##`. A slide's heading paragraphs sit one level below
its title; on an untitled slide the first continues the section and later ones sit below
it; a numbered heading ("2. Ground Staff") continues the level of the previous number.
The hints are applied to the page's Markdown by making the text that matches a heading
(split off the line it was run into); no text is added or removed.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from typing import Literal
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict, Field

from drac.documents.sandbox.containment import GIB, BudgetExceeded, Limits, contained_call
from drac.documents.sandbox.containment.tasks import contained_task
from drac.errors import DocumentError

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_TITLE_TYPES = frozenset({"title", "ctrTitle"})
_MAX_PART_BYTES = 16 * 1024 * 1024
_MAX_HEADING_CHARS = 200
_MAX_LINES = 2000
"""A slide with more lines than this gets none (its page keeps the text layer's blocks)."""
_MAX_LINE_CHARS = 20_000
_BULLETS = (("buNone", ""), ("buChar", "buChar"), ("buBlip", "buChar"), ("buAutoNum", "buAutoNum"))
_TYPED_MARKER = re.compile(r"^(?:[-*+\u2022\u2013]|(\d{1,3})[.)])\s+")
_RESTATED_SHARE = 0.6
"""A later title holding more than this share of the first title's words opens a new part."""
_NUMBERED = re.compile(r"^(\d{1,3})[.)]\s")
_MARKDOWN_HEADING = re.compile(r"^#{1,6}\s+")
_PAGE_MARKER = re.compile(r"^<!--\s*Page\s+\d+\s*-->$")


class HeadingHint(BaseModel):
    """A heading the deck declares on one slide: its text and Markdown level."""

    model_config = ConfigDict(frozen=True)

    text: str
    level: int = Field(ge=1, le=6)


class SlideLine(BaseModel):
    """One line of a slide as the deck holds it: a title, a sub-heading, a paragraph (or one
    line of it, split at its line breaks), a bulleted or a numbered list item at a nesting
    level (0 is the outermost)."""

    model_config = ConfigDict(frozen=True)

    text: str
    kind: Literal["title", "heading", "paragraph", "bullet", "number"]
    level: int = Field(default=0, ge=0, le=8)
    number: int = Field(default=1, ge=0, le=99999)
    bold: bool = False  # every run of the paragraph is bold


class SlideText(BaseModel):
    """What one slide declares: its headings (with levels) and its lines in shape order."""

    model_config = ConfigDict(frozen=True)

    headings: list[HeadingHint] = Field(default_factory=list)
    lines: list[SlideLine] = Field(default_factory=list)
    lines_left_out: int = Field(default=0, description="lines past the limit (none given)")


class _Heading(BaseModel):
    text: str
    is_title: bool
    section: bool = False  # the title of a slide holding nothing else (a subtitle at most)
    after: Literal["start", "heading", "text"] = "text"  # what comes before it on its slide
    alone: bool = False  # the slide holds no other text (a table or chart at most)


SLIDE_LIMITS = Limits(
    memory_bytes=1 * GIB,
    cpu_s=60.0,
    step_cpu_s=60.0,
    wall_s=120.0,
    preload=("drac.documents.office.slides",),
)
"""What reading one deck's titles and paragraphs may use, in a contained worker (16 MiB a
part, any number of parts: a 315 KB deck of eight such slides took 17.5 s of CPU)."""


def read_slide_headings(pptx: bytes) -> tuple[list[SlideText], list[str]]:
    """`slide_text` of a deck (headings and lines of each slide), read in a contained
    worker, and warnings.

    When the worker fails (a limit, a crash), there is nothing (the converter keeps its
    own headings and blocks) and a warning says so.
    """
    try:
        found = contained_call(
            slide_text, pptx,
            limits=SLIDE_LIMITS, what="while reading the deck's slide titles and paragraphs",
        )  # fmt: skip
    except BudgetExceeded:
        raise  # the document's whole budget, not this reader's failure
    except DocumentError as error:
        return [], [f"the deck's slide titles and paragraphs could not be read ({error});"
                    " headings and paragraphs are as the PDF's text layer shows them"]  # fmt: skip
    slides = [SlideText.model_validate(slide) for slide in found]
    crowded = [number for number, slide in enumerate(slides, start=1) if slide.lines_left_out]
    if not crowded:
        return slides, []
    return slides, [
        f"slides {', '.join(map(str, crowded[:20]))} hold more than {_MAX_LINES} lines; their"
        " paragraphs and lists are as the PDF's text layer shows them"
    ]


def slide_headings(pptx: bytes) -> list[list[HeadingHint]]:
    """The heading hints of each slide LibreOffice exports (hidden slides left out), in order,
    read in this process.

    Returns an empty list when the package cannot be read as a deck (the converter then
    keeps its own headings).
    """
    return [slide.headings for slide in slide_text(pptx)]


@contained_task
def slide_text(pptx: bytes) -> list[SlideText]:
    """The headings and lines of each slide LibreOffice exports (hidden slides left out), in
    order, read in this process (`read_slide_headings` runs it contained).

    Returns an empty list when the package cannot be read as a deck. A slide of more than
    `_MAX_LINES` lines gets no lines (its page keeps the text layer's blocks).
    """
    try:
        with zipfile.ZipFile(io.BytesIO(pptx)) as archive:
            styles = _Styles(archive)
            read = [_read_slide(archive, part, styles) for part in _shown_slides(archive)]
    except (zipfile.BadZipFile, ElementTree.ParseError, KeyError, ValueError, OSError):
        return []
    levels = _levels([headings for headings, _ in read])
    return [
        SlideText(headings=hints, lines=lines)
        if len(lines) <= _MAX_LINES
        else SlideText(headings=hints, lines_left_out=len(lines))
        for hints, (_, lines) in zip(levels, read, strict=True)
    ]


def _shown_slides(archive: zipfile.ZipFile) -> list[str]:
    """The slide parts in presentation order, without the hidden ones (`show="0"`)."""
    presentation = "ppt/presentation.xml"
    rels = _read(archive, "ppt/_rels/presentation.xml.rels")
    targets = {
        rel.get("Id", ""): posixpath.normpath(posixpath.join("ppt", rel.get("Target", "")))
        for rel in rels.iter(f"{_REL}Relationship")
    }
    root = _read(archive, presentation)
    parts = []
    for slide_id in root.iter(f"{_P}sldId"):
        part = targets.get(slide_id.get(f"{_R}id", ""))
        if part is None:
            continue
        if _read(archive, part).get("show") in ("0", "false"):
            continue
        parts.append(part)
    return parts


def _read(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    """Parse one package part; a DTD (entity expansion) or an oversized part is refused."""
    info = archive.getinfo(name)
    if info.file_size > _MAX_PART_BYTES:
        raise ValueError(f"{name} is too large")
    with archive.open(info) as stream:
        data = stream.read(_MAX_PART_BYTES + 1)
    if len(data) > _MAX_PART_BYTES or b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ValueError(f"{name} is not a plain XML part")
    return ElementTree.fromstring(data)


def _read_slide(
    archive: zipfile.ZipFile, part: str, styles: _Styles
) -> tuple[list[_Heading], list[SlideLine]]:
    """A slide's headings (levels still to give) and its lines, in shape order."""
    slide = _read(archive, part)
    layout = styles.layout_of(part)
    headings: list[_Heading] = []
    lines: list[SlideLine] = []
    title: _Heading | None = None
    content = any(True for _ in slide.iter(f"{_P}graphicFrame"))  # a table or chart
    for shape in slide.iter(f"{_P}sp"):
        placeholder = shape.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
        kind = placeholder.get("type", "") if placeholder is not None else ""
        paragraphs = list(shape.iter(f"{_A}p"))
        if kind in _TITLE_TYPES:
            text = " ".join(filter(None, (_text(p) for p in paragraphs)))
            if text and len(text) <= _MAX_HEADING_CHARS and title is None:
                title = _Heading(text=text, is_title=True)
            if text:
                lines.append(SlideLine(text=text, kind="title"))
            continue
        if kind != "subTitle" and any(_text(p) for p in paragraphs):
            content = True
        numbers: dict[int, int] = {}  # level -> the last automatic number at that level
        for paragraph in paragraphs:
            if _is_heading_paragraph(paragraph):
                after: Literal["start", "heading", "text"] = "start"
                if lines:
                    after = "heading" if lines[-1].kind in ("title", "heading") else "text"
                headings.append(_Heading(text=_text(paragraph), is_title=False, after=after))
                lines.append(SlideLine(text=_text(paragraph), kind="heading"))
                numbers.clear()
                continue
            lines.extend(_paragraph_lines(paragraph, shape, placeholder, layout, numbers))
    if title is None:
        if len(headings) == 1 == len(lines):  # a table or chart may stand under it
            headings[0].alone = True
        return headings, lines
    return [title.model_copy(update={"section": not content}), *headings], lines


def _paragraph_lines(
    paragraph: ElementTree.Element,
    shape: ElementTree.Element,
    placeholder: ElementTree.Element | None,
    layout: _Layout,
    numbers: dict[int, int],
) -> list[SlideLine]:
    """A body paragraph as lines: one per line break, the first carrying the paragraph's
    bullet or automatic number (a list marker typed into a line's text counts too)."""
    properties = paragraph.find(f"{_A}pPr")
    level = _level(properties)
    bullet = layout.bullet(properties, shape, placeholder, level)
    texts = _line_texts(paragraph)
    if not any(texts):
        return []
    bold = _all_bold(paragraph)
    if bullet:  # a list item's line breaks continue the item
        texts = [" ".join(filter(None, texts))]
    out: list[SlideLine] = []
    for index, text in enumerate(texts):
        if not text:
            continue
        if index == 0 and bullet == "buChar":
            numbers.pop(level, None)
            out.append(SlideLine(text=text, kind="bullet", level=level, bold=bold))
            continue
        if index == 0 and bullet == "buAutoNum":
            start = properties.find(f"{_A}buAutoNum") if properties is not None else None
            first = _int(start.get("startAt") if start is not None else None, 1)
            numbers[level] = min(numbers[level] + 1 if level in numbers else first, 99999)
            for deeper in [key for key in numbers if key > level]:
                del numbers[deeper]
            out.append(
                SlideLine(text=text, kind="number", level=level, number=numbers[level], bold=bold)
            )
            continue
        typed = _TYPED_MARKER.match(text)
        if typed and typed.end() < len(text):
            kind: Literal["bullet", "number"] = "number" if typed.group(1) else "bullet"
            number = _int(typed.group(1), 1)
            out.append(
                SlideLine(
                    text=text[typed.end() :], kind=kind, level=level, number=number, bold=bold
                )
            )
            continue
        out.append(SlideLine(text=text, kind="paragraph", bold=bold))
    return out


def _line_texts(paragraph: ElementTree.Element) -> list[str]:
    """A paragraph's text split at its line breaks (`a:br`), spacing collapsed."""
    lines = [""]
    for child in paragraph:
        if child.tag == f"{_A}br":
            lines.append("")
        elif child.tag in (f"{_A}r", f"{_A}fld"):
            lines[-1] += "".join(t.text or "" for t in child.iter(f"{_A}t"))
    return [" ".join(line.split())[:_MAX_LINE_CHARS] for line in lines]


def _level(properties: ElementTree.Element | None) -> int:
    return min(max(_int(properties.get("lvl") if properties is not None else None, 0), 0), 8)


def _int(value: str | None, default: int) -> int:
    if value is None or not value.isdigit() or len(value) > 5:
        return default
    return int(value)


class _Layout:
    """The list styles a slide's paragraphs inherit: its layout's placeholders, then its
    master's placeholders and text styles (title, body, other)."""

    def __init__(self, layout: ElementTree.Element | None, master: ElementTree.Element | None):
        self.layout = layout
        self.master = master

    def bullet(
        self,
        properties: ElementTree.Element | None,
        shape: ElementTree.Element,
        placeholder: ElementTree.Element | None,
        level: int,
    ) -> str:
        """ "buChar", "buAutoNum" or "" (none): the first of the paragraph's own properties,
        its shape's list style, the layout's and the master's that says."""
        name = f"{_A}lvl{level + 1}pPr"
        chain = [properties, shape.find(f"{_P}txBody/{_A}lstStyle/{name}")]
        if placeholder is not None:
            for part in (self.layout, self.master):
                match = _matching_placeholder(part, placeholder)
                if match is not None:
                    chain.append(match.find(f"{_P}txBody/{_A}lstStyle/{name}"))
        if self.master is not None:
            style = "bodyStyle" if placeholder is not None else "otherStyle"
            if placeholder is not None and placeholder.get("type", "") in _TITLE_TYPES:
                style = "titleStyle"
            chain.append(self.master.find(f"{_P}txStyles/{_P}{style}/{name}"))
        for step in chain:
            if step is None:
                continue
            for tag, bullet in _BULLETS:
                if step.find(f"{_A}{tag}") is not None:
                    return bullet
        return ""


def _matching_placeholder(
    part: ElementTree.Element | None, placeholder: ElementTree.Element
) -> ElementTree.Element | None:
    """The shape of a layout or master holding the same placeholder (by index, else type)."""
    if part is None:
        return None
    kind = placeholder.get("type", "body")
    index = placeholder.get("idx")
    by_type = None
    for shape in part.iter(f"{_P}sp"):
        other = shape.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
        if other is None:
            continue
        if index is not None and other.get("idx") == index:
            return shape
        if by_type is None and other.get("type", "body") == kind:
            by_type = shape
    return by_type


class _Styles:
    """The layout and master of each slide, each part read once."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.parts: dict[str, ElementTree.Element | None] = {}

    def layout_of(self, slide: str) -> _Layout:
        """The layout and master a slide part points to (either may be missing)."""
        layout_name = self._target(slide, "/slideLayout")
        master_name = self._target(layout_name, "/slideMaster") if layout_name else None
        return _Layout(self._part(layout_name), self._part(master_name))

    def _target(self, part: str, kind: str) -> str | None:
        folder, name = posixpath.split(part)
        rels = self._part(posixpath.join(folder, "_rels", name + ".rels"))
        if rels is None:
            return None
        for rel in rels.iter(f"{_REL}Relationship"):
            if rel.get("Type", "").endswith(kind) and rel.get("TargetMode") != "External":
                return posixpath.normpath(posixpath.join(folder, rel.get("Target", "")))
        return None

    def _part(self, name: str | None) -> ElementTree.Element | None:
        if name is None:
            return None
        if name not in self.parts:
            try:
                self.parts[name] = _read(self.archive, name)
            except KeyError:
                self.parts[name] = None
        return self.parts[name]


def _text(paragraph: ElementTree.Element) -> str:
    return " ".join("".join(t.text or "" for t in paragraph.iter(f"{_A}t")).split())


def _is_heading_paragraph(paragraph: ElementTree.Element) -> bool:
    """A bold, unbulleted body paragraph with space before it: a sub-heading."""
    text = _text(paragraph)
    if not text or len(text) > _MAX_HEADING_CHARS:
        return False
    properties = paragraph.find(f"{_A}pPr")
    if properties is None or properties.find(f"{_A}buNone") is None:
        return False
    if properties.find(f"{_A}spcBef") is None:
        return False
    return _all_bold(paragraph)


def _all_bold(paragraph: ElementTree.Element) -> bool:
    """Whether the paragraph has text and every run of it is set bold."""
    runs = [run for run in paragraph.iter(f"{_A}r") if _text(run)]
    return bool(runs) and all(
        (props := run.find(f"{_A}rPr")) is not None and props.get("b") in ("1", "true")
        for run in runs
    )


def _levels(slides: list[list[_Heading]]) -> list[list[HeadingHint]]:
    """Give each slide's headings their levels from the deck's structure (module docstring)."""
    out: list[list[HeadingHint]] = []
    title_level = 1
    first = slides[0][0].text if slides and slides[0] and slides[0][0].is_title else ""
    numbered: dict[int, int] = {}  # number -> level of the last heading with that number
    in_section = False
    previous: HeadingHint | None = None
    previous_alone, previous_slide = False, -1
    for index, headings in enumerate(slides):
        hints: list[HeadingHint] = []
        first_level: int | None = None
        for heading in headings:
            if heading.is_title:
                if index == 0 or _restates(heading.text, first):
                    title_level, in_section = 1, False
                elif heading.section:
                    title_level, in_section = 2, True
                else:
                    title_level = 3 if in_section else 2
                level = title_level
                numbered.clear()
            else:
                # under a slide title, sub-headings are siblings; on an untitled slide the
                # first heading continues the section and the others sit below it
                titled = bool(headings[0].is_title)
                level = title_level + 1 if first_level is None or titled else first_level + 1
                number = _NUMBERED.match(heading.text)
                if number and int(number.group(1)) - 1 in numbered:
                    level = numbered[int(number.group(1)) - 1]
                elif (
                    number
                    and int(number.group(1)) == 1
                    and _opens_numbered_run(
                        heading, previous, previous_alone and previous_slide == index - 1
                    )
                ):
                    level = previous.level + 1 if previous is not None else level
                if first_level is None:
                    first_level = level
            number = _NUMBERED.match(heading.text)
            if number:
                numbered[int(number.group(1))] = level
            hints.append(HeadingHint(text=heading.text, level=min(level, 6)))
            previous, previous_alone, previous_slide = hints[-1], heading.alone, index
        out.append(hints)
    return out


def _opens_numbered_run(heading: _Heading, previous: HeadingHint | None, alone: bool) -> bool:
    """Whether a heading numbered 1 sits below the unnumbered heading before it: right after
    it on one slide, or first on the slide after one holding no other text than that heading
    (a table at most)."""
    if previous is None or _NUMBERED.match(previous.text):
        return False
    return heading.after == "heading" or (heading.after == "start" and alone)


def _restates(title: str, first: str) -> bool:
    """Whether `title` repeats most of the deck's first title (a deck of several parts)."""
    words = set(_key(first).split())
    return bool(words) and len(words & set(_key(title).split())) > _RESTATED_SHARE * len(words)


def apply_headings(markdown: str, hints: list[HeadingHint]) -> str:
    """Return one page's Markdown with each hinted text made a heading at the hinted level.

    The text layer often runs a slide's heading into the line before or after it (they share
    a font size), so a hint matches, in this order of preference, a whole line, the start of a
    line, its end, or any run of it, with Markdown emphasis, spacing and case ignored; the
    line is split there and the heading stands on its own. Each hint takes the first such
    match; table rows, page markers and other comments are never touched.
    """
    if not hints:
        return markdown
    lines = markdown.split("\n")
    for hint in hints:
        pattern = _hint_pattern(hint.text)
        if pattern is None:
            continue
        found = _find(lines, pattern)
        if found is None:
            continue
        index, match = found
        line = lines[index]
        before = line[: match.start()].rstrip()
        after = line[match.end() :].strip()
        before = "" if not before.strip("#*-+ \\") else before
        if before.lstrip().startswith("#") and not after:
            before = ""
        if after.startswith("**") and after.count("**") % 2:
            after = after[2:].lstrip()
        if _only_marks(after) and hint.text.endswith(after.strip("*").strip()):
            after = ""  # the heading's own closing mark (a bracket, a quote), left by the match
        parts = [before, "", "#" * hint.level + " " + hint.text, "", _escape_start(after)]
        lines[index : index + 1] = [part for part in parts if part or part == ""]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _hint_pattern(text: str) -> re.Pattern[str] | None:
    words = re.findall(r"\w+", text)
    if not words:
        return None
    gap = r"[\W_]*?"
    body = gap.join(re.escape(word) for word in words)
    return re.compile(rf"(?<!\w)(?:\*\*)?{body}\W*?(?:\*\*)?(?!\w)", re.IGNORECASE)


def _find(lines: list[str], pattern: re.Pattern[str]) -> tuple[int, re.Match[str]] | None:
    """The best match of `pattern`: whole line, then line start, then line end, then anywhere."""
    candidates: list[tuple[int, int, re.Match[str]]] = []
    for index, line in enumerate(lines):
        if line.startswith(("|", "<!--")):
            continue
        match = pattern.search(line)
        if match is None:
            continue
        head = line[: match.start()].strip("#*-+ \\")
        tail = line[match.end() :].strip(" *")
        if head and not head.rstrip("*").endswith((".", ":", "!", "?", ")")):
            continue  # inside a sentence: body text that mentions the heading's words
        rank = 0 if not head and not tail else 1 if not head else 2 if not tail else 3
        candidates.append((rank, index, match))
    if not candidates:
        return None
    rank, index, match = min(candidates, key=lambda item: (item[0], item[1]))
    return index, match


def _only_marks(text: str) -> bool:
    """Whether `text` holds punctuation only (no letter or digit), emphasis aside."""
    return bool(text.strip("* ")) and not re.search(r"[^\W_]", text)


def _escape_start(text: str) -> str:
    if text.startswith(("#", ">")):
        return "\\" + text
    return text


def _plain(block: str) -> str:
    """A block's text without heading, list or emphasis markup."""
    text = _MARKDOWN_HEADING.sub("", block.strip())
    text = re.sub(r"^(?:[-*+]\s+|\\)", "", text)
    return text.replace("**", "").strip()


def _key(text: str) -> str:
    return re.sub(r"\W+", " ", _plain(text).lower()).strip()
