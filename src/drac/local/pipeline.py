"""The local runtime's pipeline: files in, chunks out, one document at a time, failures
contained.

Every step is a core function (conversion, `parse_document`, planning, `drac.commit`); this
module only wires them to a Workspace.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from drac.clock import utc_now
from drac.commit import plan_chunks
from drac.documents.convert import ConversionOptions, ConversionResult, convert_to_markdown
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.documents.pdf.boxes import with_boxes
from drac.documents.row_sentences import stored_rows_differ
from drac.documents.sandbox.containment import document_budget
from drac.documents.spreadsheets import SPREADSHEET_FORMATS, table_rows_advice
from drac.documents.vision.escalate import Escalation, escalation_line
from drac.documents.vision.verify import review_conversion
from drac.errors import DocumentError, DracError
from drac.ids import ContentDigest
from drac.ingest import (
    parse_document,
    spreadsheet_options,
    status_after_conversion,
)
from drac.local.errors import WorkspaceUnusableError
from drac.local.files import shown_path
from drac.local.inputs import failure_reason, read_limited, read_sidecar
from drac.local.outcome import Outcome
from drac.local.verification import save_verification
from drac.local.versions import earlier_version, keep_batches
from drac.local.workspace import Workspace
from drac.metadata import (
    Metadata,
    merged,
)
from drac.models import (
    Chunk,
    DocumentRecord,
    DocumentStatus,
    ParsedDocument,
    PlanVersion,
    Strategy,
)
from drac.planning import PlanningCounts, plan_document, planning_counts, require_model_plans
from drac.planning.errors import ModelServerUnreachable, NoModelPlan
from drac.ports import TextModel, VisionModel
from drac.sectioning import make_sections

ProgressCallback = Callable[[int, int], None]

UNKNOWN_FORMAT = "unknown"
"""The format recorded for a file whose content could not be identified."""

SCAN_HINT = (
    "scans need a vision model: ingest again with --model bedrock|openai --force (pages "
    "without a text layer that offline OCR could not read, or every scan when OCR is not "
    "installed: pip install 'drac[ocr]'; DRAC_MODEL or drac.toml set the default)"
)
"""The warning (first of a document's) telling how to convert the scans of a PARTIAL document."""


class IngestSettings(BaseModel):
    """How `ingest` runs: strategy, parser, conversion and re-ingest policy."""

    model_config = ConfigDict(frozen=True)

    strategy: Strategy = Field(default_factory=Strategy)
    conversion: ConversionOptions = Field(default_factory=ConversionOptions)
    force: bool = False
    tenant: str | None = None
    metadata: Metadata = Field(
        default_factory=dict, description="`--meta` metadata, over each file's sidecar"
    )


def ingest_file(
    path: Path,
    workspace: Workspace,
    settings: IngestSettings,
    *,
    vision: VisionModel | None = None,
    text_model: TextModel | None = None,
    progress: ProgressCallback | None = None,
    follow_symlinks: bool = True,
    escalation: Escalation | None = None,
) -> Outcome:
    """Convert, parse, section, plan and assemble one file into the workspace.

    Its parsers share one CPU budget (`settings.conversion.cpu_budget`): past it the
    document fails with a reason naming it.

    Never raises for a bad document: the outcome says FAILED with the reason, and whatever
    the workspace held before stays intact (WorkspaceUnusableError, when the workspace's
    database is damaged or its disk full, is raised: no document could be stored). Only a
    regular file is read; without
    `follow_symlinks` (files found in a folder) a path that has become a link is refused.
    With an `escalation`, the pages the vision model converted doubtfully are converted
    again by its model.
    """
    started = time.monotonic()
    record: DocumentRecord | None = None
    data: bytes | None = None
    try:
        data = read_limited(path, settings.conversion.max_file_bytes, follow_symlinks)
        metadata = merged(read_sidecar(path), settings.metadata, origin=shown_path(path))
        digest = ContentDigest(settings.tenant)
        digest.update(data)
        record = DocumentRecord(
            document_id=digest.document_id,
            source=shown_path(path.name),
            source_path=shown_path(path.resolve()),
            sha256=digest.sha256,
            tenant=settings.tenant,
            format=UNKNOWN_FORMAT,
            metadata=metadata,
        )
        # the same content under two paths: the second waits, then finds it UNCHANGED
        with workspace.document_lock(record.document_id):
            existing = workspace.get_document(record.document_id)
            if (
                existing is not None
                and existing.live
                and not settings.force
                and not stored_rows_differ(existing, settings.strategy.table_rows)
            ):
                workspace.add_source(record.source_path or record.source, existing.document_id)
                outcome = _unchanged(path, existing, workspace, settings.strategy, started)
                if existing.metadata != metadata:  # a new sidecar or --meta: only it changes
                    existing.metadata = metadata
                    workspace.save_document(existing)
                    outcome.warnings.append(f"metadata updated ({len(metadata)} key(s))")
                return outcome
            if existing is not None:
                record.attempt = existing.attempt
                record.created_at = existing.created_at
            with document_budget(settings.conversion.cpu_budget(len(data))) as budget:
                outcome = _ingest(
                    data, record, workspace, settings, (vision, escalation), text_model,
                    progress, started,
                )  # fmt: skip
            outcome.cpu_s = round(budget.used_s, 2) if budget is not None else None
            return outcome
    except WorkspaceUnusableError:
        raise  # not this document's fault: the whole run must stop
    except (DracError, OSError) as exc:  # the document's fault, or the workspace's, named
        return _failure(path, workspace, record, data, exc, started)
    except Exception as exc:  # a bug must not stop the other documents; say what it was
        wrapped = DracError(f"unexpected error ({type(exc).__name__}): {exc}")
        return _failure(path, workspace, record, data, wrapped, started)


def _unchanged(
    path: Path,
    existing: DocumentRecord,
    workspace: Workspace,
    strategy: Strategy,
    started: float,
) -> Outcome:
    warnings = []
    if existing.format in SPREADSHEET_FORMATS:  # rows are written at ingest, as asked then
        advice = table_rows_advice(
            existing.format, workspace.get_elements(existing.document_id), strategy
        )
        warnings = [advice] if advice else []
    return Outcome(
        path=shown_path(path),
        document_id=existing.document_id,
        status="UNCHANGED",
        pages=existing.pages,
        chunks=len(workspace.active_chunks(existing.document_id)),
        plan_version=existing.active_version,
        seconds=time.monotonic() - started,
        warnings=warnings,
    )


def _ingest(
    data: bytes,
    record: DocumentRecord,
    workspace: Workspace,
    settings: IngestSettings,
    models: tuple[VisionModel | None, Escalation | None],
    text_model: TextModel | None,
    progress: ProgressCallback | None,
    started: float,
) -> Outcome:
    vision, escalation = models
    conversion = convert_to_markdown(
        data,
        record.source,
        options=settings.conversion,
        vision=vision,
        ledger=workspace.ledger,
        document_id=record.document_id,
        progress=progress,
        spreadsheet=spreadsheet_options(settings.strategy),
        earlier=earlier_version(workspace, record) if vision is not None else None,
        escalation=escalation,
    )
    reviewed = review_conversion(
        conversion.markdown, conversion.verification, settings.strategy.hold_back_flags
    )
    if conversion.escalations:
        escalated = tuple(conversion.escalations)
        summary = reviewed.summary.model_copy(update={"escalations": escalated})
        reviewed = reviewed.model_copy(update={"summary": summary})
    checked = bool(conversion.verification or conversion.escalations)
    failures = [*conversion.failures, *reviewed.failures]
    record.format = conversion.format
    record.table_rows = settings.strategy.table_rows
    record.pages = conversion.pages
    record.warnings = [*conversion.warnings, *failures]
    if reviewed.warning:
        record.warnings.append(reviewed.warning)
    if conversion.escalations:
        record.warnings.append(escalation_line(conversion.escalations))
    record.conversion_failures = len(failures)
    record.verification = reviewed.summary.counts() if checked else None
    scans_only = conversion.status == "partial" and not failures
    if scans_only:
        record.warnings.insert(0, SCAN_HINT)
    parsed = parse_document(reviewed.markdown, settings.strategy, failures, allow_empty=scans_only)
    record.status = (
        DocumentStatus.PARTIAL
        if scans_only
        else status_after_conversion(record.conversion_failures)
    )
    record.error = None
    parsed = _placed(parsed, data, conversion, settings)
    planned = _plan(record, parsed, settings.strategy, workspace, text_model)
    activation = workspace.commit_ingest(
        record, data, parsed, planned.plan, planned.chunks, conversion.normalised_pdf
    )
    if not activation.activated:
        raise DracError("the document was changed by another run while it was ingested")
    keep_batches(workspace, record.document_id, conversion.batches)
    # written once the conversion is stored: a document that fails leaves no file behind
    save_verification(workspace, record.document_id, reviewed.summary if checked else None)
    outcome = _outcome(record, len(parsed.elements), planned, started, record.warnings)
    outcome.reused_batches = conversion.reused_batches
    return outcome


def _placed(
    parsed: ParsedDocument,
    data: bytes,
    conversion: ConversionResult,
    settings: IngestSettings,
) -> ParsedDocument:
    """The elements placed on the pages of the document's PDF (the source, or the PDF it was
    rendered to), whichever converter wrote the Markdown; other documents have no pages."""
    pdf = conversion.normalised_pdf
    if pdf is None and conversion.format == DocumentFormat.PDF.value:
        pdf = data
    if pdf is None:
        return parsed
    return with_boxes(
        parsed, pdf, max_pages=settings.conversion.max_pages, ocr=conversion.ocr_layers
    )


def _failure(
    path: Path,
    workspace: Workspace,
    record: DocumentRecord | None,
    data: bytes | None,
    error: Exception,
    started: float,
) -> Outcome:
    reason = failure_reason(error)
    if data is not None:
        reason = _named_for_another_format(path.name, data, reason)
    if record is not None:
        if record.format == UNKNOWN_FORMAT and data is not None:
            record.format = _detected_format(data, record.source)
        try:
            _record_failure(workspace, record, reason)
        except Exception as exc:  # the outcome must still be reported
            reason = f"{reason} (not recorded in the workspace: {type(exc).__name__}: {exc})"
    return Outcome(
        path=shown_path(path),
        document_id=record.document_id if record else None,
        status=DocumentStatus.FAILED.value,
        error=reason,
        seconds=time.monotonic() - started,
    )


_ZIP = (b"PK\x03\x04", "an Office document", "not a ZIP package")
_SIGNATURES: dict[str, tuple[bytes, str, str]] = {
    ".pdf": (b"%PDF-", "a PDF", "no %PDF- header in its first 1,024 bytes"),
    ".docx": _ZIP,
    ".pptx": _ZIP,
    ".xlsx": _ZIP,
    ".xlsm": _ZIP,
    ".ods": (b"PK\x03\x04", "an OpenDocument spreadsheet", "not a ZIP package"),
    ".png": (b"\x89PNG\r\n\x1a\n", "a PNG image", "no PNG signature"),
    ".jpg": (b"\xff\xd8\xff", "a JPEG image", "no JPEG signature"),
    ".jpeg": (b"\xff\xd8\xff", "a JPEG image", "no JPEG signature"),
}
"""What a file ending promises, the bytes that keep the promise, and what it lacks if not."""


def _named_for_another_format(name: str, data: bytes, reason: str) -> str:
    """The failure of a file whose ending names a format its bytes are not (a `.pdf` that is
    no PDF): say what it was taken for, why it is not that, and then what went wrong."""
    suffix = Path(name).suffix.lower()
    if suffix not in _SIGNATURES:
        return reason
    signature, what, lacking = _SIGNATURES[suffix]
    found = signature in data[:1024] if suffix == ".pdf" else data.startswith(signature)
    if found:
        return reason
    return f"named {suffix} but it is not {what} ({lacking}), so it was read as text: {reason}"


def _record_failure(workspace: Workspace, record: DocumentRecord, reason: str) -> None:
    """Save the record as FAILED unless a live version of the same content is stored."""
    existing = workspace.get_document(record.document_id)
    if existing is None or not existing.live:
        record.status = DocumentStatus.FAILED
        record.error = reason
        record.active_version = None
        record.owner = None
        workspace.save_document(record)


def _detected_format(data: bytes, name: str) -> str:
    """The format detection gives the content, or UNKNOWN_FORMAT when it refuses it."""
    try:
        return detect_format(data, name).format.value
    except DocumentError:
        return UNKNOWN_FORMAT


def _plan_warnings(plan: PlanVersion) -> list[str]:
    warnings = []
    for section in plan.sections:
        if section.issues.fell_back_to_rules:
            warnings.append(
                f"{section.section_id}: planner fell back to rules ({section.issues.reason})"
            )
        elif not section.issues.clean:
            issues = section.issues
            corrected = len(issues.unknown_ids) + len(issues.duplicate_ids)
            if corrected or issues.missing_ids:
                warnings.append(
                    f"{section.section_id}: answer corrected by the validator (unknown "
                    f"{len(issues.unknown_ids)}, duplicate {len(issues.duplicate_ids)}, missing "
                    f"{len(issues.missing_ids)}, split {issues.split_chunks})"
                )
            elif issues.split_chunks:
                warnings.append(
                    f"{section.section_id}: the validator split chunks over the hard limit "
                    f"({issues.split_chunks} split)"
                )
    return warnings


def replan_document(
    record: DocumentRecord,
    workspace: Workspace,
    strategy: Strategy,
    *,
    text_model: TextModel | None = None,
) -> Outcome:
    """Plan a stored document anew from its stored elements and make that version active.

    Sources are not read and nothing is converted again. A plan in which the model planned
    no section is not stored: the outcome then says so (`kept_version`, `error`) with the
    attempt's counts, and the document keeps its status, plan and chunks.
    """
    started = time.monotonic()
    elements = workspace.get_elements(record.document_id)
    if not elements:
        raise DracError(f"{record.source}: no stored elements (status {record.status.value})")
    parsed = ParsedDocument(
        markdown="",
        elements=tuple(elements),
        sections=tuple(make_sections(elements, strategy.section_budget)),
    )
    try:
        planned = _plan(record, parsed, strategy, workspace, text_model)
    except ModelServerUnreachable as exc:
        _remember_attempt(workspace, record, str(exc), None, started)
        raise
    try:
        require_model_plans(planned.plan)  # a rules plan called "llm" is no new version
    except NoModelPlan as exc:  # the document keeps its status, plan and chunks
        _remember_attempt(workspace, record, str(exc), exc.counts, started)
        return Outcome(
            path=record.source_path or record.source,
            document_id=record.document_id,
            status=record.status.value,
            pages=record.pages,
            elements=len(elements),
            chunks=len(workspace.active_chunks(record.document_id)),
            plan_version=record.active_version,
            error=str(exc),
            seconds=time.monotonic() - started,
            planning=exc.counts,
            kept_version=True,
        )
    activation = workspace.commit_plan(planned.plan, planned.chunks)
    if not activation.activated:
        raise DracError(f"{record.source}: the document changed while it was re-planned")
    workspace.save_planning_attempt(record.document_id, None)
    return _outcome(record, len(elements), planned, started)


def _remember_attempt(
    workspace: Workspace,
    record: DocumentRecord,
    error: str,
    counts: PlanningCounts | None,
    started: float,
) -> None:
    """Keep a re-plan that stored nothing, for `status` and `show`."""
    workspace.save_planning_attempt(
        record.document_id,
        {
            "at": utc_now(),
            "error": error,
            "seconds": round(time.monotonic() - started, 3),
            "planning": counts.model_dump() if counts else None,
            "kept_version": record.active_version,
        },
    )


class _Planned(NamedTuple):
    plan: PlanVersion
    chunks: list[Chunk]


def _plan(
    record: DocumentRecord,
    parsed: ParsedDocument,
    strategy: Strategy,
    workspace: Workspace,
    text_model: TextModel | None,
) -> _Planned:
    """Plan every section as the next version; refuse chunks over the hard limit."""
    plan = plan_document(
        record.document_id,
        parsed.elements,
        parsed.sections,
        strategy,
        version=workspace.plans.latest_version(record.document_id) + 1,
        text_model=text_model,
        cache=workspace.plan_cache,
        ledger=workspace.ledger,
    )
    return _Planned(plan, plan_chunks(record, parsed.elements, plan, strategy))


def _outcome(
    record: DocumentRecord,
    elements: int,
    planned: _Planned,
    started: float,
    warnings: Sequence[str] = (),
) -> Outcome:
    return Outcome(
        path=record.source_path or record.source,
        document_id=record.document_id,
        status=record.status.value,
        pages=record.pages,
        elements=elements,
        chunks=len(planned.chunks),
        plan_version=planned.plan.version,
        warnings=[*warnings, *_plan_warnings(planned.plan)],
        seconds=time.monotonic() - started,
        planning=planning_counts(planned.plan) if planned.plan.strategy.planner == "llm" else None,
    )


def live_documents(workspace: Workspace, references: Iterable[str] = ()) -> list[DocumentRecord]:
    """The named documents (ids, names or paths), or every live document when none is named."""
    names = list(references)
    if names:
        return [workspace.find_document(name) for name in names]
    return [d for d in workspace.documents() if d.live]
