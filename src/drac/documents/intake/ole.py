"""The names of an OLE compound file's top-level streams (how a legacy .xls is told apart)."""

from __future__ import annotations

import struct

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_FREE = 0xFFFFFFFF
_END_OF_CHAIN = 0xFFFFFFFE
_ENTRY_SIZE = 128
_STREAM, _STORAGE = 2, 1
# A chain longer than this is corrupt or hostile; no real document comes near it.
_MAX_CHAIN = 1 << 20


def root_stream_names(data: bytes) -> frozenset[str]:
    """Names of the streams and storages directly under the root of an OLE compound file.

    An unreadable or inconsistent file gives an empty set, never an exception.
    """
    try:
        return frozenset(_root_names(data))
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return frozenset()


def _root_names(data: bytes) -> list[str]:
    if not data.startswith(OLE_MAGIC) or len(data) < 512:
        return []
    shift = struct.unpack_from("<H", data, 0x1E)[0]
    if shift not in (9, 12):
        return []
    size = 1 << shift
    fat = _fat(data, size)
    first_directory = struct.unpack_from("<I", data, 0x30)[0]
    directory = b"".join(_sector(data, n, size) for n in _chain(fat, first_directory))
    entries = [
        directory[i : i + _ENTRY_SIZE]
        for i in range(0, len(directory) - _ENTRY_SIZE + 1, _ENTRY_SIZE)
    ]
    if not entries:
        return []
    root_child = struct.unpack_from("<I", entries[0], 0x4C)[0]
    names: list[str] = []
    pending, seen = [root_child], set()
    while pending:
        index = pending.pop()
        if index == _FREE or index in seen or index >= len(entries):
            continue
        seen.add(index)
        entry = entries[index]
        left, right = struct.unpack_from("<II", entry, 0x44)
        pending.extend((left, right))
        if entry[0x42] in (_STREAM, _STORAGE):
            length = min(64, struct.unpack_from("<H", entry, 0x40)[0])
            names.append(entry[: max(0, length - 2)].decode("utf-16-le"))
    return names


def _fat(data: bytes, size: int) -> list[int]:
    """The sector allocation table, gathered through the header's and the chained DIFAT."""
    fat_sectors = [n for n in struct.unpack_from("<109I", data, 0x4C) if n < _END_OF_CHAIN]
    next_difat = struct.unpack_from("<I", data, 0x44)[0]
    hops = 0
    while next_difat < _END_OF_CHAIN and hops < _MAX_CHAIN:
        sector = _sector(data, next_difat, size)
        values = struct.unpack(f"<{size // 4}I", sector)
        fat_sectors.extend(n for n in values[:-1] if n < _END_OF_CHAIN)
        next_difat = values[-1]
        hops += 1
    fat: list[int] = []
    for number in fat_sectors:
        fat.extend(struct.unpack(f"<{size // 4}I", _sector(data, number, size)))
    return fat


def _chain(fat: list[int], start: int) -> list[int]:
    chain: list[int] = []
    seen: set[int] = set()
    current = start
    while current < len(fat) and current not in seen and len(chain) < _MAX_CHAIN:
        seen.add(current)
        chain.append(current)
        current = fat[current]
    return chain


def _sector(data: bytes, number: int, size: int) -> bytes:
    offset = (number + 1) * size
    sector = data[offset : offset + size]
    if len(sector) != size:
        raise ValueError("sector beyond the end of the file")
    return sector
