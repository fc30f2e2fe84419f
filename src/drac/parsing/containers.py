"""Where lists and block quotes end, found from indentation and markers alone.

A list or quote is one element however deeply it nests, so its inside is never parsed:
time and memory stay linear in its size whatever its depth.
"""

from __future__ import annotations

import re

from drac.parsing.grammar import (
    BLOCK_TAGS,
    HR,
    INDENTED_CODE,
    LIST_BREAKS,
    QUOTE_BREAKS,
    QUOTE_LINE,
    RAW_TEXT_TAGS,
    leading_spaces,
)
from drac.parsing.source import BLANK_CHARS, Lines

_ITEM_BULLETS = {".": r"\d{1,9}\.", ")": r"\d{1,9}\)", "*": r"\*", "+": r"\+", "-": "-"}
# The next item of a list: same bullet, indented at most `depth` spaces (1 to 3), and not a
# thematic break ("* * *", "- - -"), which ends the list instead.
_SIBLINGS = {
    (bullet, depth): re.compile(rf"(?! *{HR.pattern})( {{0,{depth}}})({pattern})((?:[ \t].*)?)$")
    for bullet, pattern in _ITEM_BULLETS.items()
    for depth in (1, 2, 3)
}
_QUOTE_FENCE = re.compile(r" {0,3}(?:`{3,}|~{3,})")


def list_end(lines: Lines, index: int, marker: str, item: str) -> int:
    """End of the list whose first item (`marker`, then `item` text) starts on line index."""
    texts, blank, count = lines.lines, lines.blank, lines.count
    spaces = leading_spaces(texts[index])
    end = index + 1
    while True:  # one item (starting on the line before `end`) per pass
        width = spaces + len(marker)
        has_text, continuation = _continuation_width(item, width)
        depth = min(width, 3)
        same_list = _SIBLINGS[marker[-1], depth]
        blank_before = seen_text = False
        while True:
            if end >= count:
                return end
            if blank[end]:
                blank_before = True
                end += 1
                continue
            raw = texts[end]
            indent = len(raw) - len(raw.lstrip(" "))
            tabbed = raw[indent : indent + 1] == "\t"
            if indent >= continuation or (tabbed and _indented_at_least(raw, continuation)):
                if blank_before and not has_text and not seen_text:
                    return end  # an item may begin with at most one blank line
                seen_text = seen_text or not raw.isspace()
                blank_before = False
                end += 1
                continue
            sibling = same_list.match(_expand_tabs(raw, 0) if tabbed else raw)
            if sibling:  # the next item of this list
                spaces, marker, item = len(sibling.group(1)), sibling.group(2), sibling.group(3)
                end += 1
                break
            if (indent <= depth and _list_break(raw, indent)) or blank_before:
                return end
            seen_text = seen_text or not raw.isspace()  # a lazy continuation line
            end += 1


def _continuation_width(item: str, width: int) -> tuple[bool, int]:
    """Whether the item's first line has text, and the indent its continuation lines need."""
    text = _expand_tabs(item, width)
    if not text.strip():
        return False, width + 1
    indent = len(text) - len(text.lstrip(" "))
    return True, width + (1 if indent >= 5 else indent)


def _list_break(line: str, indent: int) -> bool:
    """True when the line (indented by `indent` spaces, few enough) ends a list item."""
    match = LIST_BREAKS.match(line, indent)
    if match is None:
        return False
    kind = match.lastgroup
    if kind == "fenced":
        return not (match.group("fence")[0] == "`" and "`" in match.group("info"))
    if kind == "html":
        return _html_breaks(match.group("name"))
    return True


def _html_breaks(name: str | None) -> bool:
    """An HTML line breaks out of a list or quote only for block tags (or comments etc.)."""
    return name is None or name in BLOCK_TAGS or name in RAW_TEXT_TAGS


def quote_end(lines: Lines, index: int) -> int:
    """End of the block quote starting on line index."""
    first = _quote_text(lines.lines[index])
    needs_marker = (
        (not first.strip(BLANK_CHARS) and lines.has_newline(index))
        or INDENTED_CODE.match(first) is not None
        or _QUOTE_FENCE.match(first) is not None
    )
    end = index + 1
    blank_before = False
    while end < lines.count:
        line = lines.lines[end]
        if QUOTE_LINE.match(line):
            blank_before = not _quote_text(line).strip()
            end += 1
            continue
        if needs_marker or blank_before or _quote_break(lines, end):
            return end
        end += 1  # a lazy continuation line
    return end


def _quote_text(line: str) -> str:
    """A quote line's text after '>' and one optional space (a leading tab counts as spaces)."""
    text = line[line.index(">") + 1 :]
    spaces = leading_spaces(text)
    if spaces <= 3 and text[spaces : spaces + 1] == "\t":
        text = "   " + text[spaces + 1 :]
    return text[1:] if text.startswith(" ") else text


def _quote_break(lines: Lines, index: int) -> bool:
    """True when line index ends a block quote's lazy continuation."""
    if lines.blank[index]:
        return True
    line = lines.lines[index]
    indent = leading_spaces(line)
    if indent > 3:
        return False
    match = QUOTE_BREAKS.match(line, indent)
    if match is None:
        return False
    kind = match.lastgroup
    if kind == "fenced":
        return not (match.group("fence")[0] == "`" and "`" in match.group("info"))
    if kind == "html":
        return _html_breaks(match.group("name"))
    return True


def _indented_at_least(line: str, columns: int) -> bool:
    spaces = len(line) - len(line.lstrip(" "))
    if spaces >= columns or line[spaces : spaces + 1] != "\t":
        return spaces >= columns
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            return False
        if width >= columns:
            return True
    return False


def _expand_tabs(text: str, column: int) -> str:
    """Text with its leading tabs turned into spaces, counting columns from `column`."""
    if "\t" not in text or "\t" not in text[: len(text) - len(text.lstrip(" \t"))]:
        return text
    expanded: list[str] = []
    index = 0
    while index < len(text) and text[index] in " \t":
        size = 1 if text[index] == " " else 4 - column % 4
        expanded.append(" " * size)
        column += size
        index += 1
    return "".join(expanded) + text[index:]
