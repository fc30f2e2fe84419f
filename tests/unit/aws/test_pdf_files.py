"""A converter's PDF in the function's /tmp: streamed from S3 to a file of this user's own
folder, read there by the pdfium worker, removed when the invocation is done with it; a PDF
larger than the storage left fails with the sizes named."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from pdfs import Text, make_pdf, text_page

from drac.aws import keys, pdf_files
from drac.aws.errors import ObjectTooLarge
from drac.aws.pdf_files import STALE_AFTER_S, pdf_file, pdf_folder
from drac.aws.stages.conversion import SliceInput, render_slice
from drac.aws.stages.fanout import ItemGroup
from drac.errors import DocumentError


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The function's /tmp."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_a_slice_renders_from_a_file_it_removes(cloud: Any, tmp: Path) -> None:
    rt, _ = cloud
    pdf = make_pdf([text_page([Text(f"Page {n}", 72, 700)]) for n in range(1, 6)])
    rt.artifacts.put_bytes("in.pdf", pdf)
    done = render_slice(
        rt,
        SliceInput(
            document_id="d1",
            page_count=5,
            pdf_bucket="art",
            pdf_key="in.pdf",
            slice=ItemGroup(first=0, last=2),
        ),
    )
    assert done.pages == 5
    assert rt.artifacts.get_bytes(keys.page_key("d1", 5))[:4] == b"\x89PNG"
    folder = tmp / f"drac-pdfs-{os.getuid()}"
    assert folder.is_dir()  # the PDF went through a file there ...
    assert list(folder.iterdir()) == []  # ... removed once the slice was done
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_pdf_larger_than_the_storage_left_fails_named_before_a_byte_is_written(
    cloud: Any, tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, _ = cloud
    rt.artifacts.put_bytes("in.pdf", b"%PDF-1.7\n" + os.urandom(3 * 1024 * 1024))
    usage = shutil.disk_usage(tmp)
    monkeypatch.setattr(pdf_files.shutil, "disk_usage", lambda _: usage._replace(free=1024 * 1024))
    with pytest.raises(DocumentError) as refused, pdf_file(rt.artifacts, "in.pdf", None):
        pass
    assert str(refused.value) == (
        "the PDF is 3 MiB, more than the 1 MiB left in the function's ephemeral storage"
        " (/tmp): raise the function's ephemeralStorageSize"
    )
    assert list(pdf_folder().iterdir()) == []
    sink = tmp / "sink"
    with sink.open("wb") as out, pytest.raises(ObjectTooLarge):
        rt.artifacts.download("in.pdf", out, max_bytes=1024)
    assert sink.stat().st_size == 0  # the adapter wrote nothing past its limit


def test_a_file_left_by_a_stopped_invocation_is_removed(cloud: Any, tmp: Path) -> None:
    rt, _ = cloud
    rt.artifacts.put_bytes("in.pdf", make_pdf([(612, 792)]))
    folder = pdf_folder()
    stale, current = folder / "stale.pdf", folder / "current.pdf"
    for path in (stale, current):
        path.write_bytes(b"%PDF")
    past = time.time() - STALE_AFTER_S - 60
    os.utime(stale, (past, past))
    with pdf_file(rt.artifacts, "in.pdf", None) as pdf:
        assert pdf.read_bytes()[:5] == b"%PDF-"
        assert not stale.exists()  # older than any invocation can be
        assert current.exists()  # another invocation's, still in use
    assert not pdf.exists()


def test_a_link_in_place_of_the_folder_is_refused(tmp: Path) -> None:
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    (tmp / f"drac-pdfs-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(RuntimeError, match="not a folder of this user's"):
        pdf_folder()
