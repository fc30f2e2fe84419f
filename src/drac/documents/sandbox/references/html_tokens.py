"""An HTML tokenizer whose time is linear in its input, after the tokenization rules of the
HTML standard (simplified: no character-reference edge cases, no foreign content).

`html.parser` of the standard library is not linear: on a construct it cannot finish (`<a`
with no `>`, an unclosed comment or end tag) it scans to the end of the input, then moves
one construct on and scans again, so 100,000 unfinished `<a` cost minutes. Here every
construct is scanned once: one that is not finished runs to the end of the input and is
dropped, as the standard says (an unfinished tag at the end of a file is not a tag).
"""

from __future__ import annotations

import re
from html import unescape

_TAG_NAME = re.compile(r"[^\t\n\f\r />]*")
_ATTRIBUTE = re.compile(
    r"""([^\t\n\f\r />][^\t\n\f\r /=>]*)"""  # a name (it may start with '=')
    r"""(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)("?)|'([^']*)('?)|([^\t\n\f\r >]*)))?"""
)
_SPACE_OR_SLASH = re.compile(r"[\t\n\f\r /]*")
_RAW_TEXT = frozenset({"script", "style"})
"""Elements whose content is text up to their end tag (as `html.parser` has them)."""


class HtmlTokenizer:
    """Calls `handle_starttag`, `handle_startendtag`, `handle_endtag`, `handle_data` (text
    with character references decoded; the raw content of `script` and `style`) and
    `handle_decl` for the page given to `parse`, in order. Tag and attribute names are
    lower case; an attribute with no value has None; a repeated attribute keeps its first
    value (later ones are dropped, as the standard says)."""

    def parse(self, text: str) -> None:
        """Tokenize the whole page."""
        at, end = 0, len(text)
        while at < end:
            opening = text.find("<", at)
            if opening < 0:
                self.handle_data(unescape(text[at:]))
                return
            if opening > at:
                self.handle_data(unescape(text[at:opening]))
            at = self._markup(text, opening)

    def _markup(self, text: str, at: int) -> int:
        """Handle the construct starting with '<' at `at`; where the next one starts."""
        following = text[at + 1 : at + 2]
        if following.isascii() and following.isalpha():
            return self._tag(text, at + 1, closing=False)
        if following == "/":
            after = text[at + 2 : at + 3]
            if after.isascii() and after.isalpha():
                return self._tag(text, at + 2, closing=True)
            if after == ">":
                return at + 3
            return _past(text, ">", at + 2)  # a bogus comment
        if text.startswith("<!--", at):
            return _past(text, "-->", at + 4)
        if following in ("!", "?"):
            close = text.find(">", at + 2)
            if close < 0:
                return len(text)
            if following == "!":
                self.handle_decl(text[at + 2 : close])
            return close + 1
        self.handle_data("<")
        return at + 1

    def _tag(self, text: str, at: int, *, closing: bool) -> int:
        name_match = _TAG_NAME.match(text, at)
        assert name_match is not None  # it matches the empty string
        name = name_match.group().lower()
        position = name_match.end()
        attributes: list[tuple[str, str | None]] = []
        seen: set[str] = set()
        end = len(text)
        self_closing = False
        while True:
            space = _SPACE_OR_SLASH.match(text, position)
            assert space is not None
            position = space.end()
            if position >= end:
                return end  # an unfinished tag at the end of the page is not a tag
            if text[position] == ">":
                self_closing = space.group().endswith("/")
                position += 1
                break
            found = _ATTRIBUTE.match(text, position)
            assert found is not None  # the character here is neither space, '/' nor '>'
            if found.group(2) is not None and not found.group(3):
                return end  # an unfinished quoted value runs to the end: no tag
            if found.group(4) is not None and not found.group(5):
                return end
            position = found.end()
            attribute = found.group(1).lower()
            if attribute in seen:
                continue
            seen.add(attribute)
            value = next((v for v in found.group(2, 4, 6) if v is not None), None)
            attributes.append((attribute, None if value is None else unescape(value)))
        if closing:
            self.handle_endtag(name)
            return position
        if self_closing and name not in _RAW_TEXT:  # `<style/>` still starts a style sheet
            self.handle_startendtag(name, attributes)
            return position
        self.handle_starttag(name, attributes)
        if name in _RAW_TEXT:
            return self._raw_text(text, name, position)
        return position

    def _raw_text(self, text: str, name: str, at: int) -> int:
        """The content of a `script` or `style` up to its end tag, as it is; content with no
        end tag runs to the end of the page and is dropped (as `html.parser` drops it)."""
        closing = re.compile(rf"(?i)</{name}(?=[\t\n\f\r />])").search(text, at)
        if closing is None:
            return len(text)
        if closing.start() > at:
            self.handle_data(text[at : closing.start()])
        return self._tag(text, closing.start() + 2, closing=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """A start tag."""

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """A self-closing start tag (`<br/>`)."""

    def handle_endtag(self, tag: str) -> None:
        """An end tag."""

    def handle_data(self, data: str) -> None:
        """Text."""

    def handle_decl(self, decl: str) -> None:
        """A declaration (`<!DOCTYPE html>` gives "DOCTYPE html")."""


def _past(text: str, closing: str, at: int) -> int:
    """Where `closing` ends, searched from `at` (the end of the page when it is missing)."""
    found = text.find(closing, at)
    return len(text) if found < 0 else found + len(closing)
