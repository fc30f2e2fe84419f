"""Keep page images within a model API's per-image limits (bytes and pixels)."""

from __future__ import annotations

import io

from PIL import Image

from drac.errors import ModelCallError

BEDROCK_MAX_IMAGE_BYTES = int(3.75 * 1024 * 1024)
BEDROCK_MAX_IMAGE_SIDE = 8000
BEDROCK_MAX_IMAGES = 20


def fit_png(png: bytes, *, max_bytes: int, max_side: int) -> bytes:
    """Return the PNG unchanged when within limits, else a smaller re-encoding of it.

    Shrinks the longest side to `max_side`, then recompresses and downscales (grayscale
    when needed) until the PNG fits in `max_bytes`; ModelCallError if it cannot.
    """
    if len(png) <= max_bytes and _side(png) <= max_side:
        return png
    try:
        image: Image.Image = Image.open(io.BytesIO(png))
        image.load()
    except (OSError, Image.DecompressionBombError) as exc:
        raise ModelCallError(f"page image is not a readable PNG: {exc}") from exc
    if max(image.size) > max_side:
        image.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    for _ in range(8):
        encoded = _encode(image)
        if len(encoded) <= max_bytes:
            return encoded
        if image.mode not in ("L", "1"):
            image = image.convert("L")
            continue
        image = image.resize(
            (max(1, int(image.width * 0.8)), max(1, int(image.height * 0.8))),
            Image.Resampling.LANCZOS,
        )
    raise ModelCallError(f"page image cannot be made smaller than {max_bytes} bytes")


def _side(png: bytes) -> int:
    if png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) >= 24:
        return max(int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
    return 1 << 30  # unknown: let the full check decide


def _encode(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()
