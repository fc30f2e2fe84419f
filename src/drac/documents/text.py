"""Text sources decoded the one way every text path reads them."""

from __future__ import annotations

from drac.errors import DocumentError


def decode_text(data: bytes) -> str:
    """Return UTF-8 bytes (BOM allowed) as text with "\\n" newlines; DocumentError otherwise."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"not valid UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from exc
    if "\x00" in text:
        raise DocumentError("not valid UTF-8 text: binary content (NUL bytes)")
    return text.replace("\r\n", "\n").replace("\r", "\n")
