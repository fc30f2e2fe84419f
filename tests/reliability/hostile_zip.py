"""Write ZIP containers byte by byte, so tests can build archives no honest writer makes:
entries that inflate to gigabytes from a few kilobytes, sizes that lie, many entries.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

DEFLATED = 8
STORED = 0
_MIB = 1024 * 1024


@dataclass(frozen=True)
class RawEntry:
    """One archive member: its compressed stream and what the headers declare about it."""

    name: str
    stream: bytes
    crc: int
    size: int
    method: int = DEFLATED
    declared_size: int | None = None
    """What the headers claim the entry inflates to (default: its real size)."""
    flags: int = 0


def deflated(data: bytes, name: str) -> RawEntry:
    """An honest deflated entry holding `data`."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    stream = compressor.compress(data) + compressor.flush()
    return RawEntry(name, stream, zlib.crc32(data), len(data))


def filler_entry(
    name: str,
    mebibytes: int,
    *,
    fill: bytes = b"\0",
    prefix: bytes = b"",
    suffix: bytes = b"",
    declared_size: int | None = None,
) -> RawEntry:
    """An entry inflating to prefix, `mebibytes` MiB of `fill`, suffix; built in milliseconds.

    A full flush ends each segment on a byte boundary with no back-reference across it, so
    one compressed MiB of filler repeated is a valid stream of many MiB (about 1,000:1).
    """
    block = fill * (_MIB // len(fill))

    def segment(data: bytes, last: bool = False) -> bytes:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(data) + compressor.flush(
            zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH
        )

    stream = segment(prefix) + segment(block) * mebibytes + segment(suffix, last=True)
    crc = zlib.crc32(prefix)
    for _ in range(mebibytes):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(suffix, crc)
    size = len(prefix) + len(block) * mebibytes + len(suffix)
    return RawEntry(name, stream, crc, size, declared_size=declared_size)


def zip_bytes(entries: list[RawEntry], *, zip64_end: bool = False) -> bytes:
    """A ZIP archive of the given entries (sizes under 4 GiB). With `zip64_end` the member
    count and directory size are only in a zip64 end record (the classic one says 0xFFFF)."""
    body = bytearray()
    directory = bytearray()
    for entry in entries:
        name = entry.name.encode()
        declared = entry.size if entry.declared_size is None else entry.declared_size
        offset = len(body)
        body += struct.pack(
            "<4s5H3L2H", b"PK\x03\x04", 20, entry.flags, entry.method, 0, 0x21,
            entry.crc, len(entry.stream), declared, len(name), 0,
        )  # fmt: skip
        body += name + entry.stream
        directory += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, entry.flags, entry.method, 0, 0x21,
            entry.crc, len(entry.stream), declared, len(name), 0, 0, 0, 0, 0, offset,
        )  # fmt: skip
        directory += name
    count = 0xFFFF if zip64_end else len(entries)
    zip64 = b""
    if zip64_end:
        record = len(body) + len(directory)
        zip64 = struct.pack(
            "<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, len(entries), len(entries),
            len(directory), len(body),
        ) + struct.pack("<4sLQL", b"PK\x06\x07", 0, record, 1)  # fmt: skip
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(body), 0,
    )  # fmt: skip
    return bytes(body + directory + zip64 + end)
