"""Office containers are checked before anything inflates them, and LibreOffice never sees a
refused one."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest
from hostile_office import docx, docx_bomb, docx_many_entries, docx_padded
from hostile_zip import deflated, filler_entry, zip_bytes

from drac.documents.intake.archive import ArchiveLimits, check_archive, check_inflation
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.documents.intake.normalise import normalise_to_pdf
from drac.errors import DocumentError


@pytest.fixture
def no_libreoffice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A LibreOffice stand-in that records being called."""
    called = tmp_path / "called"
    script = tmp_path / "soffice"
    script.write_text(f"#!/bin/sh\ntouch {called}\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("DRAC_SOFFICE", str(script))
    return called


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (docx_bomb(1900), r"inflate 1,010:1 \(to 1,900 MiB\), more than the 100:1"),
        (docx_bomb(1900, declared_size=4096), "declares 4,096 bytes but inflates to more"),
        (docx_padded(20), r"'word/media/pad.bin' would inflate 1,0\d\d:1"),
        (docx_many_entries(20_000), "20,003 members, more than the 10,000"),
    ],
    ids=["bomb", "lying header", "padding", "many members"],
)
def test_a_hostile_docx_is_refused_in_milliseconds_before_libreoffice(
    data: bytes, reason: str, no_libreoffice: Path
) -> None:
    started = time.perf_counter()
    with pytest.raises(DocumentError, match=reason):
        normalise_to_pdf(data, detect_format(data, "x.docx").format)
    assert time.perf_counter() - started < 1.0
    assert not no_libreoffice.exists()


def test_a_bomb_is_still_detected_as_the_docx_it_is() -> None:
    assert detect_format(docx_bomb(1900), "report.docx").format is DocumentFormat.DOCX


def test_too_many_members_are_refused_by_detection_before_the_directory_is_parsed() -> None:
    with pytest.raises(DocumentError, match="members, more than the 10,000"):
        detect_format(docx_many_entries(20_000), "x.docx")


def test_an_honest_docx_passes_every_check() -> None:
    data = docx(["Plain text."] * 50)
    assert {m.filename for m in check_archive(data)} >= {"word/document.xml"}
    check_inflation(data)


def test_a_large_member_with_an_office_like_ratio_passes() -> None:
    text = b"".join(b"<w:p><w:t>row %d of a long table</w:t></w:p>" % i for i in range(200_000))
    data = zip_bytes([deflated(text, "word/document.xml")])
    check_inflation(data)  # about 10 MB at roughly 12:1


def test_limits_are_configurable_and_named_in_the_reason() -> None:
    data = zip_bytes([filler_entry("word/document.xml", 3, fill=b"ab")])
    with pytest.raises(DocumentError, match="more than the 2 MiB limit"):
        check_archive(data, ArchiveLimits(max_total_bytes=2 * 1024 * 1024, max_ratio=10_000))


def test_a_zip64_end_record_gives_the_member_count() -> None:
    members = [deflated(b"<w:document/>", "word/document.xml")]
    check_inflation(zip_bytes(members, zip64_end=True))
    many = [deflated(b"", f"part{index}.xml") for index in range(10_001)]
    with pytest.raises(DocumentError, match="10,001 members"):
        check_archive(zip_bytes(many, zip64_end=True))


def test_a_member_that_inflates_to_less_than_declared_is_damaged() -> None:
    honest = deflated(b"x" * 1000, "word/document.xml")
    short = honest.__class__(**{**honest.__dict__, "declared_size": 2000})
    with pytest.raises(DocumentError, match="declares 2,000 bytes but inflates to 1,000 bytes"):
        check_inflation(zip_bytes([short]))


def test_member_names_in_reasons_are_quoted_and_cut() -> None:
    name = "word/" + "[/]" * 100
    data = zip_bytes([filler_entry(name, 2)])
    with pytest.raises(DocumentError) as caught:
        check_archive(data)
    assert "'word/[/][/]" in str(caught.value) and "…'" in str(caught.value)
