"""The line grammar of top-level Markdown blocks: which construct a line may open.

Patterns apply to one line (without its newline) after its leading spaces, at most three of
them (four or more make indented code, which the scanner checks first). Every pattern is
linear: no nested quantifier can match the same text two ways.
"""

from __future__ import annotations

import re

# Possessive repetitions: Python's engine would otherwise keep a backtracking entry per
# repetition (a 1 MB thematic break took 170 MiB); none can change what matches here.
_HR = r"(?:(?:-[ \t]*+){3,}+|(?:_[ \t]*+){3,}+|(?:\*[ \t]*+){3,}+)$"
_FENCE = r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>.*)"
_LIST_ITEM = r"(?P<marker>[*+-]|\d{1,9}[.)])(?P<item>(?:[ \t].*)?)$"
_BLOCK_HTML = r"</?(?P<name>[A-Za-z][A-Za-z0-9-]*)(?:[ \t]|$)|<!--|<\?|<![A-Z]|<!\[CDATA\["

# The constructs a line may open, in the order they are tried: the first pattern that matches
# decides, even when its construct then turns out not to hold (the line is paragraph text).
RULES = re.compile(
    rf"(?P<fenced>{_FENCE})"
    r"|(?P<atx>(?P<hashes>#{1,6})(?:[ \t]|$))"
    r"|(?P<setext>(?P<underline>[=-]+)[ \t]*$)"
    rf"|(?P<hr>{_HR})"
    r"|(?P<quote>>)"
    rf"|(?P<list>{_LIST_ITEM})"
    r"|(?P<ref>\[(?:[^\\\[\]]|\\.){0,999}\]:)"
    r"|(?P<html>(?P<tag></?[A-Za-z][A-Za-z0-9-]*|<!--|<\?|<![A-Z]|<!\[CDATA\[))"
    r"|(?P<blank>[ \t\v\f]*$)"
    r"|(?P<table>\|.*\|[ \t]*$)"
    r"|(?P<nptable>\S.*\|)"
)

HR = re.compile(_HR)

# What a setext underline that follows no paragraph can still be.
HR_OR_LIST = re.compile(rf"(?P<hr>{_HR})|(?P<list>{_LIST_ITEM})")

# What ends a list item that is not indented as its continuation, in this order.
LIST_BREAKS = re.compile(
    rf"(?P<hr>{_HR})|(?P<fenced>{_FENCE})|(?P<atx>#{{1,6}}(?:[ \t]|$))|(?P<quote>>)"
    rf"|(?P<html>{_BLOCK_HTML})|(?P<list>{_LIST_ITEM})"
)

# What ends the lazy continuation of a block quote (besides a blank line), in this order.
QUOTE_BREAKS = re.compile(
    rf"(?P<hr>{_HR})|(?P<fenced>{_FENCE})|(?P<list>{_LIST_ITEM})|(?P<html>{_BLOCK_HTML})"
)

GRID_BORDER = re.compile(r"\+[-=:]++\+(?:[-=:]*+\+)*+[ \t]*$")  # possessive, as _HR
GRID_LINE = re.compile(r" {0,3}[|+]")
QUOTE_LINE = re.compile(r" {0,3}>")
INDENTED_CODE = re.compile(r"(?: {4}| *\t).")

# HTML blocks (CommonMark's kinds 1 to 7).
BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "base",
        "basefont",
        "blockquote",
        "body",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "frame",
        "frameset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "iframe",
        "legend",
        "li",
        "link",
        "main",
        "menu",
        "menuitem",
        "meta",
        "nav",
        "noframes",
        "ol",
        "optgroup",
        "option",
        "p",
        "param",
        "section",
        "source",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "track",
        "ul",
    }
)
RAW_TEXT_TAGS = frozenset({"pre", "script", "style", "textarea"})
HTML_ENDS = {"<!--": "-->", "<?": "?>", "<![CDATA[": "]]>"}
# A complete open or close tag alone on its line (kind 7). Unquoted attribute values exclude
# all whitespace so that an attribute list can only be read one way (linear time).
OPEN_TAG_REST = re.compile(
    r"(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*+"
    r"(?:\s*=\s*(?:[^\s!\"'=<>`]++|'[^']*+'|\"[^\"]*+\"))?)*+[ \t]*>[ \t]*$"
)  # possessive: one backtracking entry per attribute would cost memory on a long tag
CLOSE_TAG_REST = re.compile(r"[ \t]*>[ \t]*$")


def leading_spaces(line: str) -> int:
    """Number of leading space characters (tabs not included)."""
    return len(line) - len(line.lstrip(" "))


def is_indented_code(line: str) -> bool:
    """A line of indented code: four spaces then text, or spaces, a tab, then anything."""
    return (len(line) > 4 and line.startswith("    ")) or _tab_indented(line)


def _tab_indented(line: str) -> bool:
    index = leading_spaces(line)
    return index + 1 < len(line) and line[index] == "\t"


def is_blank_text(line: str) -> bool:
    """True when the line holds only Unicode whitespace (or nothing)."""
    return not line.strip()
