"""Stage 1a: turn every accepted format into a PDF with deterministic tooling (no model)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from PIL import Image, ImageSequence, UnidentifiedImageError

from drac.documents.intake.ahead import Converted, converted_ahead
from drac.documents.intake.archive import check_inflation
from drac.documents.intake.delimited import SAMPLE_CHARS, sniff_delimiter
from drac.documents.intake.detect import DocumentFormat
from drac.documents.sandbox.containment.budget import current as current_budget
from drac.documents.sandbox.containment.policy import parser_environment
from drac.documents.sandbox.lo_guard import CANNOT_START, CPU_PREFIX, PROTECTIONS_PREFIX
from drac.documents.sandbox.lo_profile import LINK_SETTINGS, ProfileSetting, write_settings
from drac.documents.sandbox.references import remove_external_references
from drac.errors import DocumentError

DEFAULT_IMAGE_DPI = 200
MAX_IMAGE_PIXELS = 120_000_000
"""Pixels an input scan may have (about 11,000 x 11,000); more is a decompression bomb."""

LIBREOFFICE_MEMORY_BYTES = 4 * 1024**3
"""Address space each LibreOffice process may map (RLIMIT_AS). Converting the evaluation
corpus' office files peaks far below it (RELIABILITY.md); a document that needs more fails
with a clear reason instead of exhausting the machine."""

LIBREOFFICE_READABLE = [
    "/usr", "/bin", "/lib", "/lib64", "/opt", "/etc/fonts", "/etc/ld.so.cache",
    "/etc/libreoffice", "/dev/urandom",
]  # fmt: skip
"""What LibreOffice may read besides its work folder (Landlock, where the kernel has it):
its program and libraries, fonts and their configuration, its registry, the linker cache,
random bytes; found by converting with less until conversions failed (LibreOffice 7.4).
Not /etc (passwd, hostname, ...), /proc (version, other processes), /home, /tmp, /root."""
LIBREOFFICE_WRITABLE: list[str] = []
"""Folders LibreOffice may write besides its work folder: none (tests add one for fakes)."""
_GUARD = Path(__file__).parent.parent / "sandbox" / "lo_guard.py"
_PROFILE_NAME = "libreoffice-profile"
_PROFILE_LOCK = threading.Lock()

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


@dataclass(frozen=True)
class Defences:
    """What stands between a document and the machine while LibreOffice converts it: its
    external references removed first (`references`), and the profile settings that stop
    link updates and network access (`lo_profile.py`). Tests turn layers off one at a time
    to show what each holds; every other caller uses the defaults."""

    strip_references: bool = True
    settings: tuple[ProfileSetting, ...] = LINK_SETTINGS


ALL_DEFENCES = Defences()


def normalise(
    data: bytes,
    fmt: DocumentFormat,
    *,
    timeout_s: float = 180.0,
    max_pages: int = 5000,
) -> Converted:
    """Return the document as PDF (PDF as-is, office/HTML via LibreOffice, images via
    Pillow) with the warnings the normalisation has for the document. An office document
    converted ahead in a batch of its run (`ahead.served`) is given that PDF.

    Raises DocumentError naming the reason when the document cannot be normalised.
    """
    if fmt is DocumentFormat.PDF:
        return Converted(data, [])
    if fmt.is_office:
        if fmt.is_zip_container:
            check_inflation(data)  # before LibreOffice inflates anything
        ahead = converted_ahead(data, fmt)
        if ahead is not None:
            return ahead
        return convert_with_libreoffice(data, _SUFFIX[fmt], "pdf", timeout_s=timeout_s)
    if fmt.is_image:
        return Converted(image_to_pdf(data, max_pages=max_pages), [])
    raise DocumentError(f"{fmt.value} documents are not converted to PDF (used as text as-is)")


def normalise_to_pdf(
    data: bytes,
    fmt: DocumentFormat,
    *,
    timeout_s: float = 180.0,
    max_pages: int = 5000,
) -> bytes:
    """Return the document as PDF, as `normalise` does, without its warnings.

    Raises DocumentError naming the reason when the document cannot be normalised.
    """
    return normalise(data, fmt, timeout_s=timeout_s, max_pages=max_pages).data


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


def libreoffice_to_pdf(
    data: bytes,
    suffix: str,
    *,
    timeout_s: float = 180.0,
    memory_bytes: int = LIBREOFFICE_MEMORY_BYTES,
) -> bytes:
    """Convert one office or HTML file to PDF with headless LibreOffice.

    Each call uses its own LibreOffice profile, so calls may run concurrently. LibreOffice
    runs under `lo_guard`: at most `memory_bytes` of address space per process, killed with
    its whole process group on timeout or when drac dies. DocumentError names the reason
    when no PDF comes out.
    """
    return libreoffice_convert(data, suffix, "pdf", timeout_s=timeout_s, memory_bytes=memory_bytes)


def libreoffice_convert(
    data: bytes,
    suffix: str,
    target: str,
    *,
    timeout_s: float = 180.0,
    memory_bytes: int = LIBREOFFICE_MEMORY_BYTES,
) -> bytes:
    """Convert one file LibreOffice reads (its kind named by `suffix`, e.g. ".ods") to the
    `target` format (a LibreOffice --convert-to extension: "pdf", "xlsx"), as
    `convert_with_libreoffice` does, without the warnings."""
    return convert_with_libreoffice(
        data, suffix, target, timeout_s=timeout_s, memory_bytes=memory_bytes
    ).data


def convert_with_libreoffice(
    data: bytes,
    suffix: str,
    target: str,
    *,
    timeout_s: float = 180.0,
    memory_bytes: int = LIBREOFFICE_MEMORY_BYTES,
    defences: Defences = ALL_DEFENCES,
) -> Converted:
    """Convert one file LibreOffice reads (its kind named by `suffix`) to `target`, with the
    warnings for the document (one when external references were removed).

    LibreOffice only ever sees the file with its external references removed (by a
    contained worker, before any work folder exists: a document the sanitizer refuses or
    that takes it past its limits leaves nothing behind), runs with the profile settings
    that stop links and network access, in a private profile per call (so calls may run
    concurrently), its process group killed on timeout. DocumentError names what failed.
    """
    soffice = find_soffice()
    kind = suffix.lstrip(".").upper()
    goal = target.upper()
    warnings: list[str] = []
    readable = data
    if defences.strip_references:
        cleaned = remove_external_references(data, suffix)
        readable = cleaned.data
        warnings.extend(filter(None, [cleaned.warning]))
    with tempfile.TemporaryDirectory(prefix="drac-lo-") as tmp:
        work = Path(tmp)
        _claim(work)  # first: a kill from here on leaves a folder the next run removes
        source = work / f"document{suffix}"
        source.write_bytes(readable)
        outdir = work / "out"
        profile = work / "profile"
        _seed_profile(profile, defences.settings)
        import_filter = _import_filter(suffix, data)
        command = _soffice_command(soffice, profile, import_filter, target, outdir, [source])
        env = _soffice_environment(work)
        what = f"the {kind} to {goal}"
        run = _run_guarded(
            command, env=env, workdir=tmp, timeout_s=timeout_s, memory_bytes=memory_bytes, what=what
        )
        result = outdir / f"document.{target}"
        if not result.is_file() or result.stat().st_size == 0:
            raise DocumentError(_no_output_reason(run, kind, goal, memory_bytes))
        _keep_profile(profile)
        return Converted(result.read_bytes(), warnings)


def _soffice_command(
    soffice: str,
    profile: Path,
    import_filter: list[str],
    target: str,
    outdir: Path,
    sources: Sequence[Path],
) -> list[str]:
    """The headless LibreOffice command converting `sources` to `target` in `outdir`, with the
    user profile at `profile`."""
    return [
        soffice,
        f"-env:UserInstallation={profile.as_uri()}",
        "--headless", "--invisible", "--nologo", "--nodefault", "--norestore", "--nolockcheck",
        *import_filter,
        "--convert-to", target, "--outdir", str(outdir),
        *(str(source) for source in sources),
    ]  # fmt: skip


def _soffice_environment(work: Path) -> dict[str, str]:
    """LibreOffice's environment for the work folder `work`: no AWS credentials, its home
    there, and its own temporary files in `work/tmp` (made here) so they go with the folder."""
    scratch = work / "tmp"
    scratch.mkdir()
    return {
        **parser_environment(os.environ),
        "HOME": str(work),
        "TMPDIR": str(scratch),
        "SAL_USE_VCLPLUGIN": "svp",
    }


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


def _seed_profile(profile: Path, settings: tuple[ProfileSetting, ...] = LINK_SETTINGS) -> None:
    """Start this call's private profile as a copy of the cached template, when there is one,
    and write the settings that stop link updates and network access into it."""
    folder = _cache_folder()
    template = folder / _PROFILE_NAME if folder else None
    if template is not None and template.is_dir():
        with contextlib.suppress(OSError):
            shutil.copytree(template, profile, symlinks=True, dirs_exist_ok=True)
    write_settings(profile, settings)


def _keep_profile(profile: Path) -> None:
    """Cache the first successfully used profile as the template for later calls.

    One template per user, in one well-known folder, shared by every drac process: written
    beside it, then renamed into place, so readers never see half a template and the loser
    of a race just drops its copy.
    """
    folder = _cache_folder()
    if folder is None or (folder / _PROFILE_NAME).is_dir() or not profile.is_dir():
        return
    with _PROFILE_LOCK:
        staging = Path(tempfile.mkdtemp(prefix=f".{_PROFILE_NAME}-", dir=folder))
        try:
            shutil.copytree(profile, staging, symlinks=True, dirs_exist_ok=True)
            staging.rename(folder / _PROFILE_NAME)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)


def _cache_folder() -> Path | None:
    """drac's cache folder ($XDG_CACHE_HOME/drac, ~/.cache/drac, else a private folder in the
    temporary directory, as in Lambda); None when none is usable."""
    candidates: list[Path] = []
    if os.environ.get("XDG_CACHE_HOME"):
        candidates.append(Path(os.environ["XDG_CACHE_HOME"]) / "drac")
    with contextlib.suppress(RuntimeError, KeyError):
        candidates.append(Path.home() / ".cache" / "drac")
    candidates.append(Path(tempfile.gettempdir()) / f"drac-cache-{os.getuid()}")
    for folder in candidates:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = folder.stat()
        except OSError:
            continue
        # the shared temporary directory is anyone's: use only a folder that is ours alone
        if info.st_uid == os.getuid() and not info.st_mode & 0o022 and os.access(folder, os.W_OK):
            return folder
    return None


class _Run(NamedTuple):
    returncode: int
    stderr: str
    protections: tuple[str, ...]
    """The layers the guard had in force (containment.policy's names)."""


def _run_guarded(
    command: list[str],
    *,
    env: dict[str, str],
    workdir: str,
    timeout_s: float,
    memory_bytes: int,
    what: str,
) -> _Run:
    """Run a LibreOffice command under `lo_guard` in a session of its own; on timeout stop it
    (the guard kills LibreOffice's whole group) and raise DocumentError.

    The work folder is marked as this process's, and work folders that dead drac processes
    left beside it are removed first (a kill between the folder's creation and the guard's
    start, or after the guard's end, leaves one the guard cannot remove).

    Under a document's CPU budget each LibreOffice process may use what is left of it, and
    what they used is charged to it (BudgetExceeded once it is spent)."""
    _claim(Path(workdir))
    _sweep_stale(Path(workdir).parent)
    budget = current_budget()
    doing = f"converting {what} with LibreOffice"
    policy: dict[str, object] = {"readable": LIBREOFFICE_READABLE, "writable": LIBREOFFICE_WRITABLE}
    cap = math.inf
    if budget is not None:
        budget.check(f"before {doing}")
        policy["cpu_s"] = cap = budget.cap(math.inf)
    guarded = [
        sys.executable, "-I", "-S", str(_GUARD), str(os.getpid()), str(memory_bytes), workdir,
        json.dumps(policy), "--", *command,
    ]  # fmt: skip
    try:
        process = subprocess.Popen(
            guarded,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=workdir,
            start_new_session=True,
        )
    except OSError as exc:
        raise DocumentError(f"cannot start LibreOffice ({command[0]}): {exc}") from exc
    try:
        _, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        _charge(_stop(process), doing, cap)
        raise DocumentError(
            f"LibreOffice timed out after {timeout_s:g} s converting {what}"
        ) from exc
    finally:
        if process.poll() is None:
            _stop(process)
    text = _charge(err.decode("utf-8", "replace"), doing, cap)
    first, _, rest = text.partition("\n")
    if first.startswith(PROTECTIONS_PREFIX):
        return _Run(process.returncode, rest, tuple(first[len(PROTECTIONS_PREFIX) :].split(", ")))
    return _Run(process.returncode, text, ())


_OWNER_FILE = ".drac-owner"
_UNCLAIMED_MAX_AGE_S = 3600.0
"""A work folder without an owner mark older than this was abandoned before it was marked."""


def _claim(workdir: Path) -> None:
    """Mark the work folder as this process's: written beside, then renamed, so a sweep in
    another thread never reads half a mark."""
    mark = workdir / _OWNER_FILE
    staged = workdir / f"{_OWNER_FILE}.{threading.get_ident()}"
    with contextlib.suppress(OSError):
        staged.write_text(_process_identity(os.getpid()) or str(os.getpid()))
        os.replace(staged, mark)


def _process_identity(pid: int) -> str | None:
    """ "PID START-TIME" of a running process (start time tells a reused pid apart); None when
    there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        if sys.platform.startswith("linux"):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return str(pid)
    return f"{pid} {stat.rsplit(')', 1)[-1].split()[19]}"


def _sweep_stale(folder: Path) -> None:
    """Remove the `drac-lo-*` work folders in `folder` whose drac process is gone."""
    try:
        candidates = [path for path in folder.glob("drac-lo-*") if path.is_dir()]
    except OSError:
        return
    for path in candidates:
        with contextlib.suppress(OSError):
            if path.stat().st_uid != os.getuid():
                continue
            owner = _owner(path)
            if owner is not None:
                pid, mark = owner
                if _process_identity(pid) == mark or pid == os.getpid():
                    continue
            elif time.time() - path.stat().st_mtime < _UNCLAIMED_MAX_AGE_S:
                continue
            shutil.rmtree(path, ignore_errors=True)


def _owner(workdir: Path) -> tuple[int, str] | None:
    """The pid and mark of the process that claimed a work folder; None when it holds no
    readable mark (not claimed yet, or a mark from something else)."""
    try:
        mark = (workdir / _OWNER_FILE).read_text().strip()
        return int(mark.split()[0]), mark
    except (OSError, ValueError, IndexError):
        return None


def _charge(stderr: str, doing: str, cap: float) -> str:
    """The guard's stderr without its CPU line, whose seconds are charged to the document's
    budget (LibreOffice was given `cap` of them; BudgetExceeded naming `doing` once it is
    spent)."""
    head, found, tail = stderr.rpartition(CPU_PREFIX)
    if not found:
        return stderr
    budget = current_budget()
    if budget is not None:
        with contextlib.suppress(ValueError, IndexError):
            budget.charge_capped(float(tail.split()[0]), cap)
        budget.check(doing)
    return head.rstrip("\n") + "\n" if head.strip() else head


def _stop(process: subprocess.Popen[bytes]) -> str:
    """Ask the guard to kill LibreOffice's group; kill the guard itself if it does not obey.
    What the guard wrote on stderr."""
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        _, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
    return (err or b"").decode("utf-8", "replace")


def _no_output_reason(run: _Run, kind: str, goal: str, memory_bytes: int) -> str:
    lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
    detail = lines[-1].strip() if lines else "no output"
    if run.returncode == CANNOT_START:
        return f"cannot start LibreOffice ({detail})"
    if run.returncode > 128:
        name = _signal_name(run.returncode - 128)
        return (
            f"LibreOffice crashed ({name}) converting the {kind} to {goal}; it may have needed "
            f"more than its {memory_bytes / 1024**3:g} GiB memory limit: {detail}"
        )
    return (
        f"LibreOffice could not convert the {kind} to {goal} (damaged or not really a {kind}?): "
        f"{detail}"
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


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
    if frame.mode in ("L", "RGB"):
        return frame.copy()
    if frame.mode == "1":  # Pillow writes it with TIFF's encoder, which refuses `quality`
        return frame.convert("L")
    if frame.mode in ("LA", "RGBA", "P", "PA"):
        rgba = frame.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return frame.convert("RGB")
