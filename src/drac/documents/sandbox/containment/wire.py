"""The pipe protocol between drac and a contained worker: length-prefixed frames over plain
OS pipes (no /dev/shm, no multiprocessing: it works in Lambda too).

A frame is a 4-byte big-endian header length, a JSON header, then the raw byte strings the
header refers to (`{"$b": n}` stands for the n-th, `"blobs"` gives their lengths). What a
worker sends is only ever read as JSON plus bytes: a worker that a hostile document took
over can send wrong data, never code (no pickle in that direction).
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

MAX_HEADER_BYTES = 64 * 1024 * 1024
MAX_FRAME_BYTES = 1024 * 1024 * 1024
"""The most a worker may send in one frame (a page image, a document's Markdown)."""
_LENGTH = struct.Struct(">I")
_BLOB = "$b"


class WireError(Exception):
    """The other side closed the pipe, sent a malformed frame, or was too slow."""


class Timeout(WireError):
    """No complete frame arrived before the deadline."""


def encode(value: object, blobs: list[bytes]) -> object:
    """`value` as JSON-ready data, its byte strings moved to `blobs`."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        blobs.append(bytes(value))
        return {_BLOB: len(blobs) - 1}
    if isinstance(value, dict):
        if _BLOB in value:
            raise TypeError(f"a dict key {_BLOB!r} cannot be sent")
        return {str(key): encode(item, blobs) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(item, blobs) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    dump = getattr(value, "model_dump", None)  # pydantic models travel as their fields
    if callable(dump):
        return encode(dump(), blobs)
    raise TypeError(f"{type(value).__name__} cannot be sent over the worker pipe")


def decode(value: object, blobs: list[bytes]) -> Any:
    """The inverse of `encode` (lists stay lists)."""
    if isinstance(value, dict):
        if set(value) == {_BLOB}:
            index = value[_BLOB]
            if not isinstance(index, int) or not 0 <= index < len(blobs):
                raise WireError("frame refers to a missing byte string")
            return blobs[index]
        return {key: decode(item, blobs) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item, blobs) for item in value]
    return value


def pack(header: dict[str, Any], blobs: list[bytes] | None = None) -> bytes:
    """One frame of `header` (already encoded) and its byte strings."""
    blobs = blobs or []
    body = json.dumps({**header, "blobs": [len(blob) for blob in blobs]}).encode()
    return b"".join([_LENGTH.pack(len(body)), body, *blobs])


def send(fd: int, header: dict[str, Any], value: object = None) -> None:
    """Write one frame holding `header` and `value` (as "value") to `fd`, whole."""
    blobs: list[bytes] = []
    frame = pack({**header, "value": encode(value, blobs)}, blobs)
    view = memoryview(frame)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def receive(fd: int, deadline: float | None = None) -> dict[str, Any]:
    """Read one frame from `fd`; its header with "value" decoded. Raises Timeout when the
    deadline (a time.monotonic() value) passes first, WireError when the pipe closes or
    the frame is malformed or too large."""
    (length,) = _LENGTH.unpack(_read(fd, _LENGTH.size, deadline))
    if length > MAX_HEADER_BYTES:
        raise WireError(f"frame header of {length} bytes")
    try:
        header = json.loads(_read(fd, length, deadline))
        sizes = header.pop("blobs")
        if not isinstance(header, dict) or not all(isinstance(n, int) and n >= 0 for n in sizes):
            raise ValueError("bad blob sizes")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise WireError(f"malformed frame: {exc}") from exc
    if sum(sizes) > MAX_FRAME_BYTES:
        raise WireError(f"frame of {sum(sizes)} bytes, more than {MAX_FRAME_BYTES}")
    blobs = [_read(fd, size, deadline) for size in sizes]
    header["value"] = decode(header.get("value"), blobs)
    return header


def _read(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise Timeout("no answer before the deadline")
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise WireError("the pipe was closed")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
