"""Register an upload: claim the document for this run, detect its format, say where to go."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.events import IngestInput
from drac.aws.lambda_support import logger
from drac.aws.object_metadata import document_metadata
from drac.aws.runtime import Runtime
from drac.aws.versions import point_to_earlier
from drac.documents.convert import decode_text
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.errors import DocumentError
from drac.models import DocumentRecord


class RegisterInput(IngestInput):
    """The Register state's payload: the upload and this execution's name (the run id)."""

    execution: str


class Registered(BaseModel):
    """Whether this run ingests the document, and if so which route it takes."""

    outcome: Literal["owned", "live", "busy"]
    route: Literal["text", "spreadsheet", "pdf", "normalise", "none"] = "none"
    format: str = ""
    pdf_bucket: str = ""
    pdf_key: str = ""
    pdf_version_id: str | None = None


def register_document(rt: Runtime, event: RegisterInput) -> Registered:
    """Claim the document for this execution (unless it is live, or another running execution
    ingests it), check its size before reading it, detect its format from its bytes, and
    store a Markdown/text source as the document's converted Markdown, and record the
    document's metadata (`drac.aws.object_metadata`).

    Raises DocumentError (the document is then marked FAILED) for a file that is too large,
    empty, unsupported or unreadable, or whose metadata breaks a limit.
    """
    filename = event.key.rsplit("/", 1)[-1]
    record = DocumentRecord(
        document_id=event.document_id,
        source=filename,
        source_path=event.key,
        sha256=event.sha256,
        tenant=event.tenant,
        format="unknown",
    )
    claim = rt.registry.claim_ingest(record, event.execution, lambda other: _running(rt, other))
    if claim.outcome != "owned":
        logger.info(
            "not ingested by this run",
            extra={"outcome": claim.outcome, "busy_with": claim.busy_with},
        )
        return Registered(outcome=claim.outcome)
    limit = rt.settings.conversion.max_file_bytes
    if event.size > limit:
        raise DocumentError(
            f"{filename}: file is {event.size / 1048576:.1f} MiB, more than the "
            f"{limit / 1048576:.0f} MiB limit"
        )
    data = rt.bucket(event.bucket).get_bytes(event.key, version_id=event.version_id)
    try:
        detection = detect_format(data, filename)
    except DocumentError as exc:
        raise DocumentError(f"{filename}: {exc}") from exc
    fmt = detection.format
    warnings = [detection.warning] if detection.warning else []
    metadata = document_metadata(rt.client("s3"), event.bucket, event.key, event.version_id)
    rt.registry.update(
        event.document_id,
        owner=event.execution,
        format=fmt.value,
        warnings=warnings,
        metadata=metadata,
    )
    logger.info("registered", extra={"format": fmt.value, "bytes": len(data)})
    if fmt.is_text:
        rt.artifacts.put_text(keys.markdown_key(event.document_id), decode_text(data))
        return Registered(outcome="owned", route="text", format=fmt.value)
    if fmt.is_spreadsheet:
        return Registered(outcome="owned", route="spreadsheet", format=fmt.value)
    point_to_earlier(rt, event.document_id, event.previous_document, event.tenant)
    if fmt is DocumentFormat.PDF:
        return Registered(
            outcome="owned",
            route="pdf",
            format=fmt.value,
            pdf_bucket=event.bucket,
            pdf_key=event.key,
            pdf_version_id=event.version_id,
        )
    return Registered(outcome="owned", route="normalise", format=fmt.value)


def _running(rt: Runtime, execution: str) -> bool:
    """Whether the ingest execution of that name is still running."""
    machine = rt.resources.ingest_state_machine_arn
    arn = machine.replace(":stateMachine:", ":execution:") + f":{execution}"
    sfn = rt.client("stepfunctions")
    try:
        return sfn.describe_execution(executionArn=arn)["status"] == "RUNNING"
    except sfn.exceptions.ExecutionDoesNotExist:
        return False
