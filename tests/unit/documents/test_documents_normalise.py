import contextlib
import io
import os
import stat
import threading
import time
from pathlib import Path

import pytest
from pdfs import make_pdf
from PIL import Image
from reliability.hostile_links import package

from drac.documents.intake import normalise
from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import image_to_pdf, libreoffice_to_pdf, normalise_to_pdf
from drac.documents.pdf.render import page_count, render_pages
from drac.documents.sandbox.containment import BudgetExceeded, document_budget
from drac.errors import DocumentError

# a package LibreOffice stand-ins are given: the reference sanitizer refuses anything not a ZIP
PACKAGE = package({"[Content_Types].xml": "<Types/>"})


def _png(size=(400, 200), mode="RGBA", dpi=None) -> bytes:
    buffer = io.BytesIO()
    extra = {"dpi": (dpi, dpi)} if dpi else {}
    Image.new(mode, size, (0, 0, 0, 0) if mode == "RGBA" else 0).save(buffer, "PNG", **extra)
    return buffer.getvalue()


def test_a_pdf_passes_through_unchanged():
    pdf = make_pdf([(100, 100)])
    assert normalise_to_pdf(pdf, DocumentFormat.PDF) is pdf


def test_an_image_becomes_a_one_page_pdf_sized_by_its_dpi():
    pdf = image_to_pdf(_png((400, 200), dpi=100))
    [page] = list(render_pages(pdf))
    assert (page.width_pt, page.height_pt) == pytest.approx((288, 144), abs=0.01)
    assert page.text_chars == 0


def test_an_image_without_dpi_is_placed_at_200_dpi():
    [page] = list(render_pages(image_to_pdf(_png((400, 200), mode="L"))))
    assert page.width_pt == pytest.approx(144)
    assert (page.width_px, page.height_px) == (400, 200)


def test_a_multi_page_tiff_becomes_one_page_per_frame():
    buffer = io.BytesIO()
    frames = [Image.new("L", (100, 100), shade) for shade in (0, 128, 255)]
    frames[0].save(buffer, "TIFF", save_all=True, append_images=frames[1:])
    assert page_count(normalise_to_pdf(buffer.getvalue(), DocumentFormat.TIFF)) == 3


def test_a_decompression_bomb_is_refused():
    with pytest.raises(DocumentError, match="decompression bomb"):
        image_to_pdf(_png((3000, 3000), mode="L"), max_pixels=1_000_000)


def test_a_broken_image_is_a_document_error():
    with pytest.raises(DocumentError, match="image"):
        image_to_pdf(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)


def test_text_formats_are_not_normalised():
    with pytest.raises(DocumentError, match="as-is"):
        normalise_to_pdf(b"# x", DocumentFormat.MARKDOWN)


@pytest.fixture(autouse=True)
def _fakes_may_write_their_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake LibreOffices write pid files to tmp_path; the real one may write only its work
    folder (the guard's Landlock policy)."""
    monkeypatch.setattr(normalise, "LIBREOFFICE_WRITABLE", [str(tmp_path)])


def _fake_soffice(tmp_path: Path, body: str) -> str:
    script = tmp_path / "soffice"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.subprocess
def test_a_libreoffice_timeout_kills_the_whole_process_group(tmp_path, monkeypatch):
    pid_file = tmp_path / "child.pid"
    # The fake LibreOffice starts a grandchild that would outlive a plain kill of the parent.
    soffice = _fake_soffice(tmp_path, f"sleep 60 &\necho $! > {pid_file}\nwait\n")
    monkeypatch.setenv("DRAC_SOFFICE", soffice)
    started = time.monotonic()
    with pytest.raises(DocumentError, match=r"timed out after 0.5 s converting the DOCX"):
        libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=0.5)
    assert time.monotonic() - started < 10
    child = int(pid_file.read_text())
    time.sleep(0.2)
    assert _gone_or_zombie(child)


def _gone_or_zombie(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status  # killed, waiting for its new parent to reap it


@pytest.mark.subprocess
def test_libreoffice_producing_nothing_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "DRAC_SOFFICE",
        _fake_soffice(tmp_path, "echo 'Error: source file could not be loaded' >&2\n"),
    )
    with pytest.raises(DocumentError, match=r"could not convert the PPTX.*could not be loaded"):
        libreoffice_to_pdf(PACKAGE, ".pptx", timeout_s=5)


