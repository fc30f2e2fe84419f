"""The office documents of one ingest run converted to PDF ahead, in batches, while the run's
threads work on the documents before them.

    with OfficeAhead(files, workspace, settings, named) as ahead:
        run_all(files, lambda path, report: ahead.serve(path, ingest_one, path, report), ...)

One thread reads the run's files in order, keeps the DOCX, PPTX and HTML documents that will
be converted (not those stored unchanged), prepares each (bomb check, external references
removed, under its own CPU budget) and converts them in batches of one LibreOffice process
each (`office_batch`). The thread converting a document is served the PDF made from exactly
its bytes, and charged what preparing it cost and its share of the batch; a document without
one (its batch failed, its file changed, or it was not converted ahead) is converted alone.
With the run's thread budget (`drac.local.cores`), LibreOffice converting a batch holds one of
its tokens, and a document waiting for its PDF gives its own back meanwhile, so the batch, the
documents and the embedder together stay within the cores.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from drac.documents.intake.ahead import Converted, served
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.documents.intake.office_batch import (
    BATCH_BYTES,
    BATCH_DOCUMENTS,
    BATCHED_FORMATS,
    Batch,
    Prepared,
    batch_kind,
    convert_batch,
    prepare,
)
from drac.documents.sandbox.containment.budget import current as current_budget
from drac.errors import DracError
from drac.ids import ContentDigest
from drac.local.cores import ThreadBudget, join
from drac.local.inputs import read_limited
from drac.local.workspace import Workspace

if TYPE_CHECKING:
    from drac.local.pipeline import IngestSettings

T = TypeVar("T")
_ROOM = 2 * BATCH_DOCUMENTS
"""PDFs converted ahead and not yet served, at most (then the reader waits)."""
_WAIT_S = 3600.0
"""How long a document waits for its batch at most before it is converted alone."""
_NOT_OFFICE = frozenset(
    (".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".gif", ".bmp", ".webp", ".md", ".txt",
     ".markdown", ".csv", ".tsv", ".xlsx", ".xlsm", ".xls", ".ods", ".json"),
)  # fmt: skip
"""Endings not read ahead: a file named so is almost never a DOCX, PPTX or HTML (one that is
is converted alone), and a run of large PDFs is not read twice."""


@dataclass
class _Slot:
    """One file's place: filled once (a PDF, or None: convert it alone)."""

    done: threading.Event = field(default_factory=threading.Event)
    sha256: str = ""
    fmt: DocumentFormat | None = None
    pdf: Converted | None = None
    cpu_s: float = 0.0
    wanted: bool = False
    """A thread waits for its PDF."""
    closed: bool = False
    """Its document is done: a PDF that comes now is dropped."""


