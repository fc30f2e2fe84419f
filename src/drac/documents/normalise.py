"""Stage 1a: turn every accepted format into a PDF with deterministic tooling (no model)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from PIL import Image, ImageSequence, UnidentifiedImageError

from drac.documents.delimited import SAMPLE_CHARS, sniff_delimiter
from drac.documents.detect import DocumentFormat
from drac.errors import DocumentError

DEFAULT_IMAGE_DPI = 200
MAX_IMAGE_PIXELS = 120_000_000
"""Pixels an input scan may have (about 11,000 x 11,000); more is a decompression bomb."""

_PROFILE_LOCK = threading.Lock()
_profile_template: Path | None = None
"""A LibreOffice profile made by an earlier call; copying it is faster than a fresh start."""

_SUFFIX = {
    DocumentFormat.DOCX: ".docx",
    DocumentFormat.PPTX: ".pptx",
    DocumentFormat.XLSX: ".xlsx",
    DocumentFormat.XLS: ".xls",
    DocumentFormat.ODS: ".ods",
    DocumentFormat.CSV: ".csv",
    DocumentFormat.TSV: ".tsv",
    DocumentFormat.HTML: ".html",
}


def normalise_to_pdf(
    data: bytes,
    fmt: DocumentFormat,
    *,
    timeout_s: float = 180.0,
    max_pages: int = 5000,
) -> bytes:
    """Return the document as PDF: PDF as-is, office/HTML via LibreOffice, images via Pillow.

    Raises DocumentError naming the reason when the document cannot be normalised.
    """
    if fmt is DocumentFormat.PDF:
        return data
    if fmt.is_office:
        return libreoffice_to_pdf(data, _SUFFIX[fmt], timeout_s=timeout_s)
    if fmt.is_image:
        return image_to_pdf(data, max_pages=max_pages)
    raise DocumentError(f"{fmt.value} documents are not converted to PDF (used as text as-is)")


def find_soffice() -> str:
    """Return the LibreOffice executable to run; DocumentError when it is not installed."""
    override = os.environ.get("DRAC_SOFFICE")
    if override:
        return override
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    raise DocumentError(
        "LibreOffice (soffice) is not installed; it is needed for DOCX, PPTX, XLSX, XLS, ODS "
        "and HTML (run scripts/setup.sh)"
    )


def libreoffice_to_pdf(data: bytes, suffix: str, *, timeout_s: float = 180.0) -> bytes:
    """Convert one office or HTML file to PDF with headless LibreOffice.

    Each call uses its own LibreOffice profile, so calls may run concurrently. On timeout
    the whole LibreOffice process group is killed and DocumentError names the timeout.
    """
    return libreoffice_convert(data, suffix, "pdf", timeout_s=timeout_s)


def libreoffice_convert(
    data: bytes, suffix: str, target: str, *, timeout_s: float = 180.0
) -> bytes:
    """Convert one file LibreOffice reads (its kind named by `suffix`, e.g. ".ods") to the
    `target` format (a LibreOffice --convert-to extension: "pdf", "xlsx").

    Same guarantees as `libreoffice_to_pdf`: a private profile per call, the process group
    killed on timeout, DocumentError naming what failed.
    """
    soffice = find_soffice()
    kind = suffix.lstrip(".").upper()
    goal = target.upper()
    with tempfile.TemporaryDirectory(prefix="drac-lo-") as tmp:
        work = Path(tmp)
        source = work / f"document{suffix}"
        source.write_bytes(data)
        outdir = work / "out"
        profile = work / "profile"
        _seed_profile(profile)
        command = [
            soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--invisible",
            "--nologo",
            "--nodefault",
            "--norestore",
            "--nolockcheck",
            *_import_filter(suffix, data),
            "--convert-to",
            target,
            "--outdir",
            str(outdir),
            str(source),
        ]
        env = {**os.environ, "HOME": tmp, "SAL_USE_VCLPLUGIN": "svp"}
        stderr = _run_in_own_group(
            command, env=env, cwd=tmp, timeout_s=timeout_s, what=f"the {kind} to {goal}"
        )
        result = outdir / f"document.{target}"
        if not result.is_file() or result.stat().st_size == 0:
            detail = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
            raise DocumentError(
                f"LibreOffice could not convert the {kind} to {goal} (damaged or not really "
                f"a {kind}?): {detail}"
            )
        _keep_profile(profile)
        return result.read_bytes()


def _import_filter(suffix: str, data: bytes) -> list[str]:
    """LibreOffice import options: HTML is read as a Writer document, not as Writer/Web;
    delimited text with its own delimiter, as UTF-8.

    Writer/Web lays HTML out with a blank first page and loses text of the first heading;
    the Writer HTML filter keeps all text and paginates like a normal document. Without
    options LibreOffice guesses the CSV dialect from its own settings, not from the file.
    """
    if suffix.lower() in (".html", ".htm"):
        return ["--infilter=HTML (StarWriter)"]
    if suffix.lower() in (".csv", ".tsv"):
        text = data[: SAMPLE_CHARS * 4].decode("utf-8-sig", "replace")
        fallback = "\t" if suffix.lower() == ".tsv" else ","
        delimiter = sniff_delimiter(text) or fallback
        # separator, text quote ("), character set (76: UTF-8), first line
        return [f"--infilter=CSV:{ord(delimiter)},34,76,1"]
    return []


def _seed_profile(profile: Path) -> None:
    """Start this call's private profile as a copy of the template, when there is one."""
    with _PROFILE_LOCK:
        template = _profile_template
    if template is not None and template.is_dir():
        shutil.copytree(template, profile, symlinks=True, dirs_exist_ok=True)