@pytest.mark.subprocess
def test_a_missing_libreoffice_is_named(monkeypatch):
    monkeypatch.setenv("DRAC_SOFFICE", "/nonexistent/soffice")
    with pytest.raises(DocumentError, match="cannot start LibreOffice"):
        libreoffice_to_pdf(PACKAGE, ".xlsx", timeout_s=5)


def _work_folder(parent: Path, name: str, mark: str | None, age_s: float = 0.0) -> Path:
    folder = parent / f"drac-lo-{name}"
    folder.mkdir()
    if mark is not None:
        (folder / ".drac-owner").write_text(mark)
    then = time.time() - age_s
    os.utime(folder, (then, then))
    return folder


def test_sweeping_beside_a_conversion_whose_mark_is_half_written_keeps_it(tmp_path):
    # CI found it: two Normalise calls at once, one sweeping while the other's mark was empty
    being_claimed = _work_folder(tmp_path, "claiming", "")
    garbled = _work_folder(tmp_path, "garbled", "not a pid")
    normalise._sweep_stale(tmp_path)
    assert being_claimed.is_dir() and garbled.is_dir()


def test_sweeping_removes_only_folders_whose_process_is_gone(tmp_path):
    mine = _work_folder(tmp_path, "mine", normalise._process_identity(os.getpid()))
    dead = _work_folder(tmp_path, "dead", "999999999 1")
    abandoned = _work_folder(tmp_path, "abandoned", "", age_s=2 * 3600)
    normalise._sweep_stale(tmp_path)
    assert mine.is_dir()
    assert not dead.exists() and not abandoned.exists()


def test_a_claim_is_never_seen_half_written(tmp_path):
    seen: list[str] = []
    stop = threading.Event()

    def read_marks() -> None:
        while not stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                seen.append((tmp_path / ".drac-owner").read_text())

    reader = threading.Thread(target=read_marks)
    reader.start()
    for _ in range(300):
        normalise._claim(tmp_path)
    stop.set()
    reader.join()
    assert seen and all(mark.strip() for mark in seen)
    assert [path.name for path in tmp_path.iterdir()] == [".drac-owner"]


@pytest.mark.subprocess
def test_libreoffice_is_charged_to_the_document_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, _SPIN_FOR_A_SECOND))
    with document_budget(100.0) as budget, pytest.raises(DocumentError, match="could not"):
        libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=30)
    assert budget is not None and 0.8 <= budget.used_s < 5


@pytest.mark.subprocess
def test_libreoffice_past_the_document_budget_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, "while :; do :; done\n"))
    started = time.monotonic()
    with document_budget(2.0), pytest.raises(BudgetExceeded) as failure:
        libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=60)
    assert "used its 2 s CPU budget converting the DOCX to PDF with LibreOffice" in str(
        failure.value
    )
    assert time.monotonic() - started < 40  # stopped by the budget, not the 60 s timeout
    with document_budget(2.0) as budget, pytest.raises(BudgetExceeded, match="before"):
        assert budget is not None
        budget.charge(2.0)
        libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=60)  # nothing left: never started


@pytest.mark.subprocess
def test_a_timed_out_libreoffice_is_charged_what_its_killed_processes_used(tmp_path, monkeypatch):
    # a spinning grandchild, orphaned when the group is killed: the guard reaps it (subreaper)
    soffice = _fake_soffice(tmp_path, "sh -c 'while :; do :; done' &\nwait\n")
    monkeypatch.setenv("DRAC_SOFFICE", soffice)
    with document_budget(100.0) as budget, pytest.raises(DocumentError, match="timed out"):
        libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=3)
    # seconds of spinning on a shared machine; a lost orphan would count about 0.003 s
    assert budget is not None and budget.used_s >= 0.2


_SYSTEM_PYTHON = "/usr/bin/python3"  # LibreOffice's Landlock rules let it read /usr only
_SPIN_FOR_A_SECOND = (
    f"{_SYSTEM_PYTHON} -I -S -c 'import time\nwhile time.process_time() < 1: pass'\n"
)


def test_a_black_and_white_tiff_becomes_pages():
    # mode "1" (fax scans): Pillow's PDF writer refused it ("quality setting only supported
    # for 'jpeg' compression"), an unexpected error
    buffer = io.BytesIO()
    frames = [Image.new("1", (64, 32), 1), Image.new("1", (64, 32), 0)]
    frames[0].save(buffer, "TIFF", save_all=True, append_images=frames[1:], dpi=(200, 200))
    assert page_count(image_to_pdf(buffer.getvalue())) == 2
