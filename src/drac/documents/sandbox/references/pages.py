"""HTML written again from a linear parse (`html_tokens`): only tags and attributes with
plain names, text escaped, without scripts, frames, objects, base, stylesheets, refresh, event
handlers and every resource URL (CSS `url()` and `@import` in `<style>` and `style=""`
included); links keep their text, raster `data:` images stay."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from drac.documents.sandbox.references.html_tokens import HtmlTokenizer
from drac.documents.sandbox.references.kinds import (
    FRAME,
    HYPERLINK,
    IMAGE_LINK,
    OTHER,
    SCRIPT,
    STYLESHEET,
    removal_warning,
)
from drac.documents.sandbox.references.targets import is_raster_data


@dataclass
class Cleaned:
    """A document with its external references removed, and how many of each kind were."""

    data: bytes
    removed: Counter[str] = field(default_factory=Counter)

    @property
    def warning(self) -> str | None:
        """One sentence naming what was removed, or None when nothing was."""
        return removal_warning(self.removed)


_DROPPED_WITH_CONTENT = {
    "script": SCRIPT,
    "iframe": FRAME,
    "frameset": FRAME,
    "object": FRAME,
    "applet": FRAME,
    "noembed": FRAME,
    "template": OTHER,
}
_DROPPED_ALONE = {"embed": FRAME, "frame": FRAME, "base": OTHER, "link": STYLESHEET}
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
     "source", "track", "wbr", "frame", "keygen", "image", "bgsound"}
)  # fmt: skip
_URL_ATTRIBUTES = frozenset(
    {"src", "srcset", "href", "background", "lowsrc", "dynsrc", "poster", "data", "codebase",
     "archive", "cite", "longdesc", "action", "formaction", "icon", "manifest", "profile",
     "classid", "code", "usemap", "ping", "xlink:href", "imagesrcset", "datasrc", "content"}
)  # fmt: skip
_IMAGE_ATTRIBUTES = frozenset(
    {"src", "srcset", "background", "lowsrc", "dynsrc", "poster", "imagesrcset"}
)
_MEDIA_TAGS = frozenset(
    {"img", "image", "input", "video", "audio", "source", "track", "use", "feimage", "picture"}
)
_TAG_NAME = re.compile(r"^[a-z][a-z0-9:-]*$")
_ATTRIBUTE_NAME = re.compile(r"^[a-z_:][a-z0-9_:.-]*$")
_CSS_IMPORT = re.compile(r"(?i)@import\b[^;]*;?")
_CSS_URL = re.compile(r"""(?i)url\s*\(\s*("[^"]*"?|'[^']*'?|[^)"']*)\s*\)?""")
"""A `url(` to its `)`, or to the end when it has none (as CSS reads it): every match
succeeds once `url(` is found, so nothing is scanned twice (requiring the `)` made 60,000
unclosed `url(` cost minutes)."""
_CDO_CDC = re.compile(r"<!--|-->")
"""What old pages put around a style sheet to hide it from older browsers; CSS skips them."""
_CSS_LEFTOVER = re.compile(r"(?i)url\s*\(|@import|image-set\s*\(|expression\s*\(")
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})\s?|(.))", re.S)
_CSS_COMMENT = re.compile(r"/\*.*?(\*/|$)", re.S)
_CHARSET = re.compile(rb"""(?i)charset\s*=\s*["']?\s*([a-z0-9_.:-]+)""")


def clean_html(data: bytes) -> Cleaned:
    """The page (bytes in any charset it declares) written again as UTF-8 without its
    external references, with what was removed."""
    cleaner = _HtmlCleaner()
    cleaner.parse(_decoded_html(data))
    return Cleaned(("\ufeff" + "".join(cleaner.out)).encode("utf-8"), cleaner.removed)


