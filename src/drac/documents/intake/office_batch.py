"""Several office documents of one local run converted to PDF by one contained LibreOffice.

Starting LibreOffice costs about a CPU second; converting a corpus document once it runs costs
about a tenth of that. So the local runtime converts the office documents of one run (one user,
one workspace, one tenant) in batches: one LibreOffice process under `lo_guard`, with the same
containment as a single conversion (address-space limit, no network, Landlock, a private
profile, a CPU cap), loads, exports and closes each document in turn, each writing its own PDF
in the work folder, read back only for that document.

A batch fails alone, never a document for another: when LibreOffice times out, crashes or
passes the batch's CPU cap, no PDF of the batch is used, and a document without a PDF is
converted again by itself (`normalise`), where a hostile document fails with its own reason.
The cloud never batches: it converts one document per process.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from drac.documents.intake.ahead import Converted
from drac.documents.intake.archive import check_inflation
from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import (
    _SUFFIX,
    LIBREOFFICE_MEMORY_BYTES,
    _claim,
    _import_filter,
    _keep_profile,
    _run_guarded,
    _seed_profile,
    _soffice_command,
    _soffice_environment,
    find_soffice,
)
from drac.documents.sandbox.containment.budget import Budget, charged_to, document_budget
from drac.documents.sandbox.containment.errors import BudgetExceeded
from drac.documents.sandbox.lo_guard import CANNOT_START
from drac.documents.sandbox.references import remove_external_references
from drac.errors import DocumentError

BATCHED_FORMATS = frozenset({DocumentFormat.DOCX, DocumentFormat.PPTX, DocumentFormat.HTML})
"""The formats converted in batches: those read as pages (spreadsheets are read as tables)."""
BATCH_DOCUMENTS = 16
"""Documents one LibreOffice process converts at most: its start-up (about 1 CPU s) shared
by 16 costs each well under a tenth of a second, and the first PDFs come soon."""
BATCH_BYTES = 64 * 1024 * 1024
"""Bytes of documents one batch holds at most (a batch is held in memory until converted)."""


@dataclass(frozen=True)
class Prepared:
    """One document ready for a batch: checked for bombs, its external references removed."""

    data: bytes
    """The document's bytes as given (what its PDF is served for)."""
    fmt: DocumentFormat
    readable: bytes
    """What LibreOffice reads."""
    warnings: tuple[str, ...]
    budget_s: float | None
    """The document's CPU budget (None: none)."""
    cpu_s: float
    """CPU seconds preparing it took (charged to the document when its PDF is served)."""


class Batch(NamedTuple):
    """A batch's PDFs, in the order of its documents (None: convert that one alone), and
    the CPU seconds charged to each document whose PDF is used (its share of LibreOffice)."""

    pdfs: list[Converted | None]
    cpu_share_s: float


def batch_kind(fmt: DocumentFormat) -> str:
    """Documents of one kind share LibreOffice's import options, so they share a batch."""
    return "html" if fmt is DocumentFormat.HTML else "office"


def prepare(data: bytes, fmt: DocumentFormat, budget_s: float | None) -> Prepared:
    """The document checked for bombs and without external references, as a single
    conversion would give it to LibreOffice, under its own CPU budget. Raises DocumentError
    (or BudgetExceeded) when a single conversion would fail there."""
    if fmt not in BATCHED_FORMATS:
        raise DocumentError(f"{fmt.value} documents are not converted in batches")
    with document_budget(budget_s) as budget:
        if fmt.is_zip_container:
            check_inflation(data)
        cleaned = remove_external_references(data, _SUFFIX[fmt])
        used = budget.used_s if budget is not None else 0.0
    warnings = (cleaned.warning,) if cleaned.warning else ()
    return Prepared(data, fmt, cleaned.data, warnings, budget_s, used)


def convert_batch(
    documents: Sequence[Prepared],
    *,
    timeout_s: float = 180.0,
    memory_bytes: int = LIBREOFFICE_MEMORY_BYTES,
) -> Batch:
    """Convert prepared documents of one `batch_kind` to PDF in one contained LibreOffice.

    The batch may use the smallest CPU budget of its documents, and one document's timeout:
    a batch of honest documents takes a fraction of either. When LibreOffice ends abnormally
    (killed by a signal, timed out, past its CPU cap, or not started) no PDF of the batch
    is used; otherwise each document gets the PDF written from its own file, or None.
    """
    if not documents:
        return Batch([], 0.0)
    if len({batch_kind(document.fmt) for document in documents}) > 1:
        raise ValueError("a batch holds documents of one kind")
    budgets = [document.budget_s for document in documents if document.budget_s is not None]
    cap = Budget(min(budgets)) if budgets else None
    none: list[Converted | None] = [None] * len(documents)
    with tempfile.TemporaryDirectory(prefix="drac-lo-") as tmp:
        work = Path(tmp)
        _claim(work)  # first: a kill from here on leaves a folder the next run removes
        sources = work / "in"
        sources.mkdir()
        names = []
        for index, document in enumerate(documents):
            source = sources / f"d{index:04d}{_SUFFIX[document.fmt]}"
            source.write_bytes(document.readable)
            names.append(source)
        outdir = work / "out"
        profile = work / "profile"
        _seed_profile(profile)
        first = documents[0]
        command = _soffice_command(
            find_soffice(), profile, _import_filter(_SUFFIX[first.fmt], first.readable), "pdf",
            outdir, names,
        )  # fmt: skip
        env = _soffice_environment(work)
        what = f"a batch of {len(documents)} documents to PDF"
        try:
            with charged_to(cap):
                run = _run_guarded(
                    command, env=env, workdir=tmp, timeout_s=timeout_s,
                    memory_bytes=memory_bytes, what=what,
                )  # fmt: skip
        except (DocumentError, BudgetExceeded):
            return Batch(none, 0.0)
        if run.returncode > 128 or run.returncode == CANNOT_START:
            return Batch(none, 0.0)
        pdfs: list[Converted | None] = []
        for name, document in zip(names, documents, strict=True):
            result = outdir / f"{name.stem}.pdf"
            with contextlib.suppress(OSError):
                if result.is_file() and result.stat().st_size > 0:
                    pdfs.append(Converted(result.read_bytes(), list(document.warnings)))
                    continue
            pdfs.append(None)
        if any(pdfs):
            _keep_profile(profile)
        used = cap.used_s if cap is not None else 0.0
        return Batch(pdfs, used / len(documents))