def _keep_profile(profile: Path) -> None:
    """Keep the first successfully used profile as the template for later calls."""
    global _profile_template
    with _PROFILE_LOCK:
        if _profile_template is not None or not profile.is_dir():
            return
        template = Path(tempfile.mkdtemp(prefix="drac-lo-profile-")) / "profile"
        try:
            shutil.copytree(profile, template, symlinks=True)
        except OSError:
            return
        _profile_template = template


def _run_in_own_group(
    command: list[str], *, env: dict[str, str], cwd: str, timeout_s: float, what: str
) -> str:
    """Run a command in a new process group; kill the whole group on timeout."""
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise DocumentError(f"cannot start LibreOffice ({command[0]}): {exc}") from exc
    try:
        _, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        _kill_group(process)
        raise DocumentError(
            f"LibreOffice timed out after {timeout_s:g} s converting {what}"
        ) from exc
    finally:
        if process.poll() is None:
            _kill_group(process)
    return err.decode("utf-8", "replace")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def image_to_pdf(
    data: bytes, *, max_pages: int = 5000, max_pixels: int = MAX_IMAGE_PIXELS
) -> bytes:
    """Return a PDF with one page per image frame (multi-page TIFF gives several pages).

    The page size follows the image's own DPI when it is plausible, else 200 DPI.
    """
    try:
        image = Image.open(io.BytesIO(data))
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise DocumentError(f"unreadable image: {exc}") from exc
    width, height = image.size
    if width <= 0 or height <= 0:
        raise DocumentError(f"image has no pixels ({width} x {height})")
    if width * height > max_pixels:
        raise DocumentError(
            f"image is {width} x {height} px, more than the {max_pixels:,} pixel limit "
            "(possible decompression bomb)"
        )
    dpi = _plausible_dpi(image.info.get("dpi"))
    frames: list[Image.Image] = []
    try:
        for index, frame in enumerate(ImageSequence.Iterator(image)):
            if index >= max_pages:
                raise DocumentError(f"image has more than {max_pages} frames")
            if frame.size[0] * frame.size[1] > max_pixels:
                raise DocumentError(f"image frame {index + 1} exceeds the pixel limit")
            frames.append(_pdf_ready(frame))
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise DocumentError(f"damaged image: {exc}") from exc
    out = io.BytesIO()
    frames[0].save(
        out,
        format="PDF",
        save_all=True,
        append_images=frames[1:],
        resolution=dpi,
        quality=95,
        subsampling=0,
    )
    return out.getvalue()


def _plausible_dpi(value: object) -> float:
    try:
        dpi = float(value[0]) if isinstance(value, tuple) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, IndexError):
        return float(DEFAULT_IMAGE_DPI)
    return dpi if 50 <= dpi <= 1200 else float(DEFAULT_IMAGE_DPI)


def _pdf_ready(frame: Image.Image) -> Image.Image:
    frame.load()
    if frame.mode in ("1", "L", "RGB"):
        return frame.copy()
    if frame.mode in ("LA", "RGBA", "P", "PA"):
        rgba = frame.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return frame.convert("RGB")
