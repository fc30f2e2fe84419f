"""A document's PDF as a file in the function's ephemeral storage (/tmp), so that an invocation
of Render or ReadScans holds only what pdfium reads of it, never the whole PDF in memory (up
to the 500 MiB upload limit). pdfium in the contained worker opens the file by its path and
reads it as it needs (`drac.documents.pdf.render.PdfSource`); the worker may read the folder.

The folder is one per user and process lifetime, so an idle worker is reused by the next
invocation; each PDF has a file name of its own (concurrent invocations of a test harness
share the process) and is deleted when the invocation is done with it. /tmp outlives an
invocation (Lambda keeps it for the execution environment's next ones), so a file left by an
invocation that was stopped (a timeout) is removed by the next one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from drac.aws.errors import ObjectTooLarge
from drac.aws.s3 import S3ArtifactStore
from drac.errors import DocumentError

MIB = 1024 * 1024
STALE_AFTER_S = 900 + 60
"""A file older than Lambda's longest timeout (900 s) belongs to an invocation that is over."""


def pdf_folder(root: Path | None = None) -> Path:
    """The folder the PDFs are written to (made if needed): this user's own, not a link."""
    folder = Path(root or tempfile.gettempdir()) / f"drac-pdfs-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        raise RuntimeError(f"{folder} is not a folder of this user's: not used for PDFs")
    return folder


@contextlib.contextmanager
def pdf_file(
    store: S3ArtifactStore, key: str, version_id: str | None, folder: Path | None = None
) -> Iterator[Path]:
    """The PDF at `key` of `store` streamed to a file of `pdf_folder`, deleted on leaving.
    DocumentError names the sizes when the PDF is larger than the storage left; KeyError
    when there is no such object."""
    folder = folder or pdf_folder()
    _remove_stale(folder)
    free = shutil.disk_usage(folder).free
    handle, name = tempfile.mkstemp(suffix=".pdf", dir=folder)
    path = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            try:
                store.download(key, out, version_id=version_id, max_bytes=free)
            except ObjectTooLarge as exc:
                raise DocumentError(_too_large(free, exc.size)) from exc
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                raise DocumentError(_too_large(free, None)) from exc
        yield path
    finally:
        path.unlink(missing_ok=True)


def _too_large(free: int, size: int | None) -> str:
    what = "does not fit in" if size is None else f"is {size / MIB:,.0f} MiB, more than"
    return (
        f"the PDF {what} the {free / MIB:,.0f} MiB left in the function's ephemeral storage"
        " (/tmp): raise the function's ephemeralStorageSize"
    )


def _remove_stale(folder: Path) -> None:
    now = time.time()
    for entry in folder.glob("*.pdf"):
        with contextlib.suppress(OSError):  # another invocation's, just removed
            if now - entry.stat().st_mtime > STALE_AFTER_S:
                entry.unlink()