class OfficeAhead:
    """Converts a run's office documents ahead in batches (see the module docstring)."""

    def __init__(
        self,
        files: Sequence[Path],
        workspace: Workspace,
        settings: IngestSettings,
        named: set[Path] | None = None,
        budget: ThreadBudget | None = None,
    ) -> None:
        self.files = list(files)
        self.budget = budget
        """The run's thread budget: a batch holds one token while LibreOffice converts it, and
        a document waiting for its PDF lends its own back meanwhile."""
        self.workspace = workspace
        self.settings = settings
        self.named = named or set()
        self.slots = {path: _Slot() for path in self.files}
        self._served = threading.Condition()
        self._waiting = 0
        self._blocked = 0
        self._stop = threading.Event()
        self._seen: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="drac-office-ahead", daemon=True)

    def __enter__(self) -> OfficeAhead:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        with self._served:
            self._served.notify_all()
        if kind is None:  # interrupted: not kept waiting (its LibreOffice ends at its timeout)
            join(self._thread)
        self._fill_rest()

    def serve(self, path: Path, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `work(*args, **kwargs)` with `path`'s PDF served to its conversion."""
        slot = self.slots.get(path)
        if slot is None:
            return work(*args, **kwargs)
        try:
            with served(lambda data, fmt: self._take(slot, data, fmt)):
                return work(*args, **kwargs)
        finally:
            with self._served:
                slot.closed = True
                if slot.pdf is not None:
                    slot.pdf = None
                    self._waiting -= 1
                self._served.notify_all()

    def _take(self, slot: _Slot, data: bytes, fmt: DocumentFormat) -> Converted | None:
        """The slot's PDF when it was made from these bytes, its CPU charged to the
        document's budget; None: convert the document alone."""
        if not slot.done.is_set():
            with self._served:
                slot.wanted = True
                self._blocked += 1
                self._served.notify_all()
            try:
                with self.budget.lent() if self.budget else nullcontext():
                    slot.done.wait(_WAIT_S)
            finally:
                with self._served:
                    self._blocked -= 1
        with self._served:
            pdf = slot.pdf
        if pdf is None or fmt is not slot.fmt or hashlib.sha256(data).hexdigest() != slot.sha256:
            return None
        budget = current_budget()
        if budget is not None:
            budget.charge(slot.cpu_s)
            budget.check("converting the document to PDF with LibreOffice")
        return Converted(pdf.data, list(pdf.warnings))

    def _run(self) -> None:
        groups: dict[str, list[tuple[_Slot, Prepared]]] = {}
        try:
            for path in self.files:
                if self._stop.is_set():
                    return
                slot = self.slots[path]
                found = self._prepared(path, slot)
                if found is None:
                    slot.done.set()
                    continue
                kind = batch_kind(found.fmt)
                group = groups.setdefault(kind, [])
                group.append((slot, found))
                if len(group) >= BATCH_DOCUMENTS or _size(group) >= BATCH_BYTES:
                    for other in [k for k, g in groups.items() if k != kind and _wanted(g)]:
                        self._convert(groups.pop(other))  # a thread waits on it: first
                    self._convert(groups.pop(kind))
            for group in groups.values():
                self._convert(group)
        finally:
            self._fill_rest()

    def _prepared(self, path: Path, slot: _Slot) -> Prepared | None:
        """The file prepared for a batch; None when it is no office document to convert
        (or fails before its batch: it is then converted alone, failing with its reason)."""
        conversion = self.settings.conversion
        if path.suffix.lower() in _NOT_OFFICE:
            return None
        try:
            data = read_limited(path, conversion.max_file_bytes, path in self.named)
            fmt = detect_format(data, path.name).format
            if fmt not in BATCHED_FORMATS:
                return None
            digest = ContentDigest(self.settings.tenant)
            digest.update(data)
            existing = self.workspace.get_document(digest.document_id)
            if existing is not None and existing.live and not self.settings.force:
                return None  # stored unchanged: not converted
            if digest.document_id in self._seen:
                return None  # the same content at another path: converted once
            self._seen.add(digest.document_id)
            found = prepare(data, fmt, conversion.cpu_budget(len(data)))
        except (DracError, OSError):
            return None
        slot.sha256 = hashlib.sha256(data).hexdigest()
        slot.fmt = fmt
        return found

    def _convert(self, group: list[tuple[_Slot, Prepared]]) -> None:
        """Convert one batch and fill its slots; first wait for room while no document
        waits for its PDF (one may wait on a batch still being gathered)."""
        with self._served:
            while (
                self._waiting + len(group) > max(_ROOM, len(group))
                and not self._blocked
                and not self._stop.is_set()
            ):
                self._served.wait(1.0)
        if self._stop.is_set():
            return
        documents = [found for _, found in group]
        try:
            with self.budget.job() if self.budget else nullcontext():
                batch = convert_batch(
                    documents, timeout_s=self.settings.conversion.libreoffice_timeout_s
                )
        except Exception:  # a full disk, or a bug: each document is then converted alone
            batch = Batch([None] * len(documents), 0.0)
        with self._served:
            for (slot, found), pdf in zip(group, batch.pdfs, strict=True):
                if pdf is not None and not slot.closed:
                    slot.pdf = pdf
                    slot.cpu_s = found.cpu_s + batch.cpu_share_s
                    self._waiting += 1
                slot.done.set()

    def _fill_rest(self) -> None:
        """Every slot not filled is filled with None (its document is converted alone)."""
        for slot in self.slots.values():
            slot.done.set()


def _wanted(group: list[tuple[_Slot, Prepared]]) -> bool:
    return any(slot.wanted for slot, _ in group)


def _size(group: list[tuple[_Slot, Prepared]]) -> int:
    return sum(len(found.readable) for _, found in group)
