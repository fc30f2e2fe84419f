"""Refuse ZIP containers (DOCX, PPTX, XLSX) that would spend memory or time before any limit
applies: decompression bombs, lying size headers, absurd numbers of members.

`check_archive` reads only the headers (the central directory, after its size and entry count
are checked from the end record); `check_inflation` also inflates every member in bounded
steps, counting bytes and discarding them, so no member is ever held whole in memory.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

from pydantic import BaseModel, ConfigDict, Field

from drac.errors import DocumentError

_MIB = 1024 * 1024


class ArchiveLimits(BaseModel):
    """What an Office container may hold.

    Office files measured: the evaluation corpus' 150 DOCX/PPTX files inflate at most 19.9:1
    per member and hold at most 98 members; a 200,000-row spreadsheet of identical cells
    written by LibreOffice inflates 24.5:1. Decompression bombs sit near deflate's ceiling of
    about 1,032:1.
    """

    model_config = ConfigDict(frozen=True)

    max_entries: int = Field(
        default=10_000, ge=1, description="members (a 1,000-slide deck has about 3,000)"
    )
    max_directory_bytes: int = Field(
        default=4 * _MIB, ge=1, description="central directory size: bounds the memory it takes"
    )
    max_total_bytes: int = Field(
        default=1024 * _MIB,
        ge=1,
        description="inflated size of all members: twice the 500 MiB file limit, since an "
        "honest file that large is mostly images, which do not compress",
    )
    max_ratio: float = Field(
        default=100.0, gt=1, description="inflated:compressed per member, 4x the most seen"
    )
    ratio_floor_bytes: int = Field(
        default=_MIB, ge=0, description="members smaller than this may have any ratio"
    )


DEFAULT_LIMITS = ArchiveLimits()
_END_RECORD = struct.Struct("<4s4H2LH")
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64_RECORD = struct.Struct("<4sQ2H2L4Q")
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_INFLATE_STEP = 64 * 1024
_OUTPUT_STEP = 4 * _MIB


def check_archive(data: bytes, limits: ArchiveLimits = DEFAULT_LIMITS) -> list[zipfile.ZipInfo]:
    """Return the members of a ZIP container whose headers are within `limits`.

    Raises DocumentError naming the member and the limit it breaks (or the damage found).
    """
    members = read_directory(data, limits)
    check_members(members, limits)
    return members


def read_directory(data: bytes, limits: ArchiveLimits = DEFAULT_LIMITS) -> list[zipfile.ZipInfo]:
    """Return the members of a ZIP container, its member count and directory size checked
    before the directory is parsed. Raises DocumentError when over a limit or damaged."""
    entries, directory_bytes = _directory_size(data)
    if entries > limits.max_entries:
        raise DocumentError(
            f"ZIP container has {entries:,} members, more than the {limits.max_entries:,} an "
            "Office file may have"
        )
    if directory_bytes > limits.max_directory_bytes:
        raise DocumentError(
            f"ZIP container's directory is {directory_bytes / _MIB:.1f} MiB, more than the "
            f"{limits.max_directory_bytes / _MIB:.0f} MiB an Office file may have"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise DocumentError(f"corrupt ZIP container (Office file?): {exc}") from exc
    if len(members) > limits.max_entries:
        raise DocumentError(
            f"ZIP container has {len(members):,} members, more than the "
            f"{limits.max_entries:,} an Office file may have"
        )
    return members


def check_members(members: list[zipfile.ZipInfo], limits: ArchiveLimits = DEFAULT_LIMITS) -> None:
    """Check each member's declared size, ratio, encryption and method, and their total.

    Raises DocumentError naming the first member over a limit.
    """
    total = 0
    for member in members:
        _check_member(member, limits)
        total += member.file_size
    if total > limits.max_total_bytes:
        raise DocumentError(
            f"ZIP members would inflate to {total / _MIB:,.0f} MiB in all, more than the "
            f"{limits.max_total_bytes / _MIB:,.0f} MiB limit (decompression bomb?)"
        )


def check_inflation(data: bytes, limits: ArchiveLimits = DEFAULT_LIMITS) -> None:
    """Check the headers (as `check_archive`) and that every member really inflates to the
    size it declares, never producing more than that.

    Raises DocumentError for a member that inflates to more (or less) than declared.
    """
    view = memoryview(data)
    for member in check_archive(data, limits):
        if member.is_dir() and member.file_size == 0:
            continue
        stream = view[_data_offset(data, member) :][: member.compress_size]
        produced = _inflated_size(stream, member, budget=member.file_size)
        if produced != member.file_size:
            relation = "more" if produced > member.file_size else f"{produced:,} bytes"
            raise DocumentError(
                f"ZIP member {_shown(member.filename)} declares {member.file_size:,} bytes but "
                f"inflates to {relation}: refused as a decompression bomb or damaged file"
            )


def _check_member(member: zipfile.ZipInfo, limits: ArchiveLimits) -> None:
    name = _shown(member.filename)
    if member.flag_bits & 0x1:
        raise DocumentError(f"ZIP member {name} is encrypted; Office files never are")
    if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise DocumentError(
            f"ZIP member {name} uses compression method {member.compress_type}; Office files "
            "use deflate or none"
        )
    if member.file_size >= limits.ratio_floor_bytes and member.file_size > 0:
        ratio = member.file_size / max(1, member.compress_size)
        if ratio > limits.max_ratio:
            raise DocumentError(
                f"ZIP member {name} would inflate {ratio:,.0f}:1 (to "
                f"{member.file_size / _MIB:,.0f} MiB), more than the {limits.max_ratio:g}:1 an "
                "Office file shows: refused as a decompression bomb"
            )
    if member.file_size > limits.max_total_bytes:
        raise DocumentError(
            f"ZIP member {name} would inflate to {member.file_size / _MIB:,.0f} MiB, more than "
            f"the {limits.max_total_bytes / _MIB:,.0f} MiB limit (decompression bomb?)"
        )


def _directory_size(data: bytes) -> tuple[int, int]:
    """Member count and central directory size from the end record (zip64 too).

    Read before zipfile parses the directory, whose cost grows with both.
    """
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - _END_RECORD.size - 65535))
    if at < 0 or at + _END_RECORD.size > len(data):
        raise DocumentError("corrupt ZIP container (Office file?): no end of central directory")
    fields = _END_RECORD.unpack_from(data, at)
    entries, directory_bytes = fields[4], fields[5]
    if entries != 0xFFFF and directory_bytes != 0xFFFFFFFF:
        return entries, directory_bytes
    locator = at - _END64_LOCATOR.size
    if locator < 0 or data[locator : locator + 4] != b"PK\x06\x07":
        return entries, directory_bytes
    record = _END64_LOCATOR.unpack_from(data, locator)[2]
    if record + _END64_RECORD.size > len(data) or data[record : record + 4] != b"PK\x06\x06":
        raise DocumentError("corrupt ZIP container (Office file?): bad zip64 end record")
    fields64 = _END64_RECORD.unpack_from(data, record)
    return fields64[7], fields64[8]


def _data_offset(data: bytes, member: zipfile.ZipInfo) -> int:
    start = member.header_offset
    if start + _LOCAL_HEADER.size > len(data):
        raise DocumentError(f"corrupt ZIP container: member {_shown(member.filename)} is cut off")
    header = _LOCAL_HEADER.unpack_from(data, start)
    if header[0] != b"PK\x03\x04":
        raise DocumentError(f"corrupt ZIP container: bad header for {_shown(member.filename)}")
    return start + _LOCAL_HEADER.size + header[9] + header[10]


def _inflated_size(stream: memoryview, member: zipfile.ZipInfo, budget: int) -> int:
    """Bytes the member's stream inflates to, counting no further than `budget` + 1."""
    if member.compress_type == zipfile.ZIP_STORED:
        return len(stream)
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    produced = 0
    try:
        for offset in range(0, len(stream), _INFLATE_STEP):
            pending: bytes | memoryview = stream[offset : offset + _INFLATE_STEP]
            while pending:
                produced += len(inflater.decompress(pending, _OUTPUT_STEP))
                if produced > budget:
                    return produced
                pending = inflater.unconsumed_tail
            if inflater.eof:
                break
        produced += len(inflater.flush())
    except zlib.error as exc:
        raise DocumentError(
            f"corrupt ZIP container: member {_shown(member.filename)} does not inflate ({exc})"
        ) from exc
    return produced


def _shown(name: str) -> str:
    """A member name fit for a message: quoted, control characters escaped, cut at 80."""
    return repr(name if len(name) <= 80 else name[:79] + "…")