def _decoded_html(data: bytes) -> str:
    """The page's text: by its byte order mark, else its declared charset, else UTF-8, else
    Windows-1252 (what browsers fall back to)."""
    for mark, codec in (
        (b"\xef\xbb\xbf", "utf-8"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    ):
        if data.startswith(mark):
            return data[len(mark) :].decode(codec, "replace")
    declared = _CHARSET.search(data[:4096])
    if declared:
        try:
            return data.decode(declared.group(1).decode("ascii"), "replace")
        except LookupError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


class _HtmlCleaner(HtmlTokenizer):
    """Writes the page again from its parse: known-safe tags and attributes only."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.removed: Counter[str] = Counter()
        self._skipping: list[str] = []
        self._in_style = 0
        self._wrote_charset = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, closed=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, closed=True)

    def _open(self, tag: str, attrs: list[tuple[str, str | None]], *, closed: bool) -> None:
        if self._skipping:
            if tag == self._skipping[-1] and not closed:
                self._skipping.append(tag)
            return
        if not _TAG_NAME.match(tag):
            return
        if tag in _DROPPED_WITH_CONTENT:
            self.removed[_DROPPED_WITH_CONTENT[tag]] += 1
            if not closed:
                self._skipping.append(tag)
            return
        if tag in _DROPPED_ALONE:
            self.removed[_DROPPED_ALONE[tag]] += 1
            return
        if tag == "meta" and not self._keeps_meta(attrs):
            return
        kept = self._attributes(tag, attrs)
        text = "".join(f' {name}="{_html_attribute(value)}"' for name, value in kept)
        self.out.append(f"<{tag}{text}{' /' if closed else ''}>")
        if tag == "head" and not self._wrote_charset:
            self.out.append('<meta http-equiv="Content-Type" content="text/html; charset=utf-8">')
            self._wrote_charset = True
        if tag == "style" and not closed:
            self._in_style += 1

    def _keeps_meta(self, attrs: list[tuple[str, str | None]]) -> bool:
        """Meta tags stay but for refresh (a fetch) and charsets (the page is now UTF-8)."""
        names = {name.lower(): (value or "") for name, value in attrs}
        equiv = names.get("http-equiv", "").strip().lower()
        if equiv == "refresh":
            self.removed[OTHER] += 1
            return False
        return "charset" not in names and equiv != "content-type"

    def _attributes(self, tag: str, attrs: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
        kept: list[tuple[str, str]] = []
        for raw_name, raw_value in attrs:
            name = raw_name.lower()
            value = raw_value or ""
            if not _ATTRIBUTE_NAME.match(name) or name.startswith("on"):
                continue  # event handlers run macros; odd names cannot be written back safely
            if name == "style":
                value = self._css(value)
            elif name in _URL_ATTRIBUTES and (name != "content" or tag == "meta"):
                kind = self._url_kind(tag, name, value)
                if kind is not None:
                    self.removed[kind] += 1
                    continue
            elif ":" in name and name.endswith("href"):
                self.removed[IMAGE_LINK] += 1
                continue
            kept.append((name, value))
        return kept

    def _url_kind(self, tag: str, name: str, value: str) -> str | None:
        """What a URL attribute is when it must go; None for what stays (an in-page `#`
        link, a `data:` image, a meta tag's plain content)."""
        text = value.strip()
        if tag == "meta":
            return OTHER if "url" in text.lower() else None
        if name in ("href", "usemap") and text.startswith("#"):
            return None
        if name == "src" and is_raster_data(text):
            return None
        if tag in ("a", "area"):
            return HYPERLINK
        if name in _IMAGE_ATTRIBUTES or tag in _MEDIA_TAGS:
            return IMAGE_LINK
        if name in ("data", "codebase", "archive", "classid", "code"):
            return FRAME
        return OTHER

    def _css(self, text: str) -> str:
        original = text
        text = _CSS_COMMENT.sub("", _CSS_ESCAPE.sub(_unescaped, text))
        imports = len(_CSS_IMPORT.findall(text))
        text = _CSS_IMPORT.sub("", text)

        def url(match: re.Match[str]) -> str:
            inner = match.group(1).strip("\"' \t")
            if is_raster_data(inner):
                return match.group(0)
            self.removed[IMAGE_LINK] += 1
            return "none"

        text = _CSS_URL.sub(url, text)
        if imports:
            self.removed[STYLESHEET] += imports
        if _CSS_LEFTOVER.search(_CSS_URL.sub("", text)) or "://" in text:
            self.removed[OTHER] += 1
            return ""
        return original if text == original else text

    def handle_endtag(self, tag: str) -> None:
        if self._skipping:
            if tag == self._skipping[-1]:
                self._skipping.pop()
            return
        if not _TAG_NAME.match(tag) or tag in _VOID or tag in _DROPPED_ALONE:
            return
        if tag == "style" and self._in_style:
            self._in_style -= 1
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if self._in_style:
            css = _CDO_CDC.sub("", self._css(data))
            if "<" in css:
                # no markup inside a style sheet: a reader that took it for a tag could load
                # what it names (CSS itself never needs a '<' outside a string)
                self.removed[OTHER] += 1
                return
            self.out.append(css)
        else:
            self.out.append(data.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))

    def handle_decl(self, decl: str) -> None:
        if decl.lower().startswith("doctype"):
            self.out.append("<!DOCTYPE html>")


def _unescaped(match: re.Match[str]) -> str:
    """A CSS escape as the character it stands for (so `u\\72l(` is seen as `url(`)."""
    if match.group(1):
        code = int(match.group(1), 16)
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return match.group(2)


def _html_attribute(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )
