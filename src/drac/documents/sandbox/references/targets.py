"""Where a reference leads: inside the document, or out of it."""

from __future__ import annotations

import re
from posixpath import normpath
from urllib.parse import unquote

_RASTER_DATA = re.compile(r"(?i)^data:image/(?:png|jpe?g|gif|bmp|webp|tiff?)[;,]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def is_raster_data(url: str) -> bool:
    """True for a `data:` URL of a raster image: its pixels are inside it. An SVG or any
    other kind could itself point at files (LibreOffice's SVG reader opens linked images)."""
    return bool(_RASTER_DATA.match(url.strip()))


def points_outside(target: str, *, base: str | None = None) -> bool:
    """True when a reference (a URL, a path) leads out of the package: any URL but a `data:`
    raster image, an absolute or network path, a backslash, or `..` above the package root.

    `base` is the folder of the part an OOXML relationship belongs to (absolute part names
    like "/word/media/x.png" stay inside); None for ODF, where "/" and "../" lead outside.
    """
    text = unquote(target).strip(" \t\r\n\f\v\x00")
    if not text or text.startswith("#"):
        return False
    if _SCHEME.match(text):
        return not is_raster_data(text)
    if "\\" in text or text.startswith("//") or any(ord(ch) < 32 for ch in text):
        return True
    if base is None:
        if text.startswith("/"):
            return True
        path = normpath(text)
    else:
        path = normpath(text.lstrip("/") if text.startswith("/") else f"{base}/{text}")
    return path == ".." or path.startswith("../") or path.startswith("/")
